-- ---------------------------------------------------------------------------
-- The cluster: shard nodes (each an ordinary ddb_model database) and a
-- fixed number of logical partitions (a power of two) mapped onto them.  An
-- item lives in partition ddb.ddb_key_route_hash(partition key) & (count - 1),
-- which is the hash partition PostgreSQL's own hash partitioning of that
-- count would put it in.  PL/Proxy reads the map through the plproxy.*
-- functions below (cluster 'ddb'); the version makes it reload.
-- ---------------------------------------------------------------------------

CREATE TABLE ddb_router.nodes (
    node_name text PRIMARY KEY CHECK (node_name ~ '^[a-z0-9_]{1,40}$'),
    connstr text NOT NULL       -- libpq connection string of the node's primary
);
COMMENT ON TABLE ddb_router.nodes IS 'The shard nodes of the cluster: each an ordinary ddb_model database';
SELECT pg_catalog.pg_extension_config_dump('ddb_router.nodes', '');

CREATE TABLE ddb_router.partitions (
    partition integer PRIMARY KEY CHECK (partition >= 0),
    node_name text NOT NULL REFERENCES ddb_router.nodes,
    moving boolean NOT NULL DEFAULT false   -- writes are refused (retryable) while it moves
);
COMMENT ON TABLE ddb_router.partitions IS 'The logical partitions and the node each lives on';
SELECT pg_catalog.pg_extension_config_dump('ddb_router.partitions', '');

CREATE SEQUENCE ddb_router.cluster_version;
SELECT pg_catalog.pg_extension_config_dump('ddb_router.cluster_version', '');

-- Any change of the map makes PL/Proxy (and the router's cache) read it again.
CREATE FUNCTION ddb_router.bump_cluster_version() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM nextval('ddb_router.cluster_version');
    RETURN NULL;
END
$$;
CREATE TRIGGER bump_cluster_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ddb_router.nodes
    FOR EACH STATEMENT EXECUTE FUNCTION ddb_router.bump_cluster_version();
CREATE TRIGGER bump_cluster_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ddb_router.partitions
    FOR EACH STATEMENT EXECUTE FUNCTION ddb_router.bump_cluster_version();

-- PL/Proxy's configuration API, for the cluster 'ddb' only (the router's database is the router's).
CREATE SCHEMA plproxy;

CREATE FUNCTION plproxy.get_cluster_version(cluster_name text) RETURNS integer
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE WHEN cluster_name = 'ddb'
                THEN (SELECT last_value::integer + CASE WHEN is_called THEN 1 ELSE 0 END FROM ddb_router.cluster_version)
           END
$$;

CREATE FUNCTION plproxy.get_cluster_partitions(cluster_name text) RETURNS SETOF text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT n.connstr FROM ddb_router.partitions p JOIN ddb_router.nodes n USING (node_name)
    WHERE cluster_name = 'ddb' ORDER BY p.partition
$$;

CREATE FUNCTION plproxy.get_cluster_config(IN cluster_name text, OUT key text, OUT val text) RETURNS SETOF record
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    -- a broken connection is noticed and replaced by PL/Proxy; none lives forever
    SELECT 'connection_lifetime'::text, '3600'::text WHERE cluster_name = 'ddb'
$$;

-- Adds a shard node: an ordinary ddb_model database of the same version.
CREATE FUNCTION ddb_router.add_node(node_name text, connstr text) RETURNS void
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    INSERT INTO ddb_router.nodes VALUES (add_node.node_name, add_node.connstr);
END;

-- Creates the logical partitions (a power of two, 1 to 1024) over the nodes, in turn by name.
CREATE FUNCTION ddb_router.create_partitions(partition_count integer) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    names text[] := ARRAY(SELECT node_name FROM ddb_router.nodes ORDER BY node_name);
BEGIN
    IF partition_count IS NULL OR partition_count < 1 OR partition_count > 1024
       OR (partition_count & (partition_count - 1)) <> 0 THEN
        RAISE EXCEPTION 'the partition count must be a power of two from 1 to 1024, not %', partition_count
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF cardinality(names) = 0 THEN
        RAISE EXCEPTION 'the cluster has no node yet' USING ERRCODE = 'object_not_in_prerequisite_state',
            HINT = 'Add the shard nodes first with ddb_router.add_node(name, connstr).';
    END IF;
    IF EXISTS (SELECT FROM ddb_router.partitions) THEN
        RAISE EXCEPTION 'the cluster already has its partitions' USING ERRCODE = 'object_not_in_prerequisite_state',
            HINT = 'The partition count is fixed; move partitions with CALL ddb_router.move_partition(partition, node).';
    END IF;
    INSERT INTO ddb_router.partitions (partition, node_name)
    SELECT p, names[1 + p % cardinality(names)] FROM generate_series(0, partition_count - 1) p;
END
$$;

-- One partition of each node that holds any, in the order of their first partition:
-- what a PL/Proxy call runs on to reach every node once.
CREATE FUNCTION ddb_router.node_routes() RETURNS SETOF integer
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT min(partition) FROM ddb_router.partitions GROUP BY node_name ORDER BY 1
$$;

