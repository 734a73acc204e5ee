
-- ===========================================================================
-- Model underwriting (../shared/catalog.md W1-W18; docs/models/underwriting.md)
--
-- One table per environment, "<environment>-underwriting" in schema
-- underwriting (PK/SK, GSI1, GSI2, TTL on ttl), made by
-- underwriting.create_environment: prod and test side by side are one call
-- each.  Users' float profiles (versioned), temporary profiles, rule
-- outcomes, evaluation results, historical evaluations; rulebooks and their
-- audit trail, which a trigger writes on every rulebook change, in the same
-- transaction, whatever path changed it.  Amounts are integer cents.
-- ===========================================================================

CREATE SCHEMA underwriting;
COMMENT ON SCHEMA underwriting IS 'The underwriting model (ddb_model): float profiles, evaluations, rulebooks, per environment';

-- How long rule outcomes and evaluation results live: 32 days.
CREATE FUNCTION underwriting.result_ttl_days() RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN 32;

-- The DynamoDB name of an environment's table.
CREATE FUNCTION underwriting.table_name(environment text) RETURNS text
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF environment IS NULL OR environment !~ '^[a-z0-9][a-z0-9_.-]{0,39}$' THEN
        PERFORM ddb.invalid_parameter(format('an environment is 1 to 40 lower-case letters, digits, _ . -, not %L', environment));
    END IF;
    RETURN environment || '-underwriting';
END $$;

-- An RFC 3339 timestamp of the items (2024-02-10T14:30:00Z) as a timestamptz; raises for other text.
CREATE FUNCTION underwriting.parse_time(ts text, what text) RETURNS timestamptz
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    -- to the second, as the seed writes them: keys then sort as time does
    IF ts IS NULL OR ts !~ '^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$' THEN
        PERFORM ddb.invalid_parameter(format('%s must be an RFC 3339 UTC timestamp like 2024-02-10T14:30:00Z, not %s',
                                             what, coalesce(ts, 'null')));
    END IF;
    RETURN ts::timestamptz;
EXCEPTION WHEN datetime_field_overflow OR invalid_datetime_format THEN
    PERFORM ddb.invalid_parameter(format('%s is not a valid timestamp: %s', what, ts));
END $$;

-- A timestamp as the items write it: RFC 3339 in UTC, to the second.
CREATE FUNCTION underwriting.rfc3339(ts timestamptz) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
RETURN to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"');

-- Raises unless every amount in the JSON paths given is a whole number of cents.
CREATE FUNCTION underwriting.check_cents(item jsonb, what text, VARIADIC paths text[]) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    bad jsonb;
BEGIN
    SELECT v INTO bad FROM unnest(paths) p, jsonb_path_query(item, p::jsonpath) v
    WHERE CASE WHEN jsonb_typeof(v) = 'number' THEN v::text::numeric <> trunc(v::text::numeric) ELSE true END LIMIT 1;
    IF bad IS NOT NULL THEN
        PERFORM ddb.invalid_parameter(format('%s: amounts are whole numbers of cents, not %s', what, bad));
    END IF;
END $$;

-- Checks the shape of an underwriting item (BEFORE INSERT OR UPDATE),
-- whatever path wrote it: item_type, keys and attributes that agree, TTLs
-- of the rules (32 days for rule outcomes and results, expires_on for
-- temporary profiles, none for the permanent items), amounts in cents.
CREATE FUNCTION underwriting.check_item() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    i jsonb;
    pk text;
    sk text;
    what text;
    kind text;
    want_ttl bigint;
