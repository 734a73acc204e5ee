-- ---------------------------------------------------------------------------
-- Throttling of PROVISIONED tables (docs/throttling.md): with the setting
-- ddb.throttling on, requests above a table's or global index's provisioned
-- capacity get ProvisionedThroughputExceededException.  Its token buckets
-- live in shared memory (ddb_model in shared_preload_libraries); these
-- functions show them and move their clock.  Neither is for PUBLIC: the
-- buckets of every table of the database are an administrator's to see, and
-- their clock a test's to move.
-- ---------------------------------------------------------------------------

-- The buckets of this database: the relation of a table or global index,
-- and the units each side holds now (NULL for a side not used yet; below
-- zero, spent ahead: refused until it refills).
CREATE FUNCTION ddb.throttling_buckets(OUT relation regclass, OUT read_units double precision,
                                       OUT write_units double precision) RETURNS SETOF record
    AS 'MODULE_PATHNAME', 'ddb_throttling_buckets' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION ddb.throttling_buckets() IS
    'The throttling buckets of this database: units each side of a table''s or global index''s holds now';
REVOKE ALL ON FUNCTION ddb.throttling_buckets() FROM PUBLIC;

-- Every bucket of this database refills as if seconds more had passed: a
-- test shows refilling without waiting (negative seconds: the wall clock
-- stepping back, after which a bucket refills from the new time on).
CREATE FUNCTION ddb.throttling_advance(seconds double precision) RETURNS void
    AS 'MODULE_PATHNAME', 'ddb_throttling_advance' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION ddb.throttling_advance(double precision) IS
    'Refills every throttling bucket of this database as if seconds more had passed (a test''s clock)';
REVOKE ALL ON FUNCTION ddb.throttling_advance(double precision) FROM PUBLIC;
