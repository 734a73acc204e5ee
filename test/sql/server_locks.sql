-- The server's own locks (src/ddb_locks.h): an advisory tag with objsubid 3,
-- which pg_advisory_* never take; the SQL functions that reach them check
-- their caller and refuse bad input with an error, never a crash.
\set SHOW_CONTEXT never
\set VERBOSITY terse
SELECT ddb.create_table('LockedT', 'pk');
CREATE ROLE ddb_locks_regress NOLOGIN;
-- a TransactWriteItems' item claims and CreateTable's name lock, as pg_locks shows them
BEGIN;
SELECT ddb.execute('TransactWriteItems', '{"TransactItems": [{"Put": {"TableName": "LockedT", "Item": {"pk": {"S": "a"}}}}]}');
SELECT ddb.lock_table_name('LockedX');
SELECT classid, objsubid, mode FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid() ORDER BY classid;
COMMIT;
-- "this backend is job N's worker", "this transaction started job N": not forged by advisory locks
SET ROLE ddb_locks_regress;
SELECT pg_advisory_lock(1685283445, 77);
SELECT ddb.end_restore('LockedT', 77);
BEGIN;
SELECT pg_advisory_xact_lock(1685283444, 77);
-- (the job's request lock's class and id through pg_advisory_*: another lock, granted at once)
SELECT pg_advisory_xact_lock(3, 77);
SELECT ddb.job_started_here(77);
COMMIT;
SELECT pg_advisory_unlock_all();
-- the waits and locks of a table are for a role that may read, write or create it
SELECT ddb.await_stream_writers('LockedT');
SELECT ddb.pitr_settle('LockedT');
SELECT ddb.lock_table_audit('LockedT');
SELECT ddb.lock_table_name('LockedY');
-- (a table that does not exist has no writers to wait for)
SELECT ddb.await_stream_writers('NoSuchTable') = 0 AS no_writers, ddb.pitr_settle('NoSuchTable');
SELECT ddb.lock_table_audit('NoSuchTable');
-- a ClientToken lock is any role's own, and a router node's claims are not PUBLIC's
SELECT ddb.lock_client_token('export', repeat('x', 100000));
SELECT ddb.try_claim_items('[]');
RESET ROLE;
GRANT SELECT ON public."LockedT" TO ddb_locks_regress;
SET ROLE ddb_locks_regress;
SELECT ddb.await_stream_writers('LockedT') >= 0 AS waited, ddb.pitr_settle('LockedT');
SELECT ddb.lock_table_audit('LockedT');
RESET ROLE;
-- ddb.try_claim_items: claims [n, element]; what another transaction holds comes back
SELECT ddb.try_claim_items('[]');
SELECT ddb.try_claim_items('{}');
SELECT ddb.try_claim_items('1');
SELECT ddb.try_claim_items('[1]');
SELECT ddb.try_claim_items('[[1]]');
SELECT ddb.try_claim_items('[[1, "x"]]');
SELECT ddb.try_claim_items('[[1, [1, 2]]]');
SELECT ddb.try_claim_items('[[1, {}]]');
SELECT ddb.try_claim_items('[[1, {"Get": {}}]]');
SELECT ddb.try_claim_items('[[1, {"Get": {"TableName": 5}}]]');
SELECT ddb.try_claim_items('[[1, {"Get": {"TableName": "NoSuchTable", "Key": {}}}]]');
SELECT ddb.try_claim_items('[[1, {"Get": {"TableName": "LockedT"}}]]');
SELECT ddb.try_claim_items('[[1, {"Get": {"TableName": "LockedT", "Key": {"pk": {"N": "1"}}}}]]');
SELECT ddb.try_claim_items('[[1, {"Statement": 5}]]');
SELECT ddb.try_claim_items('[[1, {"Get": {"TableName": "LockedT", "Key": {"pk": {"S": "a"}}}}], [2, {"Statement": "SELECT * FROM \"LockedT\" WHERE pk = ''b''"}]]');
SELECT ddb.delete_table('LockedT');
DROP ROLE ddb_locks_regress;