BEGIN
    -- W17: the audit trail is written by its trigger only, and never changed
    -- (deletes reach this function only for audit items: check_audit_delete)
    IF TG_OP = 'DELETE' THEN
        PERFORM ddb.invalid_parameter('the rulebook audit trail cannot be deleted (W17)');
    END IF;
    i := NEW.item;
    pk := NEW.pk::text;
    sk := NEW.sk::text;
    what := format('%s %s', pk, sk);
    IF pk = 'RULEBOOKCONFIGUPDATE' AND (TG_OP = 'UPDATE' OR pg_trigger_depth() < 2) THEN
        PERFORM ddb.invalid_parameter('the rulebook audit trail is written by the extension on every rulebook change, and never changed (W17)');
    END IF;
    kind := CASE
        WHEN pk ~ '^USER#' AND sk ~ '^PROFILE#' THEN 'float_profile'
        WHEN pk ~ '^USER#' AND sk ~ '^TEMP_FLOAT_PROFILE#EXPIRES#' THEN 'temp_float_profile'
        WHEN pk ~ '^USER#' AND sk ~ '^RULE_OUTCOME#' THEN 'rule_outcome'
        WHEN pk ~ '^USER#' AND sk ~ '^EVAL_RESULTS#' THEN 'evaluation_result'
        WHEN pk ~ '^USER#' AND sk ~ '^HISTORICAL_EVALUATION#' THEN 'historical_evaluation'
        WHEN pk = 'RULEBOOK' AND sk ~ '^RULEBOOK#' THEN 'rulebook'
        WHEN pk = 'RULEBOOKCONFIGUPDATE' AND sk ~ '^USER#' THEN 'rulebook_update'
    END;
    IF kind IS NULL THEN
        PERFORM ddb.invalid_parameter(format('%s is no underwriting item (see docs/models/underwriting.md)', what));
    END IF;
    IF i ->> 'item_type' IS DISTINCT FROM kind THEN
        PERFORM ddb.invalid_parameter(format('%s: item_type must be %s', what, kind));
    END IF;
    IF pk ~ '^USER#' AND i ->> 'user_id' IS DISTINCT FROM substr(pk, 6) THEN
        PERFORM ddb.invalid_parameter(format('%s: user_id must be %s', what, substr(pk, 6)));
    END IF;
    CASE kind
        WHEN 'float_profile' THEN
            IF 'PROFILE#' || (i ->> 'created_on') IS DISTINCT FROM sk THEN
                PERFORM ddb.invalid_parameter(format('%s: created_on must be %s', what, substr(sk, 9)));
            END IF;
            PERFORM underwriting.parse_time(i ->> 'created_on', 'created_on');
        WHEN 'temp_float_profile' THEN
            IF 'TEMP_FLOAT_PROFILE#EXPIRES#' || (i ->> 'expires_on') IS DISTINCT FROM sk THEN
                PERFORM ddb.invalid_parameter(format('%s: expires_on must be %s', what, substr(sk, 28)));
            END IF;
            want_ttl := floor(date_part('epoch', underwriting.parse_time(i ->> 'expires_on', 'expires_on')))::bigint;
        WHEN 'rule_outcome' THEN
            IF 'RULE_OUTCOME#' || (i ->> 'rule_name') IS DISTINCT FROM sk OR jsonb_typeof(i -> 'loan') IS DISTINCT FROM 'number' THEN
                PERFORM ddb.invalid_parameter(format('%s: needs rule_name matching its key and loan', what));
            END IF;
            want_ttl := floor(date_part('epoch', underwriting.parse_time(i ->> 'updated_date', 'updated_date')))::bigint
                        + underwriting.result_ttl_days() * 86400;
        WHEN 'evaluation_result' THEN
            IF NOT (i ? 'item_id' AND i ? 'account_id' AND i ? 'created_date' AND i ? 'result_id')
               OR format('EVAL_RESULTS#%s#%s#%s', i ->> 'item_id', i ->> 'account_id', i ->> 'created_date') <> sk
               OR i ->> 'GSI1PK' IS DISTINCT FROM pk OR i ->> 'GSI1SK' IS DISTINCT FROM 'EVAL_RESULTS#' || (i ->> 'result_id') THEN
                PERFORM ddb.invalid_parameter(format('%s: item_id, account_id, created_date and result_id must match its keys', what));
            END IF;
            want_ttl := floor(date_part('epoch', underwriting.parse_time(i ->> 'created_date', 'created_date')))::bigint
                        + underwriting.result_ttl_days() * 86400;
        WHEN 'historical_evaluation' THEN
            IF NOT (i ? 'item_id' AND i ? 'account_id' AND i ? 'created_date' AND i ? 'result_id')
               OR format('HISTORICAL_EVALUATION#%s#%s#%s', i ->> 'item_id', i ->> 'account_id', i ->> 'created_date') <> sk THEN
                PERFORM ddb.invalid_parameter(format('%s: result_id, item_id, account_id and created_date must match its key', what));
            END IF;
            PERFORM underwriting.parse_time(i ->> 'created_date', 'created_date');
        WHEN 'rulebook' THEN
            IF 'RULEBOOK#' || (i ->> 'rulebook_id') IS DISTINCT FROM sk OR (i ->> 'type') IS DISTINCT FROM 'floats'
               AND (i ->> 'type') IS DISTINCT FROM 'loan'
               OR i ->> 'GSI1PK' IS DISTINCT FROM 'RULEBOOK_TYPE#' || (i ->> 'type') OR i ->> 'GSI1SK' IS DISTINCT FROM sk THEN
                PERFORM ddb.invalid_parameter(format('%s: needs rulebook_id matching its key, type floats or loan, and GSI1 keys', what));
            END IF;
            IF jsonb_typeof(coalesce(i -> 'rules', '[]')) <> 'array'
               OR EXISTS (SELECT FROM unnest(ARRAY['priority', 'apply_to']) a
                          WHERE i ? a AND (jsonb_typeof(i -> a) <> 'number' OR (i ->> a)::numeric <> trunc((i ->> a)::numeric))) THEN
                PERFORM ddb.invalid_parameter(format('%s: rules is a list, priority and apply_to whole numbers', what));
            END IF;
        ELSE
            NULL;
    END CASE;
    IF want_ttl IS NULL AND i ? 'ttl' THEN
        PERFORM ddb.invalid_parameter(format('%s: a %s is kept for good and has no ttl', what, kind));
    END IF;
    IF want_ttl IS NOT NULL AND (jsonb_typeof(i -> 'ttl') IS DISTINCT FROM 'number' OR (i ->> 'ttl')::numeric <> want_ttl) THEN
        PERFORM ddb.invalid_parameter(format('%s: ttl must be %s', what, want_ttl));
    END IF;
    PERFORM underwriting.check_cents(i, what, '$.floats[*].amount', '$.loans[*].amount_cents', '$.amount', '$.loan',
                                     '$.float_results.amount', '$.loan_results.amount',
                                     '$.float_results.results[*].result', '$.loan_results.results[*].result',
                                     '$.cfi_state.current_limit', '$.cfi_state.account_balance', '$.cfi_state.highest_float');
    RETURN NEW;
