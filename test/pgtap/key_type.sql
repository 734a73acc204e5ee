-- pgTAP: the ddb_key type's catalogue objects and its contract.
BEGIN;
SELECT plan(34);

SELECT has_extension('ddb_model', 'the extension is installed');
SELECT has_schema('ddb', 'core objects live in schema ddb');
SELECT has_type('ddb', 'ddb_key', 'type ddb.ddb_key exists');
SELECT has_function('ddb', 'begins_with', ARRAY['ddb.ddb_key', 'ddb.ddb_key'], 'ddb.begins_with(key, prefix) exists');
SELECT has_function('ddb', 'begins_with_segments', ARRAY['ddb.ddb_key', 'ddb.ddb_key'], 'ddb.begins_with_segments exists');
SELECT has_function('ddb', 'key', ARRAY['text[]'], 'ddb.key(VARIADIC text[]) exists');
SELECT has_function('ddb', 'segment', ARRAY['ddb.ddb_key', 'integer'], 'ddb.segment(key, n) exists');
SELECT has_function('ddb', 'segment_count', ARRAY['ddb.ddb_key'], 'ddb.segment_count(key) exists');
SELECT has_operator('ddb.ddb_key', 'pg_catalog', '^@', 'ddb.ddb_key', 'boolean', 'operator ^@ exists');
SELECT has_operator('ddb.ddb_key', 'pg_catalog', '<@', 'ddb.ddb_key', 'boolean', 'operator <@ exists');
SELECT has_opclass('ddb', 'ddb_key_ops', 'operator classes ddb.ddb_key_ops exist');

SELECT is((SELECT array_agg(am.amname ORDER BY am.amname)::text[] FROM pg_opclass c
           JOIN pg_am am ON am.oid = c.opcmethod
           WHERE c.opcintype = 'ddb.ddb_key'::regtype AND c.opcdefault),
          ARRAY['btree', 'gist', 'hash']::text[], 'default btree, hash and GiST classes');

-- Every function the extension owns sets nothing surprising: C functions are immutable and strict.
SELECT is((SELECT count(*)::int FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid AND d.deptype = 'e'
           JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'ddb_model'
           WHERE p.prolang = (SELECT oid FROM pg_language WHERE lanname = 'c')
             AND (p.proname LIKE 'ddb\_key%' OR p.proname IN ('begins_with', 'begins_with_segments', 'key',
                  'segment', 'segment_count', 'key_type', 'prefix_upper_bound', 'segment_prefix_upper_bound',
                  'text', 'numeric', 'bytea'))
             AND (p.provolatile <> 'i' OR NOT p.proisstrict)), 0,
          'every C function of the key type is IMMUTABLE STRICT');

-- Contract.
SELECT is('\d1'::ddb.ddb_key, '\d1.0'::ddb.ddb_key, 'N keys are canonical (1 = 1.0)');
SELECT is('\d1e0'::ddb.ddb_key::text, '1', 'N prints canonically');
SELECT isnt('\d1'::ddb.ddb_key, '1'::ddb.ddb_key, 'N 1 and S 1 differ');
SELECT ok('B'::ddb.ddb_key < 'a'::ddb.ddb_key, 'S compares by bytes, not collation');
SELECT ok(U&'\FFFD'::ddb.ddb_key < U&'\+010000'::ddb.ddb_key, 'UTF-8 byte order: U+FFFD before U+10000');
SELECT ok('\d-10'::ddb.ddb_key < '\d-9.5'::ddb.ddb_key, 'negative numbers order numerically');
SELECT ok('\d9'::ddb.ddb_key < '\d10'::ddb.ddb_key, 'numbers order numerically, not textually');
SELECT ok('\x7f'::ddb.ddb_key < '\x80'::ddb.ddb_key, 'binary compares unsigned bytes');
SELECT ok('USER#10'::ddb.ddb_key ^@ 'USER#1', 'begins_with is a byte prefix');
SELECT ok(NOT ('USER#10'::ddb.ddb_key <@ 'USER#1'), 'USER#10 does not lie under USER#1');
SELECT ok('USER#1#EMAIL#x'::ddb.ddb_key <@ 'USER#1', 'USER#1#EMAIL#x lies under USER#1');
SELECT is(ddb.key('USER', 'abc-123'), 'USER#abc-123'::ddb.ddb_key, 'segments join with #');
SELECT is(ddb.segment('USER#abc#EMAIL#x', 3), 'EMAIL', 'segment 3');
SELECT is(ddb.segment_count('USER#abc#EMAIL#x'), 4, 'segment count');

SELECT throws_ok($$SELECT ''::ddb.ddb_key$$, 'YD001', NULL, 'empty S key is a ValidationException');
SELECT throws_ok($$SELECT '\x'::ddb.ddb_key$$, 'YD001', NULL, 'empty B key is a ValidationException');
SELECT throws_ok($$SELECT repeat('a', 2049)::ddb.ddb_key$$, 'YD001', NULL, 'S key over 2048 bytes');
SELECT throws_ok($$SELECT '\d1e126'::ddb.ddb_key$$, 'YD001',
                 'Number overflow. Attempting to store a number with magnitude larger than supported range',
                 'number overflow');
SELECT throws_ok($$SELECT '\d123456789012345678901234567890123456789'::ddb.ddb_key$$, 'YD001',
                 'Attempting to store more than 38 significant digits in a Number', 'more than 38 digits');
SELECT throws_ok($$SELECT ddb.key('A', 'b#c')$$, 'YD001', NULL, 'a segment holding # is refused');
SELECT throws_ok($$SELECT 'a'::ddb.ddb_key ^@ '\d1'$$, 'YD001', NULL, 'begins_with on a number prefix');

SELECT * FROM finish();
ROLLBACK;
