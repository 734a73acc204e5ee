-- The main job's demo: the key type at work.  Later issues add the models.
\pset footer off
\echo
\echo '== ddb_key: one DynamoDB key value (S, N or B) in DynamoDB order'
SELECT k AS key, ddb.key_type(k) AS type
FROM (VALUES ('USER#abc-123'::ddb.ddb_key), ('\d-1.5e3'), ('\x00ff10')) v(k);

\echo '== composite keys from segments, and back'
SELECT ddb.key('EVAL_RESULTS', 'item-9', 'acct-3', '2024-02-10T14:30:00Z') AS key,
       ddb.segment('EVAL_RESULTS#item-9#acct-3#2024-02-10T14:30:00Z', 2) AS segment_2;

\echo '== DynamoDB order: numbers numerically, strings by UTF-8 bytes'
SELECT string_agg(k::text, '  ' ORDER BY k) AS sorted
FROM (VALUES ('\d10'::ddb.ddb_key), ('\d9'), ('\d-1'), ('a'), ('Z'), ('USER#10'), ('USER#2')) v(k);

\echo '== begins_with (^@) versus the segment-aware prefix (<@)'
CREATE TABLE IF NOT EXISTS demo_keys (pk ddb.ddb_key PRIMARY KEY);
INSERT INTO demo_keys VALUES ('USER#1'), ('USER#1#EMAIL#a@example.com'), ('USER#10'), ('USER#10#PROFILE')
ON CONFLICT DO NOTHING;
SELECT pk, pk ^@ 'USER#1' AS "^@ USER#1", pk <@ 'USER#1' AS "<@ USER#1" FROM demo_keys ORDER BY pk;

\echo '== a prefix query is an index range scan'
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM demo_keys WHERE pk <@ 'USER#1';
RESET enable_seqscan;