END $$;

-- W17: writes the audit item of a rulebook change (AFTER a write of a
-- RULEBOOK item): who (the setting underwriting.update_user, else the
-- session user), when, and a snapshot of every rulebook, in the same
-- transaction.
CREATE FUNCTION underwriting.audit_rulebooks() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    tbl text := TG_ARGV[0];
    who text := coalesce(nullif(current_setting('underwriting.update_user', true), ''), session_user::text);
    at timestamptz;
    snapshot jsonb;
BEGIN
    -- (its triggers fire for rulebook items only) rulebook changes of one environment are audited one transaction at a
    -- time, so that each snapshot holds every change committed before it
    PERFORM ddb.lock_table_audit(tbl);
    at := clock_timestamp();
    SELECT coalesce(jsonb_agg(i ORDER BY i ->> 'rulebook_id'), '[]') INTO snapshot
    FROM ddb.query(tbl, 'RULEBOOK') i;
    LOOP
        BEGIN
            PERFORM ddb.put_item(tbl, jsonb_build_object('PK', 'RULEBOOKCONFIGUPDATE',
                'SK', 'USER#' || to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') || '#' || who,
                'item_type', 'rulebook_update', 'update_user', who, 'update_time', underwriting.rfc3339(at),
                'rulebooks', snapshot), condition => 'attribute_not_exists(SK)');
            RETURN NULL;
        EXCEPTION WHEN SQLSTATE 'YD002' THEN
            at := at + interval '1 microsecond';   -- two changes in one microsecond: the next one
        END;
    END LOOP;
END $$;

