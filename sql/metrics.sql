-- bothy.metrics() and the push claim: shapes and argument checks.
\set VERBOSITY terse
DROP EXTENSION IF EXISTS bothy;
CREATE EXTENSION bothy;
-- every counter appears, zeros included: 5 signal counters x 13 kinds + 16 work counters
SELECT count(*) FROM bothy.metrics();
SELECT metric, count(*) FROM bothy.stat_metrics GROUP BY metric ORDER BY metric;
SELECT label FROM bothy.stat_metrics WHERE metric = 'worker_errors' ORDER BY label;
SELECT count(*) FROM bothy.stat_metrics WHERE value < 0;
-- the internal counter: known names only, never backwards
SELECT bothy._metrics_add('pushes_queued', NULL, 0);
SELECT bothy._metrics_add('no_such_counter', NULL, 1);
SELECT bothy._metrics_add('worker_errors', NULL, 1);
SELECT bothy._metrics_add('worker_errors', 'nobody', 1);
SELECT bothy._metrics_add('hints_sent', NULL, -1);
SELECT bothy._metrics_add(NULL, NULL, 1);
SELECT bothy._metrics_add('hints_sent', NULL, NULL);
-- the push claim
SELECT * FROM bothy.push_claim(NULL);
SELECT * FROM bothy.push_claim(0);
SELECT * FROM bothy.push_claim(1001);
SELECT count(*) FROM bothy.push_claim(1000);
-- a notification waits for the worker's decision; the caller's transaction queues nothing else
BEGIN;
SELECT bothy.notification_created('3f2b8c1e-4d5a-4e6f-9a7b-8c9d0e1f2a3b', 'system', true, 0) IS NOT NULL AS stored;
SELECT count(*) FROM bothy.hints_pending;
SELECT count(*) FROM bothy.push_outbox;
ROLLBACK;
SELECT count(*) FROM bothy.hints_pending;
