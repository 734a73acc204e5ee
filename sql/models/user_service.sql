
-- ===========================================================================
-- Model user_service (../shared/catalog.md S1-S10; docs/models/user_service.md)
--
-- One table, UserServiceTable: USER#<userId>/PROFILE and
-- USER#<userId>/EMAIL#<emailId> items, GSI1 over the email items only.
-- What the seed leaves to application code is enforced here for every
-- write path (these functions, ddb.execute, TransactWriteItems):
--   S7  a unique index: no two email items ever hold one normalised address;
--   S8  a deferred constraint trigger: at commit every user has exactly one
--       primary email, verified, and the profile names it;
--   item shapes (required attributes, E.164 phones, statuses) on every write.
-- ===========================================================================

CREATE SCHEMA user_service;
COMMENT ON SCHEMA user_service IS 'The user_service model (ddb_model): users and their email addresses';

SELECT ddb.create_table('UserServiceTable', 'PK', 'S', 'SK', 'S', schema_name => 'user_service', partitions => 0);
SELECT ddb.create_index('UserServiceTable', 'GSI1', 'GSI1PK', 'S', 'GSI1SK', 'S');
SELECT ddb.own_model_table('user_service', 'UserServiceTable');

-- S7: one email item per normalised address, whoever writes it.
CREATE UNIQUE INDEX "UserServiceTable: one user per email (S7)"
    ON user_service."UserServiceTable" ((item OPERATOR(pg_catalog.->>) 'GSI1PK'))
    WHERE item OPERATOR(pg_catalog.?) 'GSI1PK';

-- A user profile, typed.
CREATE TYPE user_service.user_profile AS (
    user_id uuid,
    email text,
    first_name text,
    last_name text,
    phone text,
    status text,
    version integer,
    created_at timestamptz,
    updated_at timestamptz
);

-- An email record, typed.
CREATE TYPE user_service.user_email AS (
    email_id uuid,
    user_id uuid,
    email text,
    is_primary boolean,
    is_verified boolean,
    verified_at timestamptz,
    created_at timestamptz
);

-- The typed profile of a PROFILE item (NULL for none).
CREATE FUNCTION user_service.profile_of(item jsonb) RETURNS user_service.user_profile
LANGUAGE sql STABLE STRICT PARALLEL SAFE
RETURN ROW((item ->> 'userId')::uuid, item ->> 'email', item ->> 'firstName', item ->> 'lastName',
           item ->> 'phone', item ->> 'status', (item ->> 'version')::integer,
           (item ->> 'createdAt')::timestamptz, (item ->> 'updatedAt')::timestamptz)::user_service.user_profile;

-- The typed email record of an EMAIL item.
CREATE FUNCTION user_service.email_of(item jsonb) RETURNS user_service.user_email
LANGUAGE sql STABLE STRICT PARALLEL SAFE
RETURN ROW((item ->> 'emailId')::uuid, (item ->> 'userId')::uuid, item ->> 'email',
           (item ->> 'isPrimary')::boolean, (item ->> 'isVerified')::boolean,
           (item ->> 'verifiedAt')::timestamptz, (item ->> 'createdAt')::timestamptz)::user_service.user_email;

CREATE VIEW user_service.users AS
    SELECT p.* FROM user_service."UserServiceTable" t, user_service.profile_of(t.item) p
    WHERE t.sk OPERATOR(pg_catalog.=) 'PROFILE'::ddb.ddb_key;
COMMENT ON VIEW user_service.users IS 'user_service: every user profile, typed';

CREATE VIEW user_service.emails AS
    SELECT e.* FROM user_service."UserServiceTable" t, user_service.email_of(t.item) e
    WHERE t.sk OPERATOR(pg_catalog.^@) 'EMAIL#'::ddb.ddb_key;
COMMENT ON VIEW user_service.emails IS 'user_service: every email record, typed';

-- An email address trimmed and lower-cased; raises for anything that is
-- not an address.  What every stored address satisfies, whatever the
-- session's settings.
CREATE FUNCTION user_service.lower_email(email text) RETURNS text
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    e text := lower(btrim(email, E' \t\r\n'));
BEGIN
    IF e IS NULL OR length(e) > 254 OR e !~ '^[^@\s]+@[^@\s.]+(\.[^@\s.]+)+$' THEN
        PERFORM ddb.invalid_parameter(format('not an email address: %L', email));
    END IF;
    RETURN e;
