-- Index use: btree range scans for ^@ and <@ (also with a generic plan's
-- parameter), GiST for equality, ranges and both prefixes (and EXCLUDE),
-- hash indexes and hash partitioning.

CREATE TABLE keys (pk ddb.ddb_key, sk ddb.ddb_key, n int);
INSERT INTO keys
SELECT ddb.key('USER', u::text), ddb.key('EMAIL', lpad(e::text, 3, '0')), u * 100 + e
FROM generate_series(1, 300) u, generate_series(1, 20) e;
INSERT INTO keys SELECT ddb.key('USER', u::text), 'PROFILE', u FROM generate_series(1, 300) u;
CREATE INDEX keys_pk_sk ON keys USING btree (pk, sk);
ANALYZE keys;
SET enable_seqscan = off;
SET enable_bitmapscan = off;

-- btree: equality, ranges, and both prefixes become index conditions.
EXPLAIN (COSTS OFF) SELECT * FROM keys WHERE pk = 'USER#7' AND sk ^@ 'EMAIL#';
SELECT count(*) FROM keys WHERE pk = 'USER#7' AND sk ^@ 'EMAIL#';
EXPLAIN (COSTS OFF) SELECT * FROM keys WHERE pk = 'USER#7' AND ddb.begins_with(sk, 'EMAIL#01');
SELECT count(*) FROM keys WHERE pk = 'USER#7' AND ddb.begins_with(sk, 'EMAIL#01');
EXPLAIN (COSTS OFF) SELECT * FROM keys WHERE pk <@ 'USER#1';
SELECT count(*) AS under_user1, count(DISTINCT pk) AS one_user FROM keys WHERE pk <@ 'USER#1';
SELECT count(DISTINCT pk) AS users_beginning_user1 FROM keys WHERE pk ^@ 'USER#1';
EXPLAIN (COSTS OFF) SELECT * FROM keys WHERE pk BETWEEN 'USER#10' AND 'USER#11';

-- A generic plan keeps the index scan: the upper bound is computed from the parameter.
PREPARE by_prefix(ddb.ddb_key, ddb.ddb_key) AS SELECT count(*) FROM keys WHERE pk = $1 AND sk ^@ $2;
PREPARE by_segment(ddb.ddb_key) AS SELECT count(*) FROM keys WHERE pk <@ $1;
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE by_prefix('USER#9', 'EMAIL#00');
EXECUTE by_prefix('USER#9', 'EMAIL#00');
EXECUTE by_prefix('USER#9', 'EMAIL#');
EXPLAIN (COSTS OFF) EXECUTE by_segment('USER#25');
EXECUTE by_segment('USER#25');
-- Core's text ^@ cannot do this: the same generic plan on text falls back to a scan.
CREATE TABLE text_keys AS SELECT pk::text COLLATE "C" AS pk FROM keys;
CREATE INDEX ON text_keys (pk);
ANALYZE text_keys;
PREPARE text_prefix(text) AS SELECT count(*) FROM text_keys WHERE pk ^@ $1;
EXPLAIN (COSTS OFF) EXECUTE text_prefix('USER#25');
RESET plan_cache_mode;
DEALLOCATE ALL;

-- Index-only results equal a sequential scan's.
RESET enable_seqscan;
CREATE TEMP TABLE seq_answer AS SELECT pk, sk FROM keys WHERE pk <@ 'USER#3' OR sk ^@ 'EMAIL#02';
SET enable_seqscan = off;
SELECT count(*) AS rows, (SELECT count(*) FROM seq_answer) AS expected
FROM keys WHERE pk <@ 'USER#3' OR sk ^@ 'EMAIL#02';