-- Creates the table of an environment, "<environment>-underwriting", with
-- GSI1, GSI2, TTL on ttl, the item checks, the rulebook audit, and typed
-- views <environment>_profiles, _evaluations and _rulebooks.
CREATE FUNCTION underwriting.create_environment(environment text) RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    tbl text := underwriting.table_name(environment);
BEGIN
    PERFORM ddb.create_table(tbl, 'PK', 'S', 'SK', 'S', schema_name => 'underwriting', ttl_attribute => 'ttl');
    PERFORM ddb.create_index(tbl, 'GSI1', 'GSI1PK', 'S', 'GSI1SK', 'S');
    PERFORM ddb.create_index(tbl, 'GSI2', 'GSI2PK', 'S', 'GSI2SK', 'S');
    -- the audit's triggers fire for the rows they concern only (WHEN), not for every profile and result
    EXECUTE format('CREATE TRIGGER check_item BEFORE INSERT OR UPDATE ON underwriting.%I '
                   'FOR EACH ROW EXECUTE FUNCTION underwriting.check_item()', ddb.relation_name(tbl));
    EXECUTE format('CREATE TRIGGER check_audit_delete BEFORE DELETE ON underwriting.%I '
                   'FOR EACH ROW WHEN (OLD.pk::text = ''RULEBOOKCONFIGUPDATE'') EXECUTE FUNCTION underwriting.check_item()',
                   ddb.relation_name(tbl));
    EXECUTE format('CREATE TRIGGER audit_rulebooks AFTER INSERT OR UPDATE ON underwriting.%I '
                   'FOR EACH ROW WHEN (NEW.pk::text = ''RULEBOOK'') EXECUTE FUNCTION underwriting.audit_rulebooks(%L)',
                   ddb.relation_name(tbl), tbl);
    EXECUTE format('CREATE TRIGGER audit_rulebook_deletes AFTER DELETE ON underwriting.%I '
                   'FOR EACH ROW WHEN (OLD.pk::text = ''RULEBOOK'') EXECUTE FUNCTION underwriting.audit_rulebooks(%L)',
                   ddb.relation_name(tbl), tbl);
    -- a result id names one evaluation result of a user (W7)
    EXECUTE format($i$CREATE UNIQUE INDEX %I ON underwriting.%I (pk, (item OPERATOR(pg_catalog.->>) 'GSI1SK'))
                      WHERE item OPERATOR(pg_catalog.->>) 'item_type' OPERATOR(pg_catalog.=) 'evaluation_result'$i$,
                   ddb.relation_name(tbl || '$result_id'), ddb.relation_name(tbl));
    -- typed views of the environment, expired items left out (W18)
    EXECUTE format($v$CREATE VIEW underwriting.%I AS
        SELECT substr(t.pk::text, 6) AS user_id, t.item ->> 'item_type' AS item_type,
               coalesce(t.item ->> 'created_on', t.item ->> 'expires_on') AS created_on, t.item ->> 'expires_on' AS expires_on,
               (t.item ->> 'is_float_enabled')::boolean AS is_float_enabled, (t.item ->> 'is_loan_enabled')::boolean AS is_loan_enabled,
               t.item -> 'floats' AS floats, t.item -> 'loans' AS loans, t.item ->> 'reason' AS reason
        FROM underwriting.%I t
        WHERE (t.sk OPERATOR(pg_catalog.^@) 'PROFILE#'::ddb.ddb_key OR t.sk OPERATOR(pg_catalog.^@) 'TEMP_FLOAT_PROFILE#'::ddb.ddb_key)
          AND ddb.ttl_visible(t.expires_at)$v$, environment || '_profiles', ddb.relation_name(tbl));
    EXECUTE format($v$CREATE VIEW underwriting.%I AS
        SELECT t.item ->> 'result_id' AS result_id, substr(t.pk::text, 6) AS user_id, t.item ->> 'item_type' AS item_type,
               t.item ->> 'item_id' AS item_id, t.item ->> 'account_id' AS account_id,
               (t.item -> 'float_results' ->> 'approved')::boolean AS float_approved,
               (t.item -> 'float_results' ->> 'amount')::bigint AS float_amount_cents,
               (t.item -> 'loan_results' ->> 'approved')::boolean AS loan_approved,
               (t.item ->> 'amount')::bigint AS taken_amount_cents, (t.item ->> 'created_date')::timestamptz AS created_date
        FROM underwriting.%I t
        WHERE (t.sk OPERATOR(pg_catalog.^@) 'EVAL_RESULTS#'::ddb.ddb_key OR t.sk OPERATOR(pg_catalog.^@) 'HISTORICAL_EVALUATION#'::ddb.ddb_key)
          AND ddb.ttl_visible(t.expires_at)$v$, environment || '_evaluations', ddb.relation_name(tbl));
    EXECUTE format($v$CREATE VIEW underwriting.%I AS
        SELECT t.item ->> 'rulebook_id' AS rulebook_id, t.item ->> 'rulebook_name' AS rulebook_name, t.item ->> 'type' AS type,
               (t.item ->> 'priority')::integer AS priority, (t.item ->> 'apply_to')::integer AS apply_to,
               (t.item ->> 'superseding')::boolean AS superseding, jsonb_array_length(t.item -> 'rules') AS rules,
               t.item ->> 'last_updated' AS last_updated
        FROM underwriting.%I t WHERE t.pk OPERATOR(pg_catalog.=) 'RULEBOOK'::ddb.ddb_key$v$,
        environment || '_rulebooks', ddb.relation_name(tbl));
    RETURN tbl;
END $$;

-- Drops an environment: its views, then its table (ddb.delete_table).
CREATE FUNCTION underwriting.drop_environment(environment text) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    tbl text := underwriting.table_name(environment);
BEGIN
    EXECUTE format('DROP VIEW IF EXISTS underwriting.%I, underwriting.%I, underwriting.%I',
                   environment || '_profiles', environment || '_evaluations', environment || '_rulebooks');
    PERFORM ddb.delete_table(tbl);
END $$;

-- The partition key of a user.
CREATE FUNCTION underwriting.user_pk(user_id text) RETURNS ddb.ddb_key
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF user_id IS NULL OR user_id !~ '^[^#\s]{1,200}$' THEN
        PERFORM ddb.invalid_parameter(format('a user id is 1 to 200 characters without # or spaces, not %L', user_id));
    END IF;
    RETURN ('USER#' || user_id)::ddb.ddb_key;
