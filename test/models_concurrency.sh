#!/usr/bin/env bash
# The models' invariants under concurrent writers: pgbench clients hammer
# them for a few seconds, then the data is checked.  Runs against the
# cluster of tools/test.sh (PGHOST/PGPORT/PGUSER set); prints
# "<check> ... ok|FAILED" per check.
#
# user_service: clients claim a small pool of shared addresses (S7), swap
# primaries (S8) and update profiles under optimistic locking (S9) at once.
# uds: clients write and delete app data of a few users in an app with a
# small quota (D7).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
work_dir models-concurrency
DB=ddb_models_concurrency
CLIENTS=${CONCURRENCY_CLIENTS:-4}
SECONDS_PER_RUN=${CONCURRENCY_SECONDS:-4}

fresh_db "$DB"
q >/dev/null <<'SQL'
CREATE EXTENSION ddb_model;
-- five users, each with three verified addresses
SELECT user_service.create_user(format('user%s@example.com', u), 'User', u::text,
                                user_id => format('a0000000-0000-4000-8000-%s', lpad(u::text, 12, '0'))::uuid)
FROM generate_series(1, 5) u;
SELECT user_service.verify_email(user_id, user_service.add_email(user_id, format('user%s.%s@example.com', n, k)))
FROM (SELECT user_id, substr(user_id::text, 25)::int AS n FROM user_service.users) u, generate_series(1, 2) k;
-- what the clients did, written in the same transaction as their write
CREATE TABLE claims (email text, user_id uuid);
CREATE TABLE updates (user_id uuid);
CREATE FUNCTION some_user() RETURNS uuid LANGUAGE sql VOLATILE
RETURN format('a0000000-0000-4000-8000-%s', lpad((1 + floor(random() * 5))::text, 12, '0'))::uuid;

-- S7: a random user claims one of ten shared addresses
CREATE FUNCTION claim() RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    u uuid := some_user();
    e text := format('shared%s@example.com', 1 + floor(random() * 10));
BEGIN
    PERFORM user_service.add_email(u, e);
    INSERT INTO claims VALUES (e, u);
EXCEPTION WHEN unique_violation THEN
    NULL;   -- taken: the expected answer for all but the first claim
END $$;
-- S8: a random user makes a random verified address primary; swaps of one
-- user queue on the profile's lock, so none of them may fail
CREATE FUNCTION swap() RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    u uuid := some_user();
    e uuid := (SELECT email_id FROM user_service.list_emails(u) WHERE is_verified ORDER BY random() LIMIT 1);
BEGIN
    PERFORM user_service.set_primary_email(u, e);
END $$;
-- S9: a random user's profile is updated at the version just read; the
-- name written says which version it was computed from
CREATE FUNCTION bump() RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    u uuid := some_user();
    v integer := (user_service.get_user(u)).version;
BEGIN
    PERFORM user_service.update_profile(u, v, last_name => 'v' || (v + 1));
    INSERT INTO updates VALUES (u);
EXCEPTION WHEN SQLSTATE 'YD002' THEN
    NULL;   -- a concurrent update won: nothing written, as S9 says
          WHEN SQLSTATE 'YD012' THEN
    NULL;   -- a swap's TransactWriteItems held the profile: nothing written, as DynamoDB answers
END $$;
SQL
for f in claim swap bump; do echo "SELECT $f();" >"$WORK/$f.sql"; done
pgbench -n -c "$CLIENTS" -j 2 -T "$SECONDS_PER_RUN" -f "$WORK/claim.sql" -f "$WORK/swap.sql" -f "$WORK/bump.sql" \
    "$DB" >"$WORK/pgbench.log" 2>&1
check "user_service: $CLIENTS pgbench clients ran without an error" "0" \
    "$(grep -ci 'error:\|aborted' "$WORK/pgbench.log")"
check "user_service: the clients claimed, swapped and updated" "t" \
    "$(q -c "SELECT (SELECT count(*) FROM claims) > 0 AND (SELECT count(*) FROM updates) > 0
                    AND (SELECT count(*) FROM user_service.emails WHERE is_primary AND email NOT LIKE 'user_@%') > 0")"
check "S7: zero duplicate emails" "0" \
    "$(q -c "SELECT count(*) FROM (SELECT email FROM user_service.emails GROUP BY email HAVING count(*) > 1) d")"
check "S7: every shared address held by the user whose claim committed" "0" \
    "$(q -c "SELECT count(*) FROM claims c FULL JOIN (SELECT email, user_id FROM user_service.emails
                                                     WHERE email LIKE 'shared%') e USING (email, user_id)
             WHERE c.email IS NULL OR e.email IS NULL")"
check "S8: every user has exactly one primary, verified, named by the profile" "5" \
    "$(q -c "SELECT count(*) FROM user_service.users u
             WHERE (SELECT count(*) FROM user_service.emails e WHERE e.user_id = u.user_id AND e.is_primary) = 1
               AND (SELECT bool_and(is_verified AND email = u.email) FROM user_service.emails e
                    WHERE e.user_id = u.user_id AND e.is_primary)")"
check "S9: zero lost updates (each version counts the updates that committed)" "0" \
    "$(q -c "SELECT count(*) FROM user_service.users u
             WHERE u.version - 1 <> (SELECT count(*) FROM updates d WHERE d.user_id = u.user_id)")"
check "S9: every profile was last written from the version it replaced" "0" \
    "$(q -c "SELECT count(*) FROM user_service.users WHERE version > 1 AND last_name <> 'v' || version")"

# uds: three users, ten keys each, values of 100 to 1500 bytes, a 6000-byte quota
q >/dev/null <<'SQL'
SELECT uds.register_app('conc', quota_bytes => 6000);
CREATE TABLE refusals (user_id text);
-- a random user writes or deletes a random key; a write over the quota is refused
CREATE FUNCTION write_or_delete() RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    u text := 'u' || (1 + floor(random() * 3));
    k text := 'k' || (1 + floor(random() * 10));
BEGIN
    IF random() < 0.3 THEN
        PERFORM uds.data_delete('json', 'conc', u, k);
    ELSE
        PERFORM uds.json_put('conc', u, k, to_jsonb(repeat('x', 100 + floor(random() * 1400)::int)));
    END IF;
EXCEPTION WHEN check_violation THEN
    INSERT INTO refusals VALUES (u);
END $$;
SQL
echo "SELECT write_or_delete();" >"$WORK/uds.sql"
pgbench -n -c "$CLIENTS" -j 2 -T "$SECONDS_PER_RUN" -f "$WORK/uds.sql" "$DB" >"$WORK/pgbench-uds.log" 2>&1
check "uds: $CLIENTS pgbench clients ran without an error" "0" "$(grep -ci 'error:\|aborted' "$WORK/pgbench-uds.log")"
check "uds: the clients wrote, deleted and met the quota" "t" \
    "$(q -c "SELECT (SELECT count(*) FROM refusals) > 0 AND (SELECT count(*) FROM uds.app_data WHERE app = 'conc') > 0")"
check "D7: stored usage equals usage recomputed from the data" "0" "$(q -c "SELECT count(*) FROM uds.reconcile()")"
check "D7: no user went over the quota" "0" \
    "$(q -c "SELECT count(*) FROM (VALUES ('u1'), ('u2'), ('u3')) v(u) WHERE uds.quota_used('conc', u) > 6000")"

drop_db "$DB"
done_testing
