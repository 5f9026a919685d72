-- The maintenance worker's hint task (see 45_maintenance.sql): changed in
-- 0.3.0, so this part is in the upgrade from 0.2.0 as well (Makefile,
-- UPGRADE_PARTS).

-- Up to max_rows undecided notifications, oldest first.  Each is decided in
-- a subtransaction: a failure is logged without its IDs, counted, and
-- tried again later (five times at most), and the others still go out.
-- A lock the worker gave up waiting for (its lock_timeout, or a deadlock
-- it lost on purpose: worker_maintenance.c) is not the notification's
-- failure: it ends the whole task, which runs again at the next interval
-- with no attempt used.
CREATE OR REPLACE FUNCTION bothy._hints_decide(max_rows integer) RETURNS integer
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    r record;
    handled integer := 0;
    hints integer := 0;
    pushes integer := 0;
    failures integer := 0;
BEGIN
    FOR r IN
        SELECT p.nid FROM bothy.hints_pending p
         WHERE p.attempts < 5
         ORDER BY p.nid LIMIT max_rows
           FOR UPDATE SKIP LOCKED
    LOOP
        handled := handled + 1;
        BEGIN
            IF bothy._hint_decide(r.nid) THEN
                hints := hints + 1;
            ELSE
                pushes := pushes + 1;
            END IF;
        EXCEPTION
          WHEN lock_not_available OR deadlock_detected THEN
            RAISE;
          WHEN OTHERS THEN
            UPDATE bothy.hints_pending p SET attempts = p.attempts + 1 WHERE p.nid = r.nid;
            failures := failures + 1;
            RAISE WARNING 'bothy maintenance could not decide a notification (SQLSTATE %)', SQLSTATE;
        END;
    END LOOP;
    PERFORM bothy._metrics_add('hints_sent', NULL, hints),
            bothy._metrics_add('pushes_queued', NULL, pushes),
            bothy._metrics_add('worker_errors', 'maintenance', failures);
    RETURN handled;
END
$$;
