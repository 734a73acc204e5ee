-- ---------------------------------------------------------------------------
-- Partition keys placed on the node of another (src/router/placements.c): a
-- model whose node-side trigger writes, with an item of one partition key,
-- an item of another, keeps both on one node when the second routes as the
-- first.  underwriting's W17: every change of a rulebook (RULEBOOK) writes
-- its audit item (RULEBOOKCONFIGUPDATE) in the same transaction, on the
-- rulebook's node; reading the audit trail (W14) must go there.
-- ---------------------------------------------------------------------------

CREATE TABLE ddb_router.placements (
    table_pattern text NOT NULL,    -- a table name, or a pattern with * (the underwriting environments' "*-underwriting")
    partition_key text NOT NULL CHECK (partition_key <> ''),    -- an S partition key value
    placed_with text NOT NULL CHECK (placed_with <> ''),        -- the S partition key value whose node holds it
    model text,                     -- the model that placed it, or NULL for a user's placement
    PRIMARY KEY (table_pattern, partition_key)
);
COMMENT ON TABLE ddb_router.placements IS 'Partition keys whose items live on the node of another (a model trigger writes them together)';
SELECT pg_catalog.pg_extension_config_dump('ddb_router.placements', 'WHERE model IS NULL');
INSERT INTO ddb_router.placements VALUES ('*-underwriting', 'RULEBOOKCONFIGUPDATE', 'RULEBOOK', 'underwriting');

-- Every router backend reads the placements (and the reference tables) again once a change of
-- them commits: a relcache invalidation of the changed table, which their caches listen to.
CREATE FUNCTION ddb_router.tables_changed() RETURNS trigger
    AS 'MODULE_PATHNAME', 'ddb_router_tables_changed' LANGUAGE C;
CREATE TRIGGER tables_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ddb_router.placements
    FOR EACH STATEMENT EXECUTE FUNCTION ddb_router.tables_changed();
CREATE TRIGGER notify_map AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ddb_router.placements
    FOR EACH STATEMENT EXECUTE FUNCTION ddb_router.notify_map();

-- The routing hash of a table's partition key, placements included.
CREATE FUNCTION ddb_router.route_hash(table_name text, key ddb.ddb_key) RETURNS integer
    AS 'MODULE_PATHNAME', 'ddb_router_route_hash' LANGUAGE C STABLE STRICT;