END $$;

-- S6: an email address normalised for storage and lookup: trimmed and
-- lower-cased.  With the setting user_service.fold_gmail = on, Gmail
-- addresses also lose dots and +tags in the local part (opt-in only).
-- Raises for anything that is not an address.
CREATE FUNCTION user_service.normalize_email(email text) RETURNS text
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    e text := user_service.lower_email(email);
    local text;
    domain text;
BEGIN
    IF current_setting('user_service.fold_gmail', true) = 'on' THEN
        local := split_part(e, '@', 1);
        domain := split_part(e, '@', 2);
        IF domain IN ('gmail.com', 'googlemail.com') THEN
            e := replace(split_part(local, '+', 1), '.', '') || '@gmail.com';
        END IF;
    END IF;
    RETURN e;
END $$;

-- Checks the shape of a UserServiceTable item (BEFORE INSERT OR UPDATE):
-- the seed's attributes, keys that agree with them, E.164 phones, known
-- statuses, normalised emails.  Whatever path wrote it.
CREATE FUNCTION user_service.check_item() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    i jsonb := NEW.item;
    pk text := NEW.pk::text;
    sk text := NEW.sk::text;
    user_id text;
    missing text;
BEGIN
    IF pk !~ '^USER#[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN
        PERFORM ddb.invalid_parameter(format('UserServiceTable holds USER#<userId> items (a lower-case uuid), not %s', pk));
    END IF;
    user_id := substr(pk, 6);
    IF sk = 'PROFILE' THEN
        SELECT string_agg(a, ', ') INTO missing
        FROM unnest(ARRAY['userId', 'email', 'firstName', 'lastName', 'status', 'version', 'createdAt', 'updatedAt']) a
        WHERE NOT i ? a;
        IF missing IS NOT NULL THEN
            PERFORM ddb.invalid_parameter(format('user profile %s lacks %s', user_id, missing));
        END IF;
        IF i ->> 'userId' <> user_id THEN
            PERFORM ddb.invalid_parameter(format('user profile %s has userId %s', user_id, i ->> 'userId'));
        END IF;
        IF i ->> 'status' NOT IN ('active', 'suspended', 'deleted') OR jsonb_typeof(i -> 'status') <> 'string' THEN
            PERFORM ddb.invalid_parameter(format('unknown user status %s (active, suspended or deleted)', i -> 'status'));
        END IF;
        IF i ? 'phone' AND (jsonb_typeof(i -> 'phone') <> 'string' OR i ->> 'phone' !~ '^\+[1-9][0-9]{1,14}$') THEN
            PERFORM ddb.invalid_parameter(format('phone %s is not an E.164 number (+ and up to 15 digits)', i -> 'phone'));
        END IF;
        IF jsonb_typeof(i -> 'version') <> 'number' OR (i ->> 'version')::numeric < 1
           OR (i ->> 'version')::numeric <> trunc((i ->> 'version')::numeric) THEN
            PERFORM ddb.invalid_parameter(format('user profile %s: version must be a whole number from 1 on', user_id));
        END IF;
        IF i ? 'GSI1PK' OR i ? 'GSI1SK' THEN
            PERFORM ddb.invalid_parameter('a user profile is never in GSI1 (S10)');
        END IF;
    ELSIF sk ~ '^EMAIL#' THEN
        SELECT string_agg(a, ', ') INTO missing
        FROM unnest(ARRAY['emailId', 'userId', 'email', 'isPrimary', 'isVerified', 'createdAt', 'GSI1PK', 'GSI1SK']) a
        WHERE NOT i ? a;
        IF missing IS NOT NULL THEN
            PERFORM ddb.invalid_parameter(format('email record %s lacks %s', sk, missing));
        END IF;
        IF 'EMAIL#' || (i ->> 'emailId') <> sk OR i ->> 'userId' <> user_id THEN
            PERFORM ddb.invalid_parameter(format('email record %s/%s does not match its emailId and userId', pk, sk));
        END IF;
        -- the Gmail folding setting is the writer's business: only what holds either way is checked
        IF i ->> 'email' <> user_service.lower_email(i ->> 'email') THEN
            PERFORM ddb.invalid_parameter(format('email %L is not normalised (S6)', i ->> 'email'));
        END IF;
        IF i ->> 'GSI1PK' <> 'EMAIL#' || (i ->> 'email') OR i ->> 'GSI1SK' <> pk THEN
            PERFORM ddb.invalid_parameter(format('email record %s: GSI1PK must be EMAIL#<email> and GSI1SK the user''s key', sk));
        END IF;
        IF jsonb_typeof(i -> 'isPrimary') <> 'boolean' OR jsonb_typeof(i -> 'isVerified') <> 'boolean' THEN
            PERFORM ddb.invalid_parameter(format('email record %s: isPrimary and isVerified are booleans', sk));
        END IF;
    ELSE
        PERFORM ddb.invalid_parameter(format('UserServiceTable holds PROFILE and EMAIL#<emailId> items, not %s', sk));
    END IF;
    RETURN NEW;
