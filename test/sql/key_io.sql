-- ddb_key text and binary I/O, casts, canonical numbers, segments.

-- Text form: plain is S, \d is N, \x is B, a leading \\ escapes an S.
SELECT k, ddb.key_type(k) AS type
FROM (VALUES ('USER#abc-123'::ddb.ddb_key), ('\d42'), ('\d-1.5e3'), ('\x00ff10'),
             ('\\starts with a backslash'), ('C:\no\escape\needed'), ('ünïcødé 😀')) v(k);

-- Every text form reads back to the same key.
SELECT ddb.ddb_key_out(k) AS text_form, ddb.ddb_key_in(ddb.ddb_key_out(k)) = k AS round_trips
FROM (VALUES ('USER#1'::ddb.ddb_key), ('\d0.001'), ('\x0a'), ('\\x'), ('\\d1')) v(k);

-- Numbers are canonical: 1, 1.0, 1e0 and +1 are one key.
SELECT '\d1'::ddb.ddb_key = '\d1.0' AS one_eq_one_point_zero,
       '\d1'::ddb.ddb_key = '\d1e0' AS one_eq_1e0,
       '\d1'::ddb.ddb_key = '\d+1' AS one_eq_plus_one,
       '\d-0'::ddb.ddb_key = '\d0' AS no_negative_zero,
       '\d1'::ddb.ddb_key = '1' AS number_is_not_string;
SELECT k FROM (VALUES ('\d1.50'::ddb.ddb_key), ('\d00012.3400'), ('\d1e3'), ('\d-2.5E-3'),
                      ('\d.5'), ('\d5.'), ('\d0.000'), ('\d123456789012345678901234567890.12345678'),
                      ('\d1e125'), ('\d-1e-130')) v(k);

-- 38 significant digits and DynamoDB's range are accepted at the edges.
SELECT '\d99999999999999999999999999999999999999'::ddb.ddb_key AS max_digits_integer;
SELECT '\d9.9999999999999999999999999999999999999e125'::ddb.ddb_key = '\d9.9999999999999999999999999999999999999e125' AS largest;
SELECT '\d1e-130'::ddb.ddb_key AS smallest;
SELECT '\d10000000000000000000000000000000000000000000'::ddb.ddb_key AS many_zeros_are_one_digit;

-- Casts: text is always S, numeric is N, bytea is B; and back.
SELECT '\d42'::text::ddb.ddb_key AS text_cast_is_string,
       ddb.key_type('\d42'::text::ddb.ddb_key) AS type;
SELECT 42.50::numeric::ddb.ddb_key AS from_numeric, 7::ddb.ddb_key AS from_integer,
       (-9000000000000000000)::bigint::ddb.ddb_key AS from_bigint,
       '\xdeadbeef'::bytea::ddb.ddb_key AS from_bytea;
SELECT 'USER#1'::ddb.ddb_key::text AS s_to_text, '\d1e2'::ddb.ddb_key::text AS n_to_text,
       '\d-0.25'::ddb.ddb_key::numeric AS n_to_numeric, '\x0102'::ddb.ddb_key::bytea AS b_to_bytea;

-- Assignment casts let typed columns take text, numeric and bytea values.
CREATE TABLE typed_keys (k ddb.ddb_key);
INSERT INTO typed_keys VALUES ('plain'::text), (12.0::numeric), ('\x01'::bytea), (5), (6::bigint);
SELECT k, ddb.key_type(k) FROM typed_keys ORDER BY k;
DROP TABLE typed_keys;

-- Binary send/receive round trip (through COPY BINARY).
CREATE TABLE bin_keys (k ddb.ddb_key);
INSERT INTO bin_keys VALUES ('USER#é'), ('\d-12.5'), ('\d0'), ('\xff00'), ('\\esc');
CREATE TABLE bin_copy (k ddb.ddb_key);
COPY bin_keys TO '/tmp/ddb_key_binary.copy' WITH (FORMAT binary);
COPY bin_copy FROM '/tmp/ddb_key_binary.copy' WITH (FORMAT binary);
SELECT a.k, b.k IS NOT NULL AS received_equal
FROM bin_keys a LEFT JOIN bin_copy b ON a.k = b.k ORDER BY a.k;
DROP TABLE bin_keys, bin_copy;

-- Segments.
SELECT ddb.key('USER', 'abc-123') AS two_segments,
       ddb.key('EVAL_RESULTS', 'item', 'acct', '2024-02-10T14:30:00Z') AS four_segments,
       ddb.key('USER', '') AS empty_last_segment;
SELECT ddb.segment('EVAL_RESULTS#item#acct#2024', n) AS segment, n
FROM generate_series(-5, 5) n ORDER BY n;
SELECT ddb.segment_count('USER#1') AS two, ddb.segment_count('PROFILE') AS one,
       ddb.segment_count('A##B') AS three;
SELECT ddb.key(VARIADIC string_to_array('USER#abc#EMAIL#x', '#')) = 'USER#abc#EMAIL#x' AS split_and_join;