END $$;

-- Writes a new version of a user's float profile (settings: is_float_enabled,
-- is_loan_enabled, cfi_enabled, floats, loans); returns its created_on.
CREATE FUNCTION underwriting.put_float_profile(environment text, user_id text, settings jsonb,
                                               reason text DEFAULT NULL, notes text DEFAULT NULL,
                                               created_on timestamptz DEFAULT now())
RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    created text := underwriting.rfc3339(created_on);
BEGIN
    PERFORM ddb.put_item(underwriting.table_name(environment), coalesce(settings, '{}') || jsonb_build_object(
        'PK', underwriting.user_pk(user_id)::text, 'SK', 'PROFILE#' || created, 'item_type', 'float_profile',
        'user_id', user_id, 'created_on', created)
        || jsonb_strip_nulls(jsonb_build_object('reason', reason, 'notes', notes)),
        condition => 'attribute_not_exists(SK)');
    RETURN created;
EXCEPTION WHEN SQLSTATE 'YD002' THEN
    RAISE EXCEPTION USING ERRCODE = 'unique_violation',
        MESSAGE = format('user %s already has a profile created at %s', user_id, created);
END $$;

-- W1: a user's latest float profile (begins_with PROFILE#, descending, Limit 1), or NULL.
CREATE FUNCTION underwriting.latest_profile(environment text, user_id text) RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN (SELECT i FROM ddb.query(underwriting.table_name(environment), underwriting.user_pk(user_id), 'begins_with',
                                'PROFILE#', ascending => false, max_items => 1) i);

-- W2: a user's profile history, oldest first.
CREATE FUNCTION underwriting.profile_history(environment text, user_id text) RETURNS SETOF jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT i FROM ddb.query(underwriting.table_name(environment), underwriting.user_pk(user_id), 'begins_with', 'PROFILE#') i;
END;

-- Writes a temporary float profile that lasts until expires_on (its ttl).
CREATE FUNCTION underwriting.put_temporary_profile(environment text, user_id text, expires_on timestamptz,
                                                   settings jsonb, reason text DEFAULT NULL,
                                                   created_on timestamptz DEFAULT now())
RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    expires text := underwriting.rfc3339(expires_on);
BEGIN
    PERFORM ddb.put_item(underwriting.table_name(environment), coalesce(settings, '{}') || jsonb_build_object(
        'PK', underwriting.user_pk(user_id)::text, 'SK', 'TEMP_FLOAT_PROFILE#EXPIRES#' || expires,
        'item_type', 'temp_float_profile', 'user_id', user_id, 'created_on', underwriting.rfc3339(created_on),
        'expires_on', expires, 'ttl', floor(date_part('epoch', expires::timestamptz))::bigint)
        || jsonb_strip_nulls(jsonb_build_object('reason', reason)));
    RETURN expires;
END $$;

-- W3: a user's active temporary profiles: SK > TEMP_FLOAT_PROFILE#EXPIRES#<now>,
-- bounded to that prefix so that no other kind of item comes with them.
CREATE FUNCTION underwriting.active_temporary_profiles(environment text, user_id text) RETURNS SETOF jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT i FROM ddb.query(underwriting.table_name(environment), underwriting.user_pk(user_id), 'between',
                            ('TEMP_FLOAT_PROFILE#EXPIRES#' || underwriting.rfc3339(now()))::ddb.ddb_key,
                            ddb.prefix_upper_bound('TEMP_FLOAT_PROFILE#EXPIRES#')) i
    WHERE (i ->> 'SK')::ddb.ddb_key > ('TEMP_FLOAT_PROFILE#EXPIRES#' || underwriting.rfc3339(now()))::ddb.ddb_key;
END;

-- W4: all of a user's temporary profiles that have not expired out of reads (W18).
CREATE FUNCTION underwriting.all_temporary_profiles(environment text, user_id text) RETURNS SETOF jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT i FROM ddb.query(underwriting.table_name(environment), underwriting.user_pk(user_id), 'begins_with',
                            'TEMP_FLOAT_PROFILE#') i;
END;

-- W15: the profile in effect: the latest float profile with the settings
-- of the active temporary profile created last laid over it (a temporary
-- profile overrides what it sets, floats say, and leaves the rest).
CREATE FUNCTION underwriting.effective_profile(environment text, user_id text) RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN (SELECT CASE WHEN latest IS NULL AND temp IS NULL THEN NULL
                    ELSE coalesce(latest, '{}') || coalesce(temp, '{}') END
        FROM (SELECT underwriting.latest_profile(environment, user_id) AS latest,
                     (SELECT i FROM underwriting.active_temporary_profiles(environment, user_id) i
                      ORDER BY i ->> 'created_on' COLLATE "C" DESC, (i ->> 'SK')::ddb.ddb_key DESC LIMIT 1) AS temp) p);

