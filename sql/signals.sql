-- bothy.signal_check and bothy.publish: one payload per line.
\set VERBOSITY terse
-- each file starts from a fresh extension (and proves DROP and CREATE work)
DROP EXTENSION bothy;
CREATE EXTENSION bothy;
-- Node IDs (node, bind_id, conn_id) are UUIDv7; other IDs any canonical UUID.
-- valid: each kind answers its name
SELECT bothy.signal_check('{"kind":"gateway.typing","node":"01890a5d-ac96-774b-bcce-b302099a8057","thread":"11111111-1111-4111-8111-111111111111","principal":"22222222-2222-4222-8222-222222222222"}');
SELECT bothy.signal_check('{"kind":"gateway.run","node":"01890a5d-ac96-774b-bcce-b302099a8057","run":"11111111-1111-4111-8111-111111111111","thread":"22222222-2222-4222-8222-222222222222","version":7}');
SELECT bothy.signal_check('{"kind":"gateway.agent_presence","node":"01890a5d-ac96-774b-bcce-b302099a8057","agent":"11111111-1111-4111-8111-111111111111","state":"online"}');
SELECT bothy.signal_check('{"kind":"gateway.agent_presence","node":"01890a5d-ac96-774b-bcce-b302099a8057","agent":"11111111-1111-4111-8111-111111111111","state":"busy","billing_mode":"metered","actor":"22222222-2222-4222-8222-222222222222"}');
SELECT bothy.signal_check('{"kind":"gateway.device","node":"01890a5d-ac96-774b-bcce-b302099a8057","device":"11111111-1111-4111-8111-111111111111","gateway_session":"22222222-2222-4222-8222-222222222222","bind_id":"01890a5d-ac96-7000-8000-000000000001"}');
SELECT bothy.signal_check('{"kind":"gateway.consumer","node":"01890a5d-ac96-774b-bcce-b302099a8057","agent":"11111111-1111-4111-8111-111111111111","gateway_session":"22222222-2222-4222-8222-222222222222"}');
SELECT bothy.signal_check('{"kind":"gateway.hint","node":"01890a5d-ac96-774b-bcce-b302099a8057","recipient":"11111111-1111-4111-8111-111111111111","nid":"22222222-2222-4222-8222-222222222222","hint_kind":"mention","quiet":false,"count":3}');
SELECT bothy.signal_check('{"kind":"gateway.hint","node":"01890a5d-ac96-774b-bcce-b302099a8057","recipient":"11111111-1111-4111-8111-111111111111","nid":"22222222-2222-4222-8222-222222222222","hint_kind":"run","quiet":true,"count":0,"thread":"33333333-3333-4333-8333-333333333333","message":"44444444-4444-4444-8444-444444444444","target":"55555555-5555-4555-8555-555555555555"}');
SELECT bothy.signal_check('{"kind":"terminal.session_open","host_id":"11111111-1111-4111-8111-111111111111","session_id":"22222222-2222-4222-8222-222222222222"}');
SELECT bothy.signal_check('{"kind":"terminal.host_close","host_id":"11111111-1111-4111-8111-111111111111"}');
SELECT bothy.signal_check('{"kind":"terminal.host_present","host_id":"11111111-1111-4111-8111-111111111111","conn_id":"01890a5d-ac96-7000-8000-000000000001"}');
SELECT bothy.signal_check('{"kind":"terminal.host_gone","host_id":"11111111-1111-4111-8111-111111111111","conn_id":"01890a5d-ac96-7000-8000-000000000001"}');
SELECT bothy.signal_check('{"kind":"terminal.session_paired","host_id":"11111111-1111-4111-8111-111111111111","session_id":"22222222-2222-4222-8222-222222222222"}');
SELECT bothy.signal_check('{"kind":"terminal.log","seq":42}');
SELECT bothy.signal_check('{"kind":"terminal.log","seq":0}');
SELECT bothy.signal_check('{"kind":"terminal.log","seq":9007199254740991}');
-- valid: members in any order, insignificant white space
SELECT bothy.signal_check(' { "host_id" : "11111111-1111-4111-8111-111111111111" , "kind" : "terminal.host_close" } ');
-- ignored: a kind outside both prefixes is NULL, whatever else it carries
SELECT bothy.signal_check('{"kind":"chat.message","text":"hi","nested":{"a":[1,2,{"b":null}]}}') IS NULL AS ignored;
SELECT bothy.signal_check('{"kind":"gatewayx.typing"}') IS NULL AS ignored;
SELECT bothy.signal_check('{"kind":"gateway"}') IS NULL AS ignored;
-- malformed: not JSON, not an object, no kind
SELECT bothy.signal_check('nope');
SELECT bothy.signal_check('{"kind":"terminal.host_close","host_id":"11111111-1111-4111-8111-111111111111"');
SELECT bothy.signal_check('{"kind":"terminal.host_close","host_id":"11111111-1111-4111-8111-111111111111"} x');
SELECT bothy.signal_check('[{"kind":"terminal.host_close"}]');
SELECT bothy.signal_check('"gateway.typing"');
SELECT bothy.signal_check('{}');
SELECT bothy.signal_check('{"kind":1}');
SELECT bothy.signal_check('{"kind":null}');
-- malformed: an unknown kind inside a known prefix
SELECT bothy.signal_check('{"kind":"gateway.nope"}');
SELECT bothy.signal_check('{"kind":"terminal.nope","host_id":"11111111-1111-4111-8111-111111111111"}');
-- malformed: unknown, duplicate and missing members
SELECT bothy.signal_check('{"kind":"terminal.host_close","host_id":"11111111-1111-4111-8111-111111111111","extra":1}');
SELECT bothy.signal_check('{"kind":"terminal.host_close","host_id":"11111111-1111-4111-8111-111111111111","host_id":"11111111-1111-4111-8111-111111111111"}');
SELECT bothy.signal_check('{"kind":"terminal.host_close","kind":"terminal.host_close","host_id":"11111111-1111-4111-8111-111111111111"}');
SELECT bothy.signal_check('{"kind":"terminal.host_close","kin\u0064":"terminal.host_close","host_id":"11111111-1111-4111-8111-111111111111"}');
SELECT bothy.signal_check('{"kind":"terminal.host_close"}');
SELECT bothy.signal_check('{"kind":"gateway.device","node":"01890a5d-ac96-774b-bcce-b302099a8057","device":"11111111-1111-4111-8111-111111111111","gateway_session":"22222222-2222-4222-8222-222222222222"}');
SELECT bothy.signal_check('{"kind":"gateway.typing","node":"01890a5d-ac96-774b-bcce-b302099a8057","thread":"11111111-1111-4111-8111-111111111111","principal":"22222222-2222-4222-8222-222222222222","actor":"22222222-2222-4222-8222-222222222222"}');
-- malformed: IDs that are not canonical lower-case UUIDs
SELECT bothy.signal_check('{"kind":"terminal.host_close","host_id":"11111111-1111-4111-8111-11111111111A"}');
SELECT bothy.signal_check('{"kind":"terminal.host_close","host_id":"{11111111-1111-4111-8111-111111111111}"}');
SELECT bothy.signal_check('{"kind":"terminal.host_close","host_id":"111111111111411181111111111111111"}');
SELECT bothy.signal_check('{"kind":"terminal.host_close","host_id":"1111111-11111-4111-8111-111111111111"}');
SELECT bothy.signal_check('{"kind":"terminal.host_close","host_id":"11111111-1111-4111-8111-11111111111\u0031"}');
SELECT bothy.signal_check('{"kind":"terminal.host_close","host_id":42}');
SELECT bothy.signal_check('{"kind":"terminal.host_close","host_id":null}');
SELECT bothy.signal_check('{"kind":"terminal.host_close","host_id":["11111111-1111-4111-8111-111111111111"]}');
-- malformed: node, bind_id and conn_id must be UUIDv7
SELECT bothy.signal_check('{"kind":"gateway.typing","node":"11111111-1111-4111-8111-111111111111","thread":"11111111-1111-4111-8111-111111111111","principal":"22222222-2222-4222-8222-222222222222"}');
SELECT bothy.signal_check('{"kind":"gateway.device","node":"01890a5d-ac96-774b-bcce-b302099a8057","device":"11111111-1111-4111-8111-111111111111","gateway_session":"22222222-2222-4222-8222-222222222222","bind_id":"01890a5d-ac96-7000-c000-000000000001"}');
SELECT bothy.signal_check('{"kind":"terminal.host_gone","host_id":"11111111-1111-4111-8111-111111111111","conn_id":"22222222-2222-4222-8222-222222222222"}');
-- malformed: codes from closed sets
SELECT bothy.signal_check('{"kind":"gateway.agent_presence","node":"01890a5d-ac96-774b-bcce-b302099a8057","agent":"11111111-1111-4111-8111-111111111111","state":"ONLINE"}');
SELECT bothy.signal_check('{"kind":"gateway.agent_presence","node":"01890a5d-ac96-774b-bcce-b302099a8057","agent":"11111111-1111-4111-8111-111111111111","state":"away"}');
SELECT bothy.signal_check('{"kind":"gateway.agent_presence","node":"01890a5d-ac96-774b-bcce-b302099a8057","agent":"11111111-1111-4111-8111-111111111111","state":1}');
SELECT bothy.signal_check('{"kind":"gateway.agent_presence","node":"01890a5d-ac96-774b-bcce-b302099a8057","agent":"11111111-1111-4111-8111-111111111111","state":"online","billing_mode":"prepaid"}');
SELECT bothy.signal_check('{"kind":"gateway.hint","node":"01890a5d-ac96-774b-bcce-b302099a8057","recipient":"11111111-1111-4111-8111-111111111111","nid":"22222222-2222-4222-8222-222222222222","hint_kind":"like","quiet":false,"count":3}');
-- malformed: integers are JSON integers within range
SELECT bothy.signal_check('{"kind":"gateway.run","node":"01890a5d-ac96-774b-bcce-b302099a8057","run":"11111111-1111-4111-8111-111111111111","thread":"22222222-2222-4222-8222-222222222222","version":7.0}');
SELECT bothy.signal_check('{"kind":"gateway.run","node":"01890a5d-ac96-774b-bcce-b302099a8057","run":"11111111-1111-4111-8111-111111111111","thread":"22222222-2222-4222-8222-222222222222","version":7e0}');
SELECT bothy.signal_check('{"kind":"gateway.run","node":"01890a5d-ac96-774b-bcce-b302099a8057","run":"11111111-1111-4111-8111-111111111111","thread":"22222222-2222-4222-8222-222222222222","version":"7"}');
SELECT bothy.signal_check('{"kind":"gateway.run","node":"01890a5d-ac96-774b-bcce-b302099a8057","run":"11111111-1111-4111-8111-111111111111","thread":"22222222-2222-4222-8222-222222222222","version":-1}');
SELECT bothy.signal_check('{"kind":"gateway.run","node":"01890a5d-ac96-774b-bcce-b302099a8057","run":"11111111-1111-4111-8111-111111111111","thread":"22222222-2222-4222-8222-222222222222","version":9007199254740991}');
SELECT bothy.signal_check('{"kind":"gateway.run","node":"01890a5d-ac96-774b-bcce-b302099a8057","run":"11111111-1111-4111-8111-111111111111","thread":"22222222-2222-4222-8222-222222222222","version":9007199254740992}');
SELECT bothy.signal_check('{"kind":"gateway.hint","node":"01890a5d-ac96-774b-bcce-b302099a8057","recipient":"11111111-1111-4111-8111-111111111111","nid":"22222222-2222-4222-8222-222222222222","hint_kind":"mention","quiet":false,"count":2147483648}');
SELECT bothy.signal_check('{"kind":"terminal.log","seq":9007199254740992}');
SELECT bothy.signal_check('{"kind":"terminal.log","seq":-1}');
SELECT bothy.signal_check('{"kind":"terminal.log","seq":"42"}');
SELECT bothy.signal_check('{"kind":"terminal.log","seq":42.0}');
SELECT bothy.signal_check('{"kind":"terminal.log"}');
SELECT bothy.signal_check('{"kind":"terminal.log","seq":1,"node":"01890a5d-ac96-774b-bcce-b302099a8057"}');
-- malformed: booleans are JSON booleans
SELECT bothy.signal_check('{"kind":"gateway.hint","node":"01890a5d-ac96-774b-bcce-b302099a8057","recipient":"11111111-1111-4111-8111-111111111111","nid":"22222222-2222-4222-8222-222222222222","hint_kind":"mention","quiet":"false","count":3}');
SELECT bothy.signal_check('{"kind":"gateway.hint","node":"01890a5d-ac96-774b-bcce-b302099a8057","recipient":"11111111-1111-4111-8111-111111111111","nid":"22222222-2222-4222-8222-222222222222","hint_kind":"mention","quiet":0,"count":3}');
-- size: NOTIFY carries at most 7999 bytes, and every payload travels in an
-- envelope of 41 bytes (docs/signals.md), so 7958 are read and 7959 are
-- too long (even for a foreign kind); pg_notify refuses 8000
SELECT bothy.signal_check('{"kind":"other.x","p":"' || repeat('a', 7958 - 25) || '"}') IS NULL AS ignored_at_7958;
SELECT bothy.signal_check('{"kind":"other.x","p":"' || repeat('a', 7959 - 25) || '"}');
SELECT bothy.signal_check('{"kind":"terminal.log","seq":7' || repeat(' ', 7958 - 31) || '}');
SELECT bothy.signal_check('{"kind":"terminal.log","seq":7' || repeat(' ', 7959 - 31) || '}');
SELECT octet_length('{"kind":"other.x","p":"' || repeat('a', 8000 - 25) || '"}') AS bytes,
       pg_notify('ephemeral', '{"kind":"other.x","p":"' || repeat('a', 8000 - 25) || '"}');
