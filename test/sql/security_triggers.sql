-- The extension's triggers and ddb.execute_as in a database shared by roles
-- that do not trust each other (docs/security.md, issue 29's findings 1-3).
\set SHOW_CONTEXT never
\set VERBOSITY terse
SET client_min_messages = warning;
CREATE ROLE ddb_victim NOLOGIN;
CREATE ROLE ddb_tenant NOLOGIN;
CREATE SCHEMA victim AUTHORIZATION ddb_victim;
CREATE SCHEMA tenant AUTHORIZATION ddb_tenant;
GRANT INSERT, UPDATE ON ddb.tables TO ddb_victim, ddb_tenant;
GRANT SELECT ON ddb.table_grants TO ddb_victim, ddb_tenant;
RESET client_min_messages;
-- another role's table (here the superuser's): a GSI, a stream and point-in-time recovery
SET ddb.default_schema = victim;
SELECT ddb.execute('CreateTable', '{"TableName": "Victim", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "g", "AttributeType": "S"}],
  "GlobalSecondaryIndexes": [{"IndexName": "ByG", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                              "Projection": {"ProjectionType": "ALL"}}],
  "StreamSpecification": {"StreamEnabled": true, "StreamViewType": "NEW_IMAGE"}}') -> 'TableDescription' ->> 'TableStatus';
SELECT ddb.execute('UpdateContinuousBackups', '{"TableName": "Victim",
  "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": true}}') IS NOT NULL AS pitr_on;
SELECT ddb.execute('PutItem', '{"TableName": "Victim", "Item": {"pk": {"S": "v1"}, "g": {"S": "real"}}}');
CREATE TEMP TABLE victim_state AS
SELECT (SELECT count(*) FROM ddb.query('Victim', 'real', index_name => 'ByG')) AS entries,
       (SELECT count(*) FROM ddb.stream_records WHERE table_name = 'Victim') AS records,
       (SELECT count(*) FROM victim."Victim$pitr") AS versions;
GRANT SELECT ON victim_state TO PUBLIC;

-- 1. PUBLIC may not name the trigger functions: no role attaches them to a table of its own
SELECT p.oid::regprocedure AS trigger_function, has_function_privilege('public', p.oid, 'EXECUTE') AS public_may
FROM pg_proc p WHERE p.pronamespace = 'ddb'::regnamespace AND p.prorettype IN ('trigger'::regtype, 'event_trigger'::regtype)
ORDER BY 1::text;
SET ROLE ddb_tenant;
CREATE TEMP TABLE forged (pk ddb.ddb_key, item jsonb, expires_at bigint, item_size integer);
CREATE TRIGGER forge AFTER INSERT ON forged FOR EACH ROW EXECUTE FUNCTION ddb.gsi_maintain('Victim');
CREATE TRIGGER forge AFTER INSERT ON forged FOR EACH ROW EXECUTE FUNCTION ddb.stream_capture('Victim');
-- ddb.attach_trigger puts them only on a table the caller owns
SELECT ddb.attach_trigger('Victim', 'ddb_stream');
RESET ROLE;

-- 2. attached anyway (as a superuser could), they run only on the table they name, of its shape
CREATE TEMP TABLE wrong_shape (pk text, item text);
CREATE TRIGGER t1 AFTER INSERT ON wrong_shape FOR EACH ROW EXECUTE FUNCTION ddb.gsi_maintain('Victim');
INSERT INTO wrong_shape VALUES ('v1', '{}');
DROP TRIGGER t1 ON wrong_shape;
CREATE TRIGGER t2 AFTER INSERT ON wrong_shape FOR EACH ROW EXECUTE FUNCTION ddb.stream_capture('Victim');
INSERT INTO wrong_shape VALUES ('v1', '{}');
CREATE TEMP TABLE right_shape (pk ddb.ddb_key, item jsonb, expires_at bigint, item_size integer);
CREATE TRIGGER t3 AFTER INSERT ON right_shape FOR EACH ROW EXECUTE FUNCTION ddb.gsi_maintain('Victim');
INSERT INTO right_shape VALUES ('forged', '{"pk": "forged", "g": "real"}', NULL, 10);
DROP TRIGGER t3 ON right_shape;
CREATE TRIGGER t4 AFTER INSERT ON right_shape FOR EACH ROW EXECUTE FUNCTION ddb.stream_capture('Victim');
INSERT INTO right_shape VALUES ('forged', '{"pk": "forged"}', NULL, 10);
DROP TRIGGER t4 ON right_shape;
CREATE TRIGGER t5 AFTER INSERT ON right_shape FOR EACH ROW EXECUTE FUNCTION ddb.pitr_capture('Victim', 'Victim$pitr');
INSERT INTO right_shape VALUES ('forged', '{"pk": "forged"}', NULL, 10);
DROP TRIGGER t5 ON right_shape;
-- a table owner's own table, of the right shape, pointing its trigger at another table's history
SET ROLE ddb_tenant;
SET ddb.default_schema = tenant;
SELECT ddb.execute('CreateTable', '{"TableName": "Tenant", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]}') -> 'TableDescription' ->> 'TableStatus';
RESET ROLE;
CREATE TRIGGER t6 AFTER INSERT ON tenant."Tenant" FOR EACH ROW EXECUTE FUNCTION ddb.pitr_capture('Tenant', 'Victim$pitr');
SET ROLE ddb_tenant;
SELECT ddb.execute('PutItem', '{"TableName": "Tenant", "Item": {"pk": {"S": "t1"}}}');
RESET ROLE;
DROP TRIGGER t6 ON tenant."Tenant";
-- ddb.check_at_commit runs only the extension's own functions at commit, whoever attached it
CREATE FUNCTION public.not_the_extensions(k ddb.ddb_key) RETURNS void LANGUAGE sql AS $$ SELECT $$;
CREATE TRIGGER t7 AFTER INSERT ON tenant."Tenant" FOR EACH ROW
    EXECUTE FUNCTION ddb.check_at_commit('Tenant', 'public.not_the_extensions(ddb.ddb_key)');