-- Writes the outcome of one rule for a user (ttl: updated_date + 32 days).
CREATE FUNCTION underwriting.put_rule_outcome(environment text, user_id text, rule_name text, loan integer,
                                              error boolean DEFAULT false, features jsonb DEFAULT '{}',
                                              updated_date timestamptz DEFAULT now())
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    updated text := underwriting.rfc3339(updated_date);
BEGIN
    PERFORM ddb.put_item(underwriting.table_name(environment), jsonb_build_object(
        'PK', underwriting.user_pk(user_id)::text, 'SK', 'RULE_OUTCOME#' || rule_name, 'item_type', 'rule_outcome',
        'user_id', user_id, 'rule_name', rule_name, 'loan', loan, 'error', error, 'features', coalesce(features, '{}'),
        'updated_date', updated,
        'ttl', floor(date_part('epoch', updated::timestamptz))::bigint + underwriting.result_ttl_days() * 86400));
END $$;

-- W5: every unexpired rule outcome of a user, by rule name.
CREATE FUNCTION underwriting.rule_outcomes(environment text, user_id text) RETURNS SETOF jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT i FROM ddb.query(underwriting.table_name(environment), underwriting.user_pk(user_id), 'begins_with',
                            'RULE_OUTCOME#') i;
END;

-- Writes an evaluation result (result: float_results, loan_results,
-- cfi_state; ttl: created_date + 32 days); returns its result_id.
CREATE FUNCTION underwriting.put_evaluation_result(environment text, user_id text, item_id text, account_id text,
                                                   result jsonb, created_date timestamptz DEFAULT now(),
                                                   result_id text DEFAULT NULL)
RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    created text := underwriting.rfc3339(created_date);
    id text := coalesce(result_id, floor(date_part('epoch', created_date))::bigint || '_' || gen_random_uuid());
BEGIN
    IF item_id IS NULL OR account_id IS NULL OR item_id !~ '^[^#\s]+$' OR account_id !~ '^[^#\s]+$' THEN
        PERFORM ddb.invalid_parameter('item and account ids are words without # or spaces');
    END IF;
    PERFORM ddb.put_item(underwriting.table_name(environment), coalesce(result, '{}') || jsonb_build_object(
        'PK', underwriting.user_pk(user_id)::text,
        'SK', format('EVAL_RESULTS#%s#%s#%s', item_id, account_id, created),
        'GSI1PK', underwriting.user_pk(user_id)::text, 'GSI1SK', 'EVAL_RESULTS#' || id,
        'item_type', 'evaluation_result', 'result_id', id, 'user_id', user_id, 'item_id', item_id,
        'account_id', account_id, 'created_date', created,
        'ttl', floor(date_part('epoch', created::timestamptz))::bigint + underwriting.result_ttl_days() * 86400));
    RETURN id;
END $$;

-- W6: the latest evaluation result of a user for one item and account
-- (descending, Limit 1); the segment-aware prefix keeps item-1 from
-- matching item-10.
CREATE FUNCTION underwriting.latest_evaluation(environment text, user_id text, item_id text, account_id text)
RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN (SELECT i FROM ddb.query(underwriting.table_name(environment), underwriting.user_pk(user_id), 'under',
                                ddb.key('EVAL_RESULTS', item_id, account_id), ascending => false, max_items => 1) i);

-- W7: an evaluation result by its result id (GSI1), or NULL.
CREATE FUNCTION underwriting.evaluation_by_id(environment text, user_id text, result_id text) RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN (SELECT ddb.get_item(underwriting.table_name(environment), (i ->> 'PK')::ddb.ddb_key, (i ->> 'SK')::ddb.ddb_key)
        FROM ddb.query(underwriting.table_name(environment), underwriting.user_pk(user_id), '=',
                       ('EVAL_RESULTS#' || result_id)::ddb.ddb_key, index_name => 'GSI1', max_items => 1) i);

-- W8: a user's unexpired evaluation results (ttl > now), the newest n.
CREATE FUNCTION underwriting.recent_results(environment text, user_id text, n integer DEFAULT 10) RETURNS SETOF jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT i FROM ddb.query(underwriting.table_name(environment), underwriting.user_pk(user_id), 'begins_with',
                            'EVAL_RESULTS#', filter => '#t > :now', names => '{"#t": "ttl"}',
                            vals => jsonb_build_object(':now', floor(date_part('epoch', now()))::bigint)) i
    ORDER BY i ->> 'created_date' COLLATE "C" DESC LIMIT n;
END;

