-- DynamoDB ordering: S by UTF-8 bytes whatever the collation, N numerically,
-- B by bytes, and N < S < B across types.

-- UTF-8 byte order: U+FFFD (EF BF BD) sorts before U+10000 (F0 90 80 80),
-- unlike UTF-16 code unit order; 'Z' before 'a'; a prefix before its extensions.
SELECT k FROM (VALUES ('a'::ddb.ddb_key), ('Z'), ('ab'), (U&'\FFFD'), (U&'\+010000'),
                      ('é'), ('e'), ('A#1'), ('A#10'), ('A#2'), ('A'), ('A#')) v(k)
ORDER BY k;

-- A linguistic collation orders the same strings differently; ddb_key does not.
SELECT array_agg(k ORDER BY k::ddb.ddb_key) AS by_key,
       array_agg(k ORDER BY k COLLATE "und-x-icu") AS by_icu_collation
FROM (VALUES ('a'), ('Z'), (U&'\FFFD'), (U&'\+010000'), ('é')) v(k);

-- Numbers: negatives, decimals, exponents, 38 digits.
SELECT k FROM (VALUES ('\d10'::ddb.ddb_key), ('\d9'), ('\d-1'), ('\d-10'), ('\d0'), ('\d0.5'),
                      ('\d-0.5'), ('\d1e-130'), ('\d-1e-130'), ('\d1.01'), ('\d1.1'), ('\d1'),
                      ('\d-1.01'), ('\d-1.1'), ('\d12345678901234567890123456789012345678'),
                      ('\d12345678901234567890123456789012345677'), ('\d9.9e125'), ('\d-9.9e125'),
                      ('\d100'), ('\d99.99999999999999999999999999999999999')) v(k)
ORDER BY k;

-- The order of N keys agrees with numeric on random values.
WITH n AS (
  SELECT round(((random() - 0.5) * 10 ^ (random() * 40 - 20))::numeric, 10) AS v
  FROM generate_series(1, 2000)
)
SELECT count(*) AS pairs,
       count(*) FILTER (WHERE (a.v < b.v) <> (a.v::ddb.ddb_key < b.v::ddb.ddb_key)
                           OR (a.v = b.v) <> (a.v::ddb.ddb_key = b.v::ddb.ddb_key)) AS disagreements
FROM (SELECT v FROM n LIMIT 200) a, (SELECT v FROM n OFFSET 200 LIMIT 200) b;

-- Binary: unsigned bytes, a prefix before its extensions.
SELECT k FROM (VALUES ('\x80'::ddb.ddb_key), ('\x7f'), ('\x00'), ('\x0000'), ('\xff'), ('\xfeff')) v(k)
ORDER BY k;

-- Across types: every N before every S before every B; never equal.
SELECT k, ddb.key_type(k) FROM (VALUES ('\x00'::ddb.ddb_key), ('0'), ('\d0'), ('\d9e125'), (' ')) v(k)
ORDER BY k;
SELECT '\d1'::ddb.ddb_key = '1' AS n_eq_s, '\x31'::ddb.ddb_key = '1' AS b_eq_s,
       '\d1'::ddb.ddb_key < '1' AS n_lt_s, '1'::ddb.ddb_key < '\x31' AS s_lt_b;

-- The comparison function and the operators agree.
SELECT ddb.ddb_key_cmp('a', 'b') AS lt, ddb.ddb_key_cmp('b', 'b') AS eq, ddb.ddb_key_cmp('\d2', '\d10') AS lt_numeric;