-- GiST: equality, ranges, both prefixes.
CREATE INDEX keys_sk_gist ON keys USING gist (sk);
CREATE INDEX keys_pk_gist ON keys USING gist (pk);
DROP INDEX keys_pk_sk;
EXPLAIN (COSTS OFF) SELECT * FROM keys WHERE pk = 'USER#7';
EXPLAIN (COSTS OFF) SELECT * FROM keys WHERE pk ^@ 'USER#7';
EXPLAIN (COSTS OFF) SELECT * FROM keys WHERE pk <@ 'USER#7';
EXPLAIN (COSTS OFF) SELECT * FROM keys WHERE sk > 'EMAIL#019';
SELECT count(*) AS eq FROM keys WHERE pk = 'USER#7';
SELECT count(*) AS byte_prefix FROM keys WHERE pk ^@ 'USER#7';
SELECT count(*) AS segment_prefix FROM keys WHERE pk <@ 'USER#7';
SELECT count(*) AS gt FROM keys WHERE sk > 'EMAIL#019';
SELECT count(*) AS le FROM keys WHERE sk <= 'EMAIL#001';
SELECT count(*) AS lt FROM keys WHERE sk < 'EMAIL#001';
SELECT count(*) AS ge FROM keys WHERE sk >= 'PROFILE';
SELECT count(*) AS ne FROM keys WHERE pk <> 'USER#7' AND pk ^@ 'USER#7';
-- GiST answers equal the sequential scan's.
SELECT count(*) AS gist_rows, (SELECT count(*) FROM seq_answer) AS expected
FROM keys WHERE pk <@ 'USER#3' OR sk ^@ 'EMAIL#02';
-- Inserts after the build go through penalty and picksplit; answers stay right.
INSERT INTO keys SELECT ddb.key('USER', (u % 50)::text), ddb.key('EXTRA', u::text), u FROM generate_series(1, 5000) u;
SELECT count(*) AS extra_under_user7 FROM keys WHERE pk <@ 'USER#7' AND sk ^@ 'EXTRA#';
RESET enable_seqscan;
SELECT count(*) AS expected FROM keys WHERE pk::text = 'USER#7' AND sk::text LIKE 'EXTRA#%';

-- A GiST index backs an EXCLUDE constraint.
CREATE TABLE claims (email ddb.ddb_key, EXCLUDE USING gist (email WITH =));
INSERT INTO claims VALUES ('EMAIL#a@example.com'), ('EMAIL#b@example.com');
INSERT INTO claims VALUES ('EMAIL#a@example.com');

-- Hash index and hash partitioning keyed by ddb_key.
CREATE INDEX keys_pk_hash ON keys USING hash (pk);
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM keys WHERE pk = 'USER#7';
RESET enable_seqscan;
CREATE TABLE items (pk ddb.ddb_key, sk ddb.ddb_key, PRIMARY KEY (pk, sk)) PARTITION BY HASH (pk);
CREATE TABLE items_p0 PARTITION OF items FOR VALUES WITH (MODULUS 4, REMAINDER 0);
CREATE TABLE items_p1 PARTITION OF items FOR VALUES WITH (MODULUS 4, REMAINDER 1);
CREATE TABLE items_p2 PARTITION OF items FOR VALUES WITH (MODULUS 4, REMAINDER 2);
CREATE TABLE items_p3 PARTITION OF items FOR VALUES WITH (MODULUS 4, REMAINDER 3);
INSERT INTO items SELECT pk, sk FROM keys WHERE sk ^@ 'EMAIL#';
SELECT count(*) AS partitions_used FROM (SELECT DISTINCT tableoid FROM items) t;
-- One partition key lives in exactly one partition, and pruning finds it.
SELECT count(DISTINCT tableoid) AS partitions_of_one_key FROM items WHERE pk = 'USER#42';
EXPLAIN (COSTS OFF) SELECT * FROM items WHERE pk = 'USER#42';
-- Equal numbers hash alike whatever their spelling.
SELECT ddb.ddb_key_hash('\d1') = ddb.ddb_key_hash('\d1.000') AS canonical_hash,
       ddb.ddb_key_hash_extended('\d1', 7) = ddb.ddb_key_hash_extended('\d1e0', 7) AS canonical_extended_hash;

-- Keys of 2048 incompressible bytes: internal GiST entries are shortened so
-- that pages still split, and answers stay exact.
CREATE TABLE long_keys (i int, k ddb.ddb_key);
CREATE INDEX long_keys_gist ON long_keys USING gist (k);
INSERT INTO long_keys
SELECT i, string_agg(sha512((i * 100 + j)::text::bytea), ''::bytea ORDER BY j)::ddb.ddb_key
FROM generate_series(1, 400) i, generate_series(1, 32) j GROUP BY i;
INSERT INTO long_keys
SELECT 1000 + i, ddb.ddb_key(repeat('x', 2000) || i) FROM generate_series(1, 400) i;
SET enable_seqscan = off;
SELECT count(*) AS exact FROM long_keys WHERE k = (SELECT k FROM long_keys WHERE i = 7);
SELECT count(*) AS by_prefix FROM long_keys
WHERE k ^@ (SELECT substr(k::bytea, 1, 300)::ddb.ddb_key FROM long_keys WHERE i = 7);
SELECT count(*) AS long_strings FROM long_keys WHERE k ^@ repeat('x', 2000)::ddb.ddb_key;
SELECT count(*) AS long_string_10 FROM long_keys WHERE k <@ (repeat('x', 2000) || '10')::ddb.ddb_key;
RESET enable_seqscan;