-- W16: a float or loan was taken: records a HistoricalEvaluation from the
-- evaluation result, kept for good (no ttl); returns its sort key.
CREATE FUNCTION underwriting.take_float(environment text, user_id text, result_id text, amount bigint,
                                        float_id text DEFAULT '', loan_id text DEFAULT '')
RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    result jsonb := underwriting.evaluation_by_id(environment, user_id, result_id);
    sk text;
BEGIN
    IF result IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'no_data_found',
            MESSAGE = format('user %s has no evaluation result %s (or it expired)', user_id, result_id);
    END IF;
    sk := format('HISTORICAL_EVALUATION#%s#%s#%s', result ->> 'item_id', result ->> 'account_id', result ->> 'created_date');
    PERFORM ddb.put_item(underwriting.table_name(environment), jsonb_build_object(
        'PK', result ->> 'PK', 'SK', sk, 'item_type', 'historical_evaluation', 'result_id', result_id,
        'user_id', user_id, 'item_id', result ->> 'item_id', 'account_id', result ->> 'account_id',
        'amount', amount, 'float_id', float_id, 'loan_id', loan_id, 'created_date', result ->> 'created_date')
        || jsonb_strip_nulls(jsonb_build_object('float_results', result -> 'float_results',
                                                'loan_results', result -> 'loan_results',
                                                'cfi_state', result -> 'cfi_state')),
        condition => 'attribute_not_exists(SK)');
    RETURN sk;
EXCEPTION WHEN SQLSTATE 'YD002' THEN
    RAISE EXCEPTION USING ERRCODE = 'unique_violation',
        MESSAGE = format('evaluation %s of user %s was already taken (%s)', result_id, user_id, sk);
END $$;

-- W9: a historical evaluation by its key, or NULL.
CREATE FUNCTION underwriting.historical_evaluation(environment text, user_id text, item_id text, account_id text,
                                                   created_date text)
RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN ddb.get_item(underwriting.table_name(environment), underwriting.user_pk(user_id),
                    format('HISTORICAL_EVALUATION#%s#%s#%s', item_id, account_id, created_date)::ddb.ddb_key);

-- W10: all historical evaluations of a user.
CREATE FUNCTION underwriting.historical_evaluations(environment text, user_id text) RETURNS SETOF jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT i FROM ddb.query(underwriting.table_name(environment), underwriting.user_pk(user_id), 'begins_with',
                            'HISTORICAL_EVALUATION#') i;
END;