END $$;

CREATE TRIGGER check_item BEFORE INSERT OR UPDATE ON user_service."UserServiceTable"
    FOR EACH ROW EXECUTE FUNCTION user_service.check_item();

-- S8 at commit, for the user a written item belongs to: with a profile,
-- exactly one primary email, verified, and the profile's email is it;
-- without one, no email records either.  Run by the trigger check_user
-- (ddb.check_at_commit, src/table/commit_checks.c) once per user key.
CREATE FUNCTION user_service.check_user(user_key ddb.ddb_key) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    profile jsonb;
    primaries jsonb[];
    emails integer;
BEGIN
    -- one statement, so one snapshot: the profile and the emails as one committed state shows them
    SELECT (SELECT t.item FROM user_service."UserServiceTable" t
            WHERE t.pk = user_key AND t.sk = 'PROFILE'::ddb.ddb_key),
           count(*), array_agg(e.item) FILTER (WHERE (e.item ->> 'isPrimary')::boolean)
    INTO profile, emails, primaries
    FROM user_service."UserServiceTable" e WHERE e.pk = user_key AND e.sk ^@ 'EMAIL#'::ddb.ddb_key;
    IF profile IS NULL THEN
        IF emails > 0 THEN
            RAISE EXCEPTION USING ERRCODE = 'check_violation',
                MESSAGE = format('S8: %s has email records but no profile', user_key);
        END IF;
        RETURN;
    END IF;
    IF coalesce(cardinality(primaries), 0) <> 1 THEN
        RAISE EXCEPTION USING ERRCODE = 'check_violation',
            MESSAGE = format('S8: user %s must have exactly one primary email, not %s',
                             profile ->> 'userId', coalesce(cardinality(primaries), 0));
    END IF;
    IF NOT (primaries[1] ->> 'isVerified')::boolean THEN
        RAISE EXCEPTION USING ERRCODE = 'check_violation',
            MESSAGE = format('S8: the primary email %s of user %s is not verified',
                             primaries[1] ->> 'email', profile ->> 'userId');
    END IF;
    IF profile ->> 'email' IS DISTINCT FROM primaries[1] ->> 'email' THEN
        RAISE EXCEPTION USING ERRCODE = 'check_violation',
            MESSAGE = format('S8: the profile of user %s names %s, its primary email is %s',
                             profile ->> 'userId', profile ->> 'email', primaries[1] ->> 'email');
    END IF;
END $$;

CREATE TRIGGER check_user AFTER INSERT OR UPDATE OR DELETE ON user_service."UserServiceTable"
    FOR EACH ROW EXECUTE FUNCTION ddb.check_at_commit('UserServiceTable', 'user_service.check_user(ddb.ddb_key)');

-- The key of a user.
CREATE FUNCTION user_service.user_pk(user_id uuid) RETURNS ddb.ddb_key
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN ('USER#' || user_id::text)::ddb.ddb_key;

-- Raises no_data_found for a user that does not exist.
CREATE FUNCTION user_service.require_user(user_id uuid) RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    profile jsonb := ddb.get_item('UserServiceTable', user_service.user_pk(user_id), 'PROFILE');
BEGIN
    IF profile IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'no_data_found', MESSAGE = format('unknown user %s', user_id);
    END IF;
    RETURN profile;
END $$;

