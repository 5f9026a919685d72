-- bothy belongs to one database per server, the one its background workers
-- connect to: installed anywhere else it would hold state no worker
-- maintains and signals nobody expires.
DO $database$
BEGIN
    IF pg_catalog.current_database() <> pg_catalog.current_setting('bothy.database') THEN
        RAISE EXCEPTION 'bothy must be installed in the database named by bothy.database'
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = pg_catalog.format('bothy.database is "%s"; this is "%s".',
                                             pg_catalog.current_setting('bothy.database'),
                                             pg_catalog.current_database()),
                  HINT = 'Connect to that database, or set bothy.database and restart the server.';
    END IF;
END
$database$;