-- Creates or replaces a rulebook (rulebook_id, rulebook_name, type, rules,
-- apply_to, priority, superseding, ab_group); the audit item follows (W17).
CREATE FUNCTION underwriting.put_rulebook(environment text, rulebook jsonb, update_user text DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    previous text := current_setting('underwriting.update_user', true);
BEGIN
    -- the audit trigger reads who from the setting: set for this write only
    PERFORM set_config('underwriting.update_user', coalesce(update_user, previous, ''), true);
    PERFORM ddb.put_item(underwriting.table_name(environment), rulebook || jsonb_build_object(
        'PK', 'RULEBOOK', 'SK', 'RULEBOOK#' || (rulebook ->> 'rulebook_id'),
        'GSI1PK', 'RULEBOOK_TYPE#' || (rulebook ->> 'type'), 'GSI1SK', 'RULEBOOK#' || (rulebook ->> 'rulebook_id'),
        'item_type', 'rulebook', 'last_updated', underwriting.rfc3339(now())));
    PERFORM set_config('underwriting.update_user', coalesce(previous, ''), true);
END $$;

-- Deletes a rulebook; true when there was one (the audit item follows, W17).
CREATE FUNCTION underwriting.delete_rulebook(environment text, rulebook_id text, update_user text DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    previous text := current_setting('underwriting.update_user', true);
    deleted boolean;
BEGIN
    PERFORM set_config('underwriting.update_user', coalesce(update_user, previous, ''), true);
    deleted := ddb.delete_item(underwriting.table_name(environment), 'RULEBOOK', ('RULEBOOK#' || rulebook_id)::ddb.ddb_key)
               IS NOT NULL;
    PERFORM set_config('underwriting.update_user', coalesce(previous, ''), true);
    RETURN deleted;
END $$;

-- W11: all rulebooks (PK = RULEBOOK).
CREATE FUNCTION underwriting.rulebooks(environment text) RETURNS SETOF jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT i FROM ddb.query(underwriting.table_name(environment), 'RULEBOOK') i;
END;

-- W12: the rulebooks of a type, floats or loan (GSI1, GSI1PK = RULEBOOK_TYPE#<type>).
CREATE FUNCTION underwriting.rulebooks_by_type(environment text, type text) RETURNS SETOF jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT i FROM ddb.query(underwriting.table_name(environment), ('RULEBOOK_TYPE#' || type)::ddb.ddb_key,
                            index_name => 'GSI1') i;
END;

-- W13: one rulebook, or NULL.
CREATE FUNCTION underwriting.rulebook(environment text, rulebook_id text) RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN ddb.get_item(underwriting.table_name(environment), 'RULEBOOK', ('RULEBOOK#' || rulebook_id)::ddb.ddb_key);

-- W14: the rulebook update history, oldest first, or newest first with a limit.
CREATE FUNCTION underwriting.rulebook_updates(environment text, newest_first boolean DEFAULT false,
                                              n integer DEFAULT NULL)
RETURNS SETOF jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT i FROM ddb.query(underwriting.table_name(environment), 'RULEBOOKCONFIGUPDATE',
                            ascending => NOT newest_first, max_items => n) i;
END;

-- The seed's example items, in an environment: user user-12345's profile,
-- a temporary profile, a rule outcome, an evaluation result taken as a
-- float, and the core_v2 rulebook.  Dates are the seed's, moved to now so
-- that the TTLs have not passed.
CREATE FUNCTION underwriting.load_example_data(environment text) RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t0 timestamptz := date_trunc('second', now()) - interval '1 day';
    result_id text;
BEGIN
    PERFORM underwriting.put_float_profile(environment, 'user-12345', '{"is_float_enabled": true, "is_loan_enabled": true,
        "cfi_enabled": true, "floats": [{"id": "1", "amount": 1000, "is_enabled": true},
        {"id": "2", "amount": 2000, "is_enabled": true}], "loans": [{"id": "1", "amount_cents": 20000, "is_enabled": true}]}',
        'Initial profile', NULL, t0 - interval '30 days');
    PERFORM underwriting.put_float_profile(environment, 'user-12345', '{"is_float_enabled": true, "is_loan_enabled": true,
        "cfi_enabled": true, "floats": [{"id": "1", "amount": 1000, "is_enabled": true},
        {"id": "2", "amount": 2000, "is_enabled": true}, {"id": "3", "amount": 3000, "is_enabled": false}],
        "loans": [{"id": "1", "amount_cents": 20000, "is_enabled": true}]}',
        'CFI limit increase to $30', 'User reached sub rank 2, float rank 3', t0);
    PERFORM underwriting.put_temporary_profile(environment, 'user-12345', t0 + interval '14 days',
        '{"is_float_enabled": true, "floats": [{"id": "1", "amount": 1000, "is_enabled": true},
        {"id": "2", "amount": 2000, "is_enabled": true}, {"id": "3", "amount": 3000, "is_enabled": true},
        {"id": "4", "amount": 4000, "is_enabled": true}]}', 'promotional_campaign_presidents_day', t0);
    PERFORM underwriting.put_rule_outcome(environment, 'user-12345', 'RuleAgeOfAccount', -1, false,
        '{"account_age_days": 180, "min_required_days": 90, "passed": true}', t0);
    result_id := underwriting.put_evaluation_result(environment, 'user-12345', 'item-abc', 'account-xyz',
        '{"float_results": {"approved": true, "amount": 3000, "deciding_rulebook": "core_v2", "status": "OK", "errors": "",
          "results": [{"rulebook_id": "core_v2", "result": -1, "calc_status": "OK", "apply_to": 10000, "priority": 100,
                       "approved": true, "is_applicable": true, "features": {"RuleAgeOfAccount": {"account_age_days": 180}}}]},
          "loan_results": {"approved": false, "amount": 0, "status": "OK"},
          "cfi_state": {"current_limit": 3000, "sub_rank": 2, "float_rank": 3, "account_balance": 120000, "highest_float": 2000}}',
        t0, floor(date_part('epoch', t0))::bigint || '_550e8400-e29b-41d4');
    PERFORM underwriting.take_float(environment, 'user-12345', result_id, 3000, 'float-789');
    PERFORM underwriting.put_rulebook(environment, '{"rulebook_id": "core_v2", "rulebook_name": "Core Float Approval v2",
        "type": "floats", "apply_to": 10000, "priority": 100, "superseding": false,
        "rules": [{"rule": "RuleGoodStanding", "rule_arn": "", "props": {}, "rule_type": "all"},
                  {"rule": "RuleAgeOfAccount", "rule_arn": "", "props": {"min_days": 90}, "rule_type": "all"},
                  {"rule": "RuleRecurringDeposits", "rule_arn": "", "props": {"lookback_days": 60, "min_deposits": 2},
                   "rule_type": "txns"}]}', 'admin@example.com');
    RETURN 'user-12345';
END $$;
