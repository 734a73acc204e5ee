-- The second look at background jobs, the router's node functions and
-- throttling as a hostile tenant (docs/security.md, "Second look").
\set SHOW_CONTEXT never
\set VERBOSITY terse
SET client_min_messages = warning;
DROP ROLE IF EXISTS ddb_second_owner;
RESET client_min_messages;
-- a tenant holding CreateTable's documented privileges
CREATE ROLE ddb_second_owner NOLOGIN;
GRANT INSERT, UPDATE ON ddb.tables TO ddb_second_owner;
GRANT SELECT ON ddb.table_grants TO ddb_second_owner;
GRANT CREATE ON SCHEMA public TO ddb_second_owner;
-- another's table with point-in-time recovery, which the tenant may not read
SELECT ddb.create_table('SecondVictim', 'pk');
SELECT ddb.execute('UpdateContinuousBackups', '{"TableName": "SecondVictim",
    "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": true}}') #>> '{ContinuousBackupsDescription,PointInTimeRecoveryDescription,PointInTimeRecoveryStatus}';
SELECT format('%I.%I', t.schema_name, c.history_relation)::regclass::oid AS victim_history
FROM ddb.tables t JOIN ddb.continuous_backups c USING (table_name) WHERE t.table_name = 'SecondVictim' \gset
SELECT ddb.describe_table('SecondVictim') AS victim_description \gset
-- 1. a restore's SourceHistory is the history it reads: one the tenant may
-- not read is refused, rather than kept from DeleteTable and trimming for
-- as long as the tenant's restore runs
SET ROLE ddb_second_owner;
CREATE FUNCTION public.second_look_slow_items(argument jsonb) RETURNS SETOF jsonb LANGUAGE sql
    AS $$ SELECT NULL::jsonb FROM pg_sleep(3) WHERE false $$;
SELECT ddb.start_restore('SecondPinned', :'victim_description', '{}', 'public.second_look_slow_items(jsonb)', '{}',
    jsonb_build_object('SourceTableArn', 'x', 'RestoreDateTime', 0, 'SourceHistory', :victim_history)) ->> 'TableStatus';
RESET ROLE;
SELECT ddb.execute('DeleteTable', '{"TableName": "SecondVictim"}') #>> '{TableDescription,TableStatus}';
SELECT ddb.wait_for_job(job_id, 30) FROM ddb.table_restores WHERE table_name = 'SecondPinned';
-- 2. throttling charges a conditional write whose condition fails, as
-- DynamoDB does: else failed writes (which return the item with
-- ReturnValuesOnConditionCheckFailure) were free past the table's capacity
SET ddb.throttling = on;
SELECT ddb.execute('CreateTable', '{"TableName": "SecondMetered", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
    "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}}') #>> '{TableDescription,TableStatus}';
SELECT ddb.execute('PutItem', jsonb_build_object('TableName', 'SecondMetered', 'Item', jsonb_build_object('pk', '{"S": "a"}'::jsonb,
    'big', jsonb_build_object('S', repeat('x', 100 * 1024 - 64))), 'ReturnConsumedCapacity', 'TOTAL')) #>> '{ConsumedCapacity,CapacityUnits}' AS units;
SELECT round(read_units) AS read_units, round(write_units) AS write_units FROM ddb.throttling_buckets() WHERE relation = 'public."SecondMetered"'::regclass;
DO $$
BEGIN
    FOR i IN 1..5 LOOP
        BEGIN
            PERFORM ddb.execute('PutItem', jsonb_build_object('TableName', 'SecondMetered', 'Item', jsonb_build_object('pk', '{"S": "a"}'::jsonb,
                'big', jsonb_build_object('S', repeat('y', 100 * 1024 - 64))), 'ConditionExpression', 'attribute_not_exists(pk)',
                'ReturnValuesOnConditionCheckFailure', 'ALL_OLD'));
        EXCEPTION WHEN SQLSTATE 'YD002' OR SQLSTATE 'YD050' THEN
            RAISE NOTICE '%', SQLERRM;
        END;
    END LOOP;
END $$;
SELECT round(read_units) AS read_units, round(write_units) AS write_units FROM ddb.throttling_buckets() WHERE relation = 'public."SecondMetered"'::regclass;
RESET ddb.throttling;
SELECT ddb.execute('DeleteTable', '{"TableName": "SecondMetered"}') #>> '{TableDescription,TableStatus}';
DROP OWNED BY ddb_second_owner;
DROP ROLE ddb_second_owner;
