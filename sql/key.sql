-- ---------------------------------------------------------------------------
-- The key type: one DynamoDB key value, S, N or B (docs/key-type.md)
-- ---------------------------------------------------------------------------

CREATE TYPE ddb.ddb_key;

CREATE FUNCTION ddb.ddb_key_in(cstring) RETURNS ddb.ddb_key
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION ddb.ddb_key_out(ddb.ddb_key) RETURNS cstring
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION ddb.ddb_key_recv(internal) RETURNS ddb.ddb_key
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION ddb.ddb_key_send(ddb.ddb_key) RETURNS bytea
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE TYPE ddb.ddb_key (
    INPUT = ddb.ddb_key_in,
    OUTPUT = ddb.ddb_key_out,
    RECEIVE = ddb.ddb_key_recv,
    SEND = ddb.ddb_key_send,
    INTERNALLENGTH = VARIABLE,
    STORAGE = extended,
    CATEGORY = 'U'
);
COMMENT ON TYPE ddb.ddb_key IS
    'A DynamoDB key value (S, N or B) in DynamoDB order; text form: plain = S, \d<number> = N, \x<hex> = B';

-- Casts.  From text always gives an S key (the text is the string); the
-- literal form with \d and \x is only read by the type's input function.
CREATE FUNCTION ddb.ddb_key(text) RETURNS ddb.ddb_key
    AS 'MODULE_PATHNAME', 'ddb_key_from_text' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION ddb.ddb_key(numeric) RETURNS ddb.ddb_key
    AS 'MODULE_PATHNAME', 'ddb_key_from_numeric' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION ddb.ddb_key(bytea) RETURNS ddb.ddb_key
    AS 'MODULE_PATHNAME', 'ddb_key_from_bytea' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION ddb.ddb_key(integer) RETURNS ddb.ddb_key
    AS 'MODULE_PATHNAME', 'ddb_key_from_int4' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION ddb.ddb_key(bigint) RETURNS ddb.ddb_key
    AS 'MODULE_PATHNAME', 'ddb_key_from_int8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION ddb.text(ddb.ddb_key) RETURNS text
    AS 'MODULE_PATHNAME', 'ddb_key_to_text' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION ddb.numeric(ddb.ddb_key) RETURNS numeric
    AS 'MODULE_PATHNAME', 'ddb_key_to_numeric' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION ddb.bytea(ddb.ddb_key) RETURNS bytea
    AS 'MODULE_PATHNAME', 'ddb_key_to_bytea' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE CAST (text AS ddb.ddb_key) WITH FUNCTION ddb.ddb_key(text) AS IMPLICIT;
CREATE CAST (numeric AS ddb.ddb_key) WITH FUNCTION ddb.ddb_key(numeric) AS IMPLICIT;
CREATE CAST (integer AS ddb.ddb_key) WITH FUNCTION ddb.ddb_key(integer) AS IMPLICIT;
CREATE CAST (bigint AS ddb.ddb_key) WITH FUNCTION ddb.ddb_key(bigint) AS IMPLICIT;
CREATE CAST (bytea AS ddb.ddb_key) WITH FUNCTION ddb.ddb_key(bytea) AS IMPLICIT;
CREATE CAST (ddb.ddb_key AS text) WITH FUNCTION ddb.text(ddb.ddb_key);
CREATE CAST (ddb.ddb_key AS numeric) WITH FUNCTION ddb.numeric(ddb.ddb_key);
CREATE CAST (ddb.ddb_key AS bytea) WITH FUNCTION ddb.bytea(ddb.ddb_key);

-- Type and segments.
CREATE FUNCTION ddb.key_type(key ddb.ddb_key) RETURNS text
    AS 'MODULE_PATHNAME', 'ddb_key_type' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION ddb.key_type(ddb.ddb_key) IS 'The DynamoDB type of a key: S, N or B';

CREATE FUNCTION ddb.key(VARIADIC segments text[]) RETURNS ddb.ddb_key
    AS 'MODULE_PATHNAME', 'ddb_key_from_segments' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION ddb.key(text[]) IS
    'An S key from its segments joined by #: ddb.key(''USER'', ''abc'') = ''USER#abc''; a segment may not contain #';

CREATE FUNCTION ddb.segment(key ddb.ddb_key, n integer) RETURNS text
    AS 'MODULE_PATHNAME', 'ddb_key_segment' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION ddb.segment(ddb.ddb_key, integer) IS
    'Segment n of an S key (1-based; negative counts from the end), NULL when there is none';

CREATE FUNCTION ddb.segment_count(key ddb.ddb_key) RETURNS integer
    AS 'MODULE_PATHNAME', 'ddb_key_segment_count' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION ddb.segment_count(ddb.ddb_key) IS 'How many #-separated segments an S key has';