-- Writes an email record, turning a taken address into unique_violation with the address named.
CREATE FUNCTION user_service.put_email(item jsonb) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM ddb.put_item('UserServiceTable', item, condition => 'attribute_not_exists(PK)');
EXCEPTION WHEN unique_violation THEN
    RAISE EXCEPTION USING ERRCODE = 'unique_violation',
        MESSAGE = format('S7: email address %s is already in use', item ->> 'email');
END $$;

-- Creates a user with its first email address, verified and primary
-- (catalog decision); returns the user id.
CREATE FUNCTION user_service.create_user(email text, first_name text, last_name text,
                                         phone text DEFAULT NULL,
                                         user_id uuid DEFAULT gen_random_uuid(),
                                         email_id uuid DEFAULT gen_random_uuid(),
                                         at timestamptz DEFAULT now())
RETURNS uuid
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    address text := user_service.normalize_email(email);
    ts text := ddb.iso8601(at);
    pk text := 'USER#' || user_id;
BEGIN
    IF first_name IS NULL OR last_name IS NULL THEN
        PERFORM ddb.invalid_parameter('a user needs a first name and a last name');
    END IF;
    PERFORM ddb.put_item('UserServiceTable',
        jsonb_build_object('PK', pk, 'SK', 'PROFILE', 'userId', user_id, 'email', address,
                           'firstName', first_name, 'lastName', last_name, 'status', 'active',
                           'version', 1, 'createdAt', ts, 'updatedAt', ts)
        || CASE WHEN phone IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('phone', phone) END,
        condition => 'attribute_not_exists(PK)');
    PERFORM user_service.put_email(jsonb_build_object(
        'PK', pk, 'SK', 'EMAIL#' || email_id, 'GSI1PK', 'EMAIL#' || address, 'GSI1SK', pk,
        'emailId', email_id, 'userId', user_id, 'email', address, 'isPrimary', true,
        'isVerified', true, 'verifiedAt', ts, 'createdAt', ts));
    RETURN user_id;
END $$;

-- S1: a user's profile (GetItem PK = USER#id, SK = PROFILE), or NULL.
CREATE FUNCTION user_service.get_user(user_id uuid) RETURNS user_service.user_profile
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN user_service.profile_of(ddb.get_item('UserServiceTable', user_service.user_pk(user_id), 'PROFILE'));

-- S2: a user's email addresses (Query PK = USER#id, SK begins_with EMAIL#).
CREATE FUNCTION user_service.list_emails(user_id uuid) RETURNS SETOF user_service.user_email
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT (user_service.email_of(i)).*
    FROM ddb.query('UserServiceTable', user_service.user_pk(user_id), 'begins_with', 'EMAIL#') i;
END;