SELECT octet_length('{"kind":"other.x","p":"' || repeat('a', 7999 - 25) || '"}') AS bytes,
       pg_notify('ephemeral', '{"kind":"other.x","p":"' || repeat('a', 7999 - 25) || '"}');
-- the channel belongs to bothy (docs/security.md): a login that is neither
-- a superuser nor bothy's may not LISTEN or NOTIFY on it, nor call
-- pg_notify with it written out; other channels stay everybody's
CREATE ROLE regress_channel_nobody;
SET ROLE regress_channel_nobody;
LISTEN ephemeral;
NOTIFY ephemeral, 'x';
SELECT pg_notify('ephemeral', 'x');
SELECT (SELECT pg_notify('ephemeral', 'x')) IS NULL;
DO $$ BEGIN EXECUTE 'LISTEN ephemeral'; END $$;
NOTIFY regress_other, 'y';
SELECT pg_notify('regress_other', 'z');
SELECT bothy.channel_key();
RESET ROLE;
SET ROLE bothy_app;
LISTEN ephemeral;
NOTIFY ephemeral, 'x';
SELECT bothy.channel_key();
RESET ROLE;
SET ROLE bothy_gateway;
LISTEN ephemeral;
UNLISTEN ephemeral;
NOTIFY ephemeral, 'x';
SELECT length(bothy.channel_key()) AS key_bytes;
RESET ROLE;
DROP ROLE regress_channel_nobody;
-- publish: valid members are staged (delivery is tested by the isolation specs)
SELECT bothy.publish('terminal.host_close', '{"host_id":"11111111-1111-4111-8111-111111111111"}');
SELECT bothy.publish('gateway.run', '{"node":"01890a5d-ac96-774b-bcce-b302099a8057","run":"11111111-1111-4111-8111-111111111111","thread":"22222222-2222-4222-8222-222222222222","version":1}');
-- publish: invalid input is refused with the codec's reasons
SELECT bothy.publish('chat.message', '{}');
SELECT bothy.publish('gateway.nope', '{}');
SELECT bothy.publish('terminal.host_close', '[]');
SELECT bothy.publish('terminal.host_close', '"x"');
SELECT bothy.publish('terminal.host_close', '{}');
SELECT bothy.publish('terminal.host_close', '{"kind":"terminal.host_close","host_id":"11111111-1111-4111-8111-111111111111"}');
SELECT bothy.publish('gateway.run', '{"node":"01890a5d-ac96-774b-bcce-b302099a8057","run":"11111111-1111-4111-8111-111111111111","thread":"22222222-2222-4222-8222-222222222222","version":1.5}');
SELECT bothy.publish('terminal.host_close', NULL);
-- publish of a whole signal (kind among its members): the same codec, the same reasons
SELECT bothy.publish('{"kind":"terminal.host_close","host_id":"11111111-1111-4111-8111-111111111111"}');
SELECT bothy.publish(' {"run":"11111111-1111-4111-8111-111111111111","kind":"gateway.run","version":2,"node":"01890a5d-ac96-774b-bcce-b302099a8057","thread":"22222222-2222-4222-8222-222222222222"} ');
SELECT bothy.publish('{"kind":"chat.message"}');
SELECT bothy.publish('{"kind":"gateway.nope"}');
SELECT bothy.publish('{"host_id":"11111111-1111-4111-8111-111111111111"}');
SELECT bothy.publish('{"kind":"terminal.host_close","kind":"terminal.host_close","host_id":"11111111-1111-4111-8111-111111111111"}');
SELECT bothy.publish('{"kind":"terminal.host_close","host_id":"11111111-1111-4111-8111-111111111111"');
SELECT bothy.publish('[]');
SELECT bothy.publish('{"kind":"other.x","p":"' || repeat('a', 8000 - 25) || '"}');
-- the producer's edge: a whole signal of 7958 bytes is staged, of 7959 refused
SELECT bothy.publish('{"kind":"terminal.log","seq":7' || repeat(' ', 7958 - 31) || '}');
SELECT bothy.publish('{"kind":"terminal.log","seq":7' || repeat(' ', 7959 - 31) || '}');
SELECT bothy.publish('terminal.log', jsonb_build_object('seq', 7));
SELECT bothy.publish('terminal.log', jsonb_build_object('seq', -7));
SELECT bothy.publish(NULL::text);
