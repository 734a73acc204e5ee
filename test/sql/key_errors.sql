-- Every key error: a clear message and a SQLSTATE of class YD (ValidationException = YD001).

CREATE FUNCTION try_key(input text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  PERFORM ddb.ddb_key_in(input::cstring);
  RETURN 'ok';
EXCEPTION WHEN others THEN
  RETURN SQLSTATE || ': ' || SQLERRM;
END $$;

SELECT input, try_key(input) AS result
FROM (VALUES (''), ('\d'), ('\x'), ('\d1.2.3'), ('\d1e'), ('\d--1'), ('\d 1'), ('\d1 '), ('\dabc'),
             ('\dNaN'), ('\dInfinity'), ('\d0x10'), ('\d123456789012345678901234567890123456789'),
             ('\d1.23456789012345678901234567890123456789'), ('\d1e126'), ('\d-1e126'),
             ('\d1e-131'), ('\d-9.99e-131'), ('\d1e99999999999999999999'), ('\x0'), ('\xzz'),
             ('\q'), ('\'), ('\dx')) v(input);

-- Size limits: 2048 bytes of S (UTF-8) or B.
SELECT try_key(repeat('a', 2048)) AS s_2048, try_key(repeat('a', 2049)) AS s_2049,
       try_key(repeat('é', 1024)) AS s_2048_bytes, try_key(repeat('é', 1025)) AS s_2050_bytes,
       try_key('\x' || repeat('ab', 2048)) AS b_2048, try_key('\x' || repeat('ab', 2049)) AS b_2049;

-- Casts and functions.
SELECT ''::text::ddb.ddb_key;
SELECT ''::bytea::ddb.ddb_key;
SELECT 'NaN'::numeric::ddb.ddb_key;
SELECT 'Infinity'::numeric::ddb.ddb_key;
SELECT 1e126::numeric::ddb.ddb_key;
SELECT 1.00000000000000000000000000000000000000001::numeric::ddb.ddb_key;
SELECT decode(repeat('00', 2049), 'hex')::ddb.ddb_key;
SELECT repeat('x', 2049)::ddb.ddb_key;
SELECT '\x01'::ddb.ddb_key::text;
SELECT 'USER#1'::ddb.ddb_key::numeric;
SELECT '\d1'::ddb.ddb_key::bytea;
SELECT ddb.key('USER', 'a#b');
SELECT ddb.key('USER', NULL);
SELECT ddb.key(VARIADIC ARRAY[]::text[]);
SELECT ddb.segment('\d12', 1);
SELECT ddb.segment_count('\x01');
SELECT 'USER#1'::ddb.ddb_key ^@ '\d1';
SELECT 'USER#1'::ddb.ddb_key <@ '\d1';
SELECT ddb.prefix_upper_bound('\d1');
-- The all-0xFF binary prefix's bound is internal and has no text form.
SELECT ddb.prefix_upper_bound('\xffff');

-- Other types have no cast to ddb_key: no silent conversion through text.
SELECT now()::ddb.ddb_key;
SELECT true::ddb.ddb_key;
\set VERBOSITY sqlstate
SELECT 'x'::ddb.ddb_key < '\d1e126';
\set VERBOSITY default

-- A failed write leaves nothing behind.
CREATE TABLE t (k ddb.ddb_key PRIMARY KEY);
INSERT INTO t VALUES ('ok'), ('');
SELECT count(*) AS rows_after_failed_insert FROM t;
DROP TABLE t;
DROP FUNCTION try_key(text);
