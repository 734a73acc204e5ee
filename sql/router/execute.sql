-- ---------------------------------------------------------------------------
-- The router's ddb.execute_metered: the gateway calls it when the database
-- it serves has ddb_router (src/router/).
-- ---------------------------------------------------------------------------

CREATE FUNCTION ddb_router.execute_metered(role_name name, operation text, request jsonb) RETURNS text
    AS 'MODULE_PATHNAME', 'ddb_router_execute_metered' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION ddb_router.execute_metered(name, text, jsonb) IS
    'ddb.execute_metered of a sharded deployment: the request routed to the shard nodes by partition key';

