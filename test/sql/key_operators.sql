-- Every operator: = <> < <= > >= BETWEEN, ^@ and begins_with, <@.

SELECT a, b, a = b AS eq, a <> b AS ne, a < b AS lt, a <= b AS le, a > b AS gt, a >= b AS ge
FROM (VALUES ('USER#1'::ddb.ddb_key, 'USER#1'::ddb.ddb_key), ('USER#1', 'USER#10'),
             ('USER#2', 'USER#10'), ('\d2', '\d10'), ('\d-2', '\d-10'), ('\x01', '\x0100')) v(a, b);

SELECT k, k BETWEEN 'EVENT#2024-01-01' AND 'EVENT#2024-02-01' AS in_january
FROM (VALUES ('EVENT#2023-12-31T23:59:59Z'::ddb.ddb_key), ('EVENT#2024-01-01T00:00:00Z'),
             ('EVENT#2024-01-31T23:59:59Z'), ('EVENT#2024-02-01T00:00:00Z')) v(k);
SELECT '\d5'::ddb.ddb_key BETWEEN '\d-1e3' AND '\d5.0' AS number_between;

-- ^@ and ddb.begins_with: DynamoDB's byte prefix.
SELECT k, k ^@ 'USER#1' AS byte_prefix, ddb.begins_with(k, 'USER#1') AS function_form,
       k <@ 'USER#1' AS segment_prefix
FROM (VALUES ('USER#1'::ddb.ddb_key), ('USER#10'), ('USER#1#EMAIL#x'), ('USER#2'), ('USER#'),
             ('USER#1!'), ('\x555345'), ('\d1')) v(k);

-- A prefix ending in # matches every key that continues it.
SELECT k, k <@ 'EMAIL#' AS under_email_hash, k ^@ 'EMAIL#' AS begins_email_hash
FROM (VALUES ('EMAIL#a'::ddb.ddb_key), ('EMAIL#'), ('EMAIL'), ('EMAILS#a')) v(k);

-- The issue's examples.
SELECT 'USER#10'::ddb.ddb_key <@ 'USER#1' AS user10_under_user1,
       'USER#1#EMAIL#x'::ddb.ddb_key <@ 'USER#1' AS email_under_user1;

-- Binary prefixes work bytewise, and keys of another type never match.
SELECT '\x0102ff'::ddb.ddb_key ^@ '\x0102' AS binary_prefix,
       '\x0102'::ddb.ddb_key ^@ '\x0102ff' AS longer_prefix,
       '\x23'::ddb.ddb_key <@ '\x23' AS binary_segment_equal,
       'ab'::ddb.ddb_key ^@ '\x6162' AS string_vs_binary;

-- The range bounds the index scans use.
SELECT ddb.prefix_upper_bound('USER#1') AS upper_byte, ddb.segment_prefix_upper_bound('USER#1') AS upper_segment,
       ddb.segment_prefix_upper_bound('USER#') AS upper_segment_hash, ddb.prefix_upper_bound('\x01ff') AS upper_binary;