SELECT ddb.put_item('Tenant', '{"pk": "t0"}');
SELECT count(*) AS t0_written FROM tenant."Tenant" WHERE pk = 't0';
DROP TRIGGER t7 ON tenant."Tenant";
DROP FUNCTION public.not_the_extensions(ddb.ddb_key);
-- the table's owner may change its columns; the triggers check them
ALTER TABLE victim."Victim" ALTER COLUMN item_size TYPE bigint;
SELECT ddb.execute('PutItem', '{"TableName": "Victim", "Item": {"pk": {"S": "v2"}, "g": {"S": "x"}}}');
ALTER TABLE victim."Victim" ALTER COLUMN item_size TYPE integer;
-- nothing of the victim's changed
SELECT (SELECT count(*) FROM ddb.query('Victim', 'real', index_name => 'ByG')) = entries AS same_entries,
       (SELECT count(*) FROM ddb.stream_records WHERE table_name = 'Victim') = records AS same_records,
       (SELECT count(*) FROM victim."Victim$pitr") = versions AS same_versions
FROM victim_state;
SELECT count(*) AS problems FROM ddb.verify_gsi('Victim');

-- 3. a tenant's code runs only within the request that ddb.execute_as serves
SET ROLE ddb_tenant;
CREATE FUNCTION tenant.evil() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('ddb.endpoint_address', 'evil.example.com:443', false);
    PERFORM set_config('search_path', 'tenant', false);
    RETURN NULL;
END $$;
CREATE TRIGGER evil_now AFTER INSERT ON tenant."Tenant" FOR EACH ROW EXECUTE FUNCTION tenant.evil();
RESET ROLE;
SET ddb.endpoint_address = 'gateway.example.com:8000';
SELECT ddb.execute_as('ddb_tenant', 'PutItem', '{"TableName": "Tenant", "Item": {"pk": {"S": "t2"}}}');
-- no setting it changed outlives the request
SELECT current_setting('ddb.endpoint_address') AS endpoint, current_setting('search_path') AS search_path;
-- a deferred trigger would fire at commit as the caller: the request is refused
SET ROLE ddb_tenant;
DROP TRIGGER evil_now ON tenant."Tenant";
CREATE CONSTRAINT TRIGGER evil_at_commit AFTER INSERT ON tenant."Tenant" DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION tenant.evil();
RESET ROLE;
-- (AccessDeniedException; the hint keeps PostgreSQL's words)
\set VERBOSITY default
SELECT ddb.execute_as('ddb_tenant', 'PutItem', '{"TableName": "Tenant", "Item": {"pk": {"S": "t3"}}}');
\set VERBOSITY terse
SELECT count(*) AS t3_written FROM tenant."Tenant" WHERE pk = 't3';
-- the extension's own work at commit still happens for the role: a stream record and a version
SET ROLE ddb_tenant;
DROP TRIGGER evil_at_commit ON tenant."Tenant";
SELECT ddb.execute('UpdateContinuousBackups', '{"TableName": "Tenant",
  "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": true}}') IS NOT NULL AS pitr_on;
RESET ROLE;
SELECT ddb.execute('UpdateTable', '{"TableName": "Tenant",
  "StreamSpecification": {"StreamEnabled": true, "StreamViewType": "KEYS_ONLY"}}') IS NOT NULL AS stream_on;
SELECT ddb.execute_as('ddb_tenant', 'PutItem', '{"TableName": "Tenant", "Item": {"pk": {"S": "t4"}}}');
SELECT (SELECT count(*) FROM ddb.stream_records WHERE table_name = 'Tenant') AS tenant_records,
       (SELECT count(*) FROM tenant."Tenant$pitr" WHERE pk = 't4') AS tenant_versions;

-- clean up
SELECT ddb.delete_table('Victim');
SELECT ddb.delete_table('Tenant');
DROP FUNCTION tenant.evil();
DROP OWNED BY ddb_victim, ddb_tenant;
DROP ROLE ddb_victim;
DROP ROLE ddb_tenant;