-- S3: the user an address belongs to, for login (Query GSI1, GSI1PK = EMAIL#address), or NULL.
CREATE FUNCTION user_service.find_user_by_email(email text) RETURNS uuid
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN (SELECT (i ->> 'userId')::uuid
        FROM ddb.query('UserServiceTable', ('EMAIL#' || user_service.normalize_email(email))::ddb.ddb_key,
                       index_name => 'GSI1') i);

-- S4: is the address taken? (Query GSI1 with Limit 1)
CREATE FUNCTION user_service.email_in_use(email text) RETURNS boolean
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN EXISTS (SELECT FROM ddb.query('UserServiceTable', ('EMAIL#' || user_service.normalize_email(email))::ddb.ddb_key,
                                     index_name => 'GSI1', max_items => 1));

-- S5: the whole user, profile and emails, in one query (PK = USER#id).
CREATE FUNCTION user_service.get_user_items(user_id uuid) RETURNS SETOF jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT i FROM ddb.query('UserServiceTable', user_service.user_pk(user_id)) i;
END;

-- Adds an address to a user, unverified and not primary; returns its email id.
-- S7: an address in use by anyone is refused (unique_violation), also
-- against a concurrent claim.
CREATE FUNCTION user_service.add_email(user_id uuid, email text,
                                       email_id uuid DEFAULT gen_random_uuid(),
                                       at timestamptz DEFAULT now())
RETURNS uuid
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    address text := user_service.normalize_email(email);
    pk text := 'USER#' || user_id;
BEGIN
    PERFORM user_service.require_user(user_id);
    PERFORM user_service.put_email(jsonb_build_object(
        'PK', pk, 'SK', 'EMAIL#' || email_id, 'GSI1PK', 'EMAIL#' || address, 'GSI1SK', pk,
        'emailId', email_id, 'userId', user_id, 'email', address, 'isPrimary', false,
        'isVerified', false, 'createdAt', ddb.iso8601(at)));
    RETURN email_id;
END $$;

-- Marks an address verified.
CREATE FUNCTION user_service.verify_email(user_id uuid, email_id uuid, at timestamptz DEFAULT now())
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM ddb.update_item('UserServiceTable', user_service.user_pk(user_id), ('EMAIL#' || email_id)::ddb.ddb_key,
        'SET isVerified = :true, verifiedAt = :at', condition => 'attribute_exists(PK)',
        vals => jsonb_build_object(':true', true, ':at', ddb.iso8601(at)));
EXCEPTION WHEN SQLSTATE 'YD002' THEN
    RAISE EXCEPTION USING ERRCODE = 'no_data_found',
        MESSAGE = format('user %s has no email %s', user_id, email_id);
END $$;

-- S8: makes a verified address the user's primary one: the seed's
-- transaction of three updates (old off, new on if verified, profile email).
-- The profile's row lock is taken first, so that swaps of one user run one
-- after the other, each reading the primary its predecessor left.
CREATE FUNCTION user_service.set_primary_email(user_id uuid, email_id uuid, at timestamptz DEFAULT now())
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    pk text := 'USER#' || user_id;
    new_item jsonb;
    old_item jsonb;
BEGIN
    PERFORM user_service.require_user(user_id);
    PERFORM FROM user_service."UserServiceTable" t
    WHERE t.pk = user_service.user_pk(user_id) AND t.sk = 'PROFILE'::ddb.ddb_key FOR UPDATE;
    new_item := ddb.get_item('UserServiceTable', user_service.user_pk(user_id), ('EMAIL#' || email_id)::ddb.ddb_key);
    IF new_item IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'no_data_found', MESSAGE = format('user %s has no email %s', user_id, email_id);
    END IF;
    IF NOT (new_item ->> 'isVerified')::boolean THEN
        RAISE EXCEPTION USING ERRCODE = 'YD002', MESSAGE = format('S8: email %s is not verified', new_item ->> 'email'),
            HINT = 'Verify it with user_service.verify_email first.';
    END IF;
    IF (new_item ->> 'isPrimary')::boolean THEN
        RETURN;
    END IF;
    SELECT i INTO old_item FROM ddb.query('UserServiceTable', user_service.user_pk(user_id), 'begins_with', 'EMAIL#',
                                          filter => 'isPrimary = :true', vals => '{":true": true}') i;
    -- the conditions guard against a writer that does not take the profile's lock (ddb.execute)
    PERFORM ddb.execute('TransactWriteItems', jsonb_build_object('TransactItems', jsonb_build_array(
        jsonb_build_object('Update', jsonb_build_object('TableName', 'UserServiceTable',
            'Key', jsonb_build_object('PK', jsonb_build_object('S', pk), 'SK', jsonb_build_object('S', old_item ->> 'SK')),
            'UpdateExpression', 'SET isPrimary = :false', 'ConditionExpression', 'isPrimary = :true',
            'ExpressionAttributeValues', '{":false": {"BOOL": false}, ":true": {"BOOL": true}}'::jsonb)),
        jsonb_build_object('Update', jsonb_build_object('TableName', 'UserServiceTable',
            'Key', jsonb_build_object('PK', jsonb_build_object('S', pk), 'SK', jsonb_build_object('S', 'EMAIL#' || email_id)),
            'UpdateExpression', 'SET isPrimary = :true', 'ConditionExpression', 'isVerified = :true',
            'ExpressionAttributeValues', '{":true": {"BOOL": true}}'::jsonb)),
        jsonb_build_object('Update', jsonb_build_object('TableName', 'UserServiceTable',
            'Key', jsonb_build_object('PK', jsonb_build_object('S', pk), 'SK', jsonb_build_object('S', 'PROFILE')),
            'UpdateExpression', 'SET email = :newEmail, updatedAt = :now',
            'ExpressionAttributeValues', jsonb_build_object(
                ':newEmail', jsonb_build_object('S', new_item ->> 'email'),
                ':now', jsonb_build_object('S', ddb.iso8601(at))))))));
END $$;

-- Deletes an address of a user; the primary one cannot be deleted (S8).
CREATE FUNCTION user_service.delete_email(user_id uuid, email_id uuid) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    -- an absent record fails the condition too: the handler tells the two apart
    PERFORM ddb.delete_item('UserServiceTable', user_service.user_pk(user_id), ('EMAIL#' || email_id)::ddb.ddb_key,
                            condition => 'isPrimary = :false', vals => '{":false": false}');
EXCEPTION WHEN SQLSTATE 'YD002' THEN
    IF ddb.get_item('UserServiceTable', user_service.user_pk(user_id), ('EMAIL#' || email_id)::ddb.ddb_key) IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'no_data_found', MESSAGE = format('user %s has no email %s', user_id, email_id);
    END IF;
    RAISE EXCEPTION USING ERRCODE = 'YD002', MESSAGE = 'S8: the primary email cannot be deleted',
        HINT = 'Make another verified address primary first (user_service.set_primary_email).';
END $$;

-- S9: updates a profile if it is still at expected_version; returns the new
-- version.  NULL arguments leave their attribute as it is.  A stale version
-- fails with the conditional-check error (YD002) and changes nothing.
CREATE FUNCTION user_service.update_profile(user_id uuid, expected_version integer,
                                            first_name text DEFAULT NULL, last_name text DEFAULT NULL,
                                            phone text DEFAULT NULL, status text DEFAULT NULL,
                                            at timestamptz DEFAULT now())
RETURNS integer
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    sets text := 'version = version + :one, updatedAt = :now';
    vals jsonb := jsonb_build_object(':one', 1, ':now', ddb.iso8601(at), ':v', expected_version);
    names jsonb := NULL;
    updated jsonb;
    current_version integer;
BEGIN
    IF first_name IS NOT NULL THEN
        sets := sets || ', firstName = :fn';
        vals := vals || jsonb_build_object(':fn', first_name);
    END IF;
    IF last_name IS NOT NULL THEN
        sets := sets || ', lastName = :ln';
        vals := vals || jsonb_build_object(':ln', last_name);
    END IF;
    IF phone IS NOT NULL THEN
        sets := sets || ', phone = :ph';
        vals := vals || jsonb_build_object(':ph', phone);
    END IF;
    IF status IS NOT NULL THEN
        sets := sets || ', #s = :st';
        vals := vals || jsonb_build_object(':st', status);
        names := '{"#s": "status"}';
    END IF;
    updated := ddb.update_item('UserServiceTable', user_service.user_pk(user_id), 'PROFILE', 'SET ' || sets,
                               condition => 'version = :v', names => names, vals => vals,
                               return_values => 'UPDATED_NEW');
    RETURN (updated ->> 'version')::integer;
EXCEPTION WHEN SQLSTATE 'YD002' THEN
    current_version := (user_service.require_user(user_id) ->> 'version')::integer;
    RAISE EXCEPTION USING ERRCODE = 'YD002',
        MESSAGE = format('S9: user %s is at version %s, not %s', user_id, current_version, expected_version),
        HINT = 'Read the profile again and retry with its version.';
END $$;

-- The seed's example layout as data: user abc-123 (here a uuid that reads
-- like it) with its primary address and a second verified one.  Returns the
-- user id.  For the demo and the docs.
CREATE FUNCTION user_service.load_example_data() RETURNS uuid
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    jane uuid := 'abc12300-0000-4000-8000-000000000123';
BEGIN
    PERFORM user_service.create_user('Jane.Doe@Example.com', 'Jane', 'Doe', '+14155550123', user_id => jane,
                                     email_id => 'e0000000-0000-4000-8000-000000000001',
                                     at => '2026-03-01T09:00:00Z');
    PERFORM user_service.verify_email(jane, user_service.add_email(jane, 'jane@work.example.com',
                                                                   email_id => 'e0000000-0000-4000-8000-000000000002',
                                                                   at => '2026-03-02T09:00:00Z'),
                                      at => '2026-03-02T09:05:00Z');
    RETURN jane;
END $$;