-- ---------------------------------------------------------------------------
-- Comparison, in DynamoDB order (N < S < B across types)
--
-- The operators live in pg_catalog, like the built-in types' operators, so
-- that WHERE pk = 'USER#1' works whatever the search_path; every other
-- object is in schema ddb.
-- ---------------------------------------------------------------------------

CREATE FUNCTION ddb.ddb_key_cmp(ddb.ddb_key, ddb.ddb_key) RETURNS integer
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION ddb.ddb_key_lt(ddb.ddb_key, ddb.ddb_key) RETURNS boolean
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION ddb.ddb_key_le(ddb.ddb_key, ddb.ddb_key) RETURNS boolean
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION ddb.ddb_key_eq(ddb.ddb_key, ddb.ddb_key) RETURNS boolean
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION ddb.ddb_key_ne(ddb.ddb_key, ddb.ddb_key) RETURNS boolean
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION ddb.ddb_key_ge(ddb.ddb_key, ddb.ddb_key) RETURNS boolean
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION ddb.ddb_key_gt(ddb.ddb_key, ddb.ddb_key) RETURNS boolean
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION ddb.ddb_key_sortsupport(internal) RETURNS void
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION ddb.ddb_key_hash(ddb.ddb_key) RETURNS integer
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION ddb.ddb_key_hash_extended(ddb.ddb_key, bigint) RETURNS bigint
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
-- The routing hash of a sharded deployment (docs/scale-out.md): hash & (n - 1) is
-- the partition of n (a power of two) that PostgreSQL's hash partitioning puts the key in.
CREATE FUNCTION ddb.ddb_key_route_hash(ddb.ddb_key) RETURNS integer
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OPERATOR pg_catalog.< (LEFTARG = ddb.ddb_key, RIGHTARG = ddb.ddb_key, FUNCTION = ddb.ddb_key_lt,
    COMMUTATOR = OPERATOR(pg_catalog.>), NEGATOR = OPERATOR(pg_catalog.>=),
    RESTRICT = scalarltsel, JOIN = scalarltjoinsel);
CREATE OPERATOR pg_catalog.<= (LEFTARG = ddb.ddb_key, RIGHTARG = ddb.ddb_key, FUNCTION = ddb.ddb_key_le,
    COMMUTATOR = OPERATOR(pg_catalog.>=), NEGATOR = OPERATOR(pg_catalog.>),
    RESTRICT = scalarlesel, JOIN = scalarlejoinsel);
CREATE OPERATOR pg_catalog.= (LEFTARG = ddb.ddb_key, RIGHTARG = ddb.ddb_key, FUNCTION = ddb.ddb_key_eq,
    COMMUTATOR = OPERATOR(pg_catalog.=), NEGATOR = OPERATOR(pg_catalog.<>),
    RESTRICT = eqsel, JOIN = eqjoinsel, HASHES, MERGES);
CREATE OPERATOR pg_catalog.<> (LEFTARG = ddb.ddb_key, RIGHTARG = ddb.ddb_key, FUNCTION = ddb.ddb_key_ne,
    COMMUTATOR = OPERATOR(pg_catalog.<>), NEGATOR = OPERATOR(pg_catalog.=),
    RESTRICT = neqsel, JOIN = neqjoinsel);
CREATE OPERATOR pg_catalog.>= (LEFTARG = ddb.ddb_key, RIGHTARG = ddb.ddb_key, FUNCTION = ddb.ddb_key_ge,
    COMMUTATOR = OPERATOR(pg_catalog.<=), NEGATOR = OPERATOR(pg_catalog.<),
    RESTRICT = scalargesel, JOIN = scalargejoinsel);
CREATE OPERATOR pg_catalog.> (LEFTARG = ddb.ddb_key, RIGHTARG = ddb.ddb_key, FUNCTION = ddb.ddb_key_gt,
    COMMUTATOR = OPERATOR(pg_catalog.<), NEGATOR = OPERATOR(pg_catalog.<=),
    RESTRICT = scalargtsel, JOIN = scalargtjoinsel);

-- ---------------------------------------------------------------------------
-- Prefixes: ^@ is DynamoDB's begins_with, <@ the segment-aware prefix
-- ---------------------------------------------------------------------------

CREATE FUNCTION ddb.begins_with_support(internal) RETURNS internal
    AS 'MODULE_PATHNAME', 'ddb_key_begins_with_support' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION ddb.begins_with_segments_support(internal) RETURNS internal
    AS 'MODULE_PATHNAME', 'ddb_key_begins_with_segments_support' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION ddb.begins_with(key ddb.ddb_key, prefix ddb.ddb_key) RETURNS boolean
    AS 'MODULE_PATHNAME', 'ddb_key_begins_with' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
    SUPPORT ddb.begins_with_support;
COMMENT ON FUNCTION ddb.begins_with(ddb.ddb_key, ddb.ddb_key) IS
    'DynamoDB begins_with: the key is of the prefix''s type and its bytes start with the prefix''s';

CREATE FUNCTION ddb.begins_with_segments(key ddb.ddb_key, prefix ddb.ddb_key) RETURNS boolean
    AS 'MODULE_PATHNAME', 'ddb_key_begins_with_segments' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
    SUPPORT ddb.begins_with_segments_support;
COMMENT ON FUNCTION ddb.begins_with_segments(ddb.ddb_key, ddb.ddb_key) IS
    'Segment-aware prefix: the key equals the prefix or continues it after a # (USER#1 does not cover USER#10)';

CREATE FUNCTION ddb.prefix_upper_bound(prefix ddb.ddb_key) RETURNS ddb.ddb_key
    AS 'MODULE_PATHNAME', 'ddb_key_prefix_upper_bound' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION ddb.prefix_upper_bound(ddb.ddb_key) IS
    'Exclusive upper bound of the keys that begin with prefix (index range scans)';
CREATE FUNCTION ddb.segment_prefix_upper_bound(prefix ddb.ddb_key) RETURNS ddb.ddb_key
    AS 'MODULE_PATHNAME', 'ddb_key_segment_prefix_upper_bound' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION ddb.segment_prefix_upper_bound(ddb.ddb_key) IS
    'Exclusive upper bound of the keys that lie under prefix (index range scans)';

CREATE OPERATOR pg_catalog.^@ (LEFTARG = ddb.ddb_key, RIGHTARG = ddb.ddb_key,
    FUNCTION = ddb.begins_with, RESTRICT = prefixsel, JOIN = prefixjoinsel);
CREATE OPERATOR pg_catalog.<@ (LEFTARG = ddb.ddb_key, RIGHTARG = ddb.ddb_key,
    FUNCTION = ddb.begins_with_segments, RESTRICT = prefixsel, JOIN = prefixjoinsel);

-- ---------------------------------------------------------------------------
-- Operator classes
-- ---------------------------------------------------------------------------

CREATE OPERATOR CLASS ddb.ddb_key_ops DEFAULT FOR TYPE ddb.ddb_key USING btree AS
    OPERATOR 1 pg_catalog.<,
    OPERATOR 2 pg_catalog.<=,
    OPERATOR 3 pg_catalog.=,
    OPERATOR 4 pg_catalog.>=,
    OPERATOR 5 pg_catalog.>,
    FUNCTION 1 ddb.ddb_key_cmp(ddb.ddb_key, ddb.ddb_key),
    FUNCTION 2 ddb.ddb_key_sortsupport(internal),
    FUNCTION 4 btequalimage(oid);

CREATE OPERATOR CLASS ddb.ddb_key_ops DEFAULT FOR TYPE ddb.ddb_key USING hash AS
    OPERATOR 1 pg_catalog.=,
    FUNCTION 1 ddb.ddb_key_hash(ddb.ddb_key),
    FUNCTION 2 ddb.ddb_key_hash_extended(ddb.ddb_key, bigint);

CREATE FUNCTION ddb.ddb_key_gist_consistent(internal, ddb.ddb_key, smallint, oid, internal) RETURNS boolean
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION ddb.ddb_key_gist_union(internal, internal) RETURNS ddb.ddb_key
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION ddb.ddb_key_gist_penalty(internal, internal, internal) RETURNS internal
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION ddb.ddb_key_gist_picksplit(internal, internal) RETURNS internal
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION ddb.ddb_key_gist_same(ddb.ddb_key, ddb.ddb_key, internal) RETURNS internal
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OPERATOR CLASS ddb.ddb_key_ops DEFAULT FOR TYPE ddb.ddb_key USING gist AS
    OPERATOR 1 pg_catalog.<,
    OPERATOR 2 pg_catalog.<=,
    OPERATOR 3 pg_catalog.=,
    OPERATOR 4 pg_catalog.>=,
    OPERATOR 5 pg_catalog.>,
    OPERATOR 6 pg_catalog.<>,
    OPERATOR 7 pg_catalog.^@,
    OPERATOR 8 pg_catalog.<@,
    FUNCTION 1 ddb.ddb_key_gist_consistent(internal, ddb.ddb_key, smallint, oid, internal),
    FUNCTION 2 ddb.ddb_key_gist_union(internal, internal),
    FUNCTION 5 ddb.ddb_key_gist_penalty(internal, internal, internal),
    FUNCTION 6 ddb.ddb_key_gist_picksplit(internal, internal),
    FUNCTION 7 ddb.ddb_key_gist_same(ddb.ddb_key, ddb.ddb_key, internal),
    FUNCTION 11 ddb.ddb_key_sortsupport(internal);
