
-- ===========================================================================
-- Model mailshot (../shared/catalog.md M1-M10; docs/models/mailshot.md)
--
-- MailshotTable: everything about a subscriber under SUB#<email> (PROFILE,
-- EXEC#<sequenceId>, SENT#<iso timestamp>, SUPPRESSION), TTL on send logs.
-- MailshotEventsTable: engagement events SUB#<email> / EVT#<iso>#<type>,
-- TTL on every event, GSI TemplateIndex (templateKey, SK).
-- Every item's shape is checked on every write path, and a ttl must be the
-- one the rule gives (send logs 90 days, events 365 days after the fact).
-- ===========================================================================

CREATE SCHEMA mailshot;
COMMENT ON SCHEMA mailshot IS 'The mailshot model (ddb_model): subscribers, sequences, sends and engagement events';

SELECT ddb.create_table('MailshotTable', 'PK', 'S', 'SK', 'S', schema_name => 'mailshot', partitions => 0,
                        ttl_attribute => 'ttl');
SELECT ddb.own_model_table('mailshot', 'MailshotTable');
SELECT ddb.create_table('MailshotEventsTable', 'PK', 'S', 'SK', 'S', schema_name => 'mailshot', partitions => 0,
                        ttl_attribute => 'ttl');
SELECT ddb.create_index('MailshotEventsTable', 'TemplateIndex', 'templateKey', 'S', 'SK', 'S');
SELECT ddb.own_model_table('mailshot', 'MailshotEventsTable');

-- M9: SEND_LOG_TTL_DAYS, how long a send log lives.
CREATE FUNCTION mailshot.send_log_ttl_days() RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN 90;

-- M9: EVENT_TTL_DAYS, how long an engagement event lives.
CREATE FUNCTION mailshot.event_ttl_days() RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN 365;

-- M9: the ttl (epoch seconds) of an item written at ts that lives days days.
CREATE FUNCTION mailshot.ttl_after(ts timestamptz, days integer) RETURNS bigint
LANGUAGE sql STABLE PARALLEL SAFE
RETURN floor(date_part('epoch', ts))::bigint + days * 86400;

-- A subscriber's address as the keys hold it: trimmed and lower-cased;
-- anything that is not an address is refused.
CREATE FUNCTION mailshot.normalize_email(email text) RETURNS text
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    e text := lower(btrim(email, E' \t\r\n'));
BEGIN
    IF e IS NULL OR length(e) > 254 OR e !~ '^[^@\s#]+@[^@\s.#]+(\.[^@\s.#]+)+$' THEN
        PERFORM ddb.invalid_parameter(format('not an email address: %L', email));
    END IF;
    RETURN e;
END $$;

-- A timestamp from the ISO 8601 text the items hold (2026-03-17T10:30:00.000Z); raises for other text.
CREATE FUNCTION mailshot.parse_iso(ts text, what text) RETURNS timestamptz
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF ts IS NULL OR ts !~ '^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$' THEN
        PERFORM ddb.invalid_parameter(format('%s must be an ISO 8601 UTC timestamp like 2026-03-17T10:30:00.000Z, not %s',
                                        what, coalesce(ts, 'null')));
    END IF;
    RETURN ts::timestamptz;
EXCEPTION WHEN datetime_field_overflow OR invalid_datetime_format THEN
    PERFORM ddb.invalid_parameter(format('%s is not a valid timestamp: %s', what, ts));
END $$;

-- M8: subscriberPK("user@example.com") = "SUB#user@example.com".
CREATE FUNCTION mailshot.subscriber_pk(email text) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
RETURN 'SUB#' || mailshot.normalize_email(email);

-- M8: executionSK("onboarding") = "EXEC#onboarding".
CREATE FUNCTION mailshot.execution_sk(sequence_id text) RETURNS text
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF sequence_id IS NULL OR sequence_id !~ '^[^#\s]+$' THEN
        PERFORM ddb.invalid_parameter(format('a sequence id is a non-empty word without # or spaces, not %L', sequence_id));
    END IF;
    RETURN 'EXEC#' || sequence_id;
END $$;

-- M8: sentSK("2026-03-17T10:30:00.000Z") = "SENT#2026-03-17T10:30:00.000Z".
CREATE FUNCTION mailshot.sent_sk(sent_at timestamptz) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
RETURN 'SENT#' || ddb.iso8601(sent_at);

-- The sort key of an engagement event: EVT#<iso timestamp>#<eventType>.
CREATE FUNCTION mailshot.event_sk(at timestamptz, event_type text) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
RETURN 'EVT#' || ddb.iso8601(at) || '#' || event_type;

-- Raises for attributes an item lacks.
CREATE FUNCTION mailshot.require(item jsonb, what text, VARIADIC attributes text[]) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    missing text;
BEGIN
    SELECT string_agg(a, ', ') INTO missing FROM unnest(attributes) a
    WHERE NOT item ? a OR jsonb_typeof(item -> a) = 'null';
    IF missing IS NOT NULL THEN
        PERFORM ddb.invalid_parameter(format('%s lacks %s', what, missing));
    END IF;
END $$;

-- Checks the shape of a MailshotTable item (BEFORE INSERT OR UPDATE),
-- whatever path wrote it.
CREATE FUNCTION mailshot.check_main_item() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    i jsonb := NEW.item;
    pk text := NEW.pk::text;
    sk text := NEW.sk::text;
    email text := substr(pk, 5);
    what text := format('%s %s', pk, sk);
BEGIN
    IF left(pk, 4) <> 'SUB#' OR mailshot.normalize_email(email) <> email THEN
        PERFORM ddb.invalid_parameter(format('MailshotTable holds SUB#<email> items (a lower-case address), not %s', pk));
    END IF;
    IF i ? 'ttl' AND sk !~ '^SENT#' THEN
        PERFORM ddb.invalid_parameter(format('%s: only send logs expire; this item has no ttl (M9)', what));
    END IF;
    IF sk = 'PROFILE' THEN
        PERFORM mailshot.require(i, what, 'email', 'unsubscribed', 'suppressed', 'createdAt', 'updatedAt');
        IF i ->> 'email' <> email THEN
            PERFORM ddb.invalid_parameter(format('%s: email must be %s', what, email));
        END IF;
        IF jsonb_typeof(i -> 'unsubscribed') <> 'boolean' OR jsonb_typeof(i -> 'suppressed') <> 'boolean' THEN
            PERFORM ddb.invalid_parameter(format('%s: unsubscribed and suppressed are booleans', what));
        END IF;
        IF i ? 'attributes' AND jsonb_typeof(i -> 'attributes') <> 'object' THEN
            PERFORM ddb.invalid_parameter(format('%s: attributes is a map', what));
        END IF;
        PERFORM mailshot.parse_iso(i ->> 'createdAt', 'createdAt'), mailshot.parse_iso(i ->> 'updatedAt', 'updatedAt');
    ELSIF sk ~ '^EXEC#' THEN
        PERFORM mailshot.require(i, what, 'sequenceId', 'executionArn', 'startedAt');
        IF mailshot.execution_sk(i ->> 'sequenceId') <> sk THEN
            PERFORM ddb.invalid_parameter(format('%s: sequenceId must be %s', what, substr(sk, 6)));
        END IF;
        PERFORM mailshot.parse_iso(i ->> 'startedAt', 'startedAt');
    ELSIF sk ~ '^SENT#' THEN
        PERFORM mailshot.require(i, what, 'templateKey', 'subject', 'sentAt', 'ttl');
        IF 'SENT#' || (i ->> 'sentAt') <> sk THEN
            PERFORM ddb.invalid_parameter(format('%s: sentAt must be %s', what, substr(sk, 6)));
        END IF;
        IF jsonb_typeof(i -> 'ttl') <> 'number' OR (i ->> 'ttl')::numeric
           <> mailshot.ttl_after(mailshot.parse_iso(i ->> 'sentAt', 'sentAt'), mailshot.send_log_ttl_days()) THEN
            PERFORM ddb.invalid_parameter(format('%s: ttl must be sentAt + %s days, %s', what, mailshot.send_log_ttl_days(),
                mailshot.ttl_after(mailshot.parse_iso(i ->> 'sentAt', 'sentAt'), mailshot.send_log_ttl_days())));
        END IF;
    ELSIF sk = 'SUPPRESSION' THEN
        PERFORM mailshot.require(i, what, 'type', 'reason', 'suppressedAt');
        IF i ->> 'type' NOT IN ('Permanent', 'Complaint') THEN
            PERFORM ddb.invalid_parameter(format('%s: unknown suppression type %s (Permanent or Complaint)', what, i -> 'type'));
        END IF;
        PERFORM mailshot.parse_iso(i ->> 'suppressedAt', 'suppressedAt');
    ELSE
        PERFORM ddb.invalid_parameter(format('MailshotTable holds PROFILE, EXEC#, SENT# and SUPPRESSION items, not %s', sk));
    END IF;
    RETURN NEW;
END $$;

CREATE TRIGGER check_item BEFORE INSERT OR UPDATE ON mailshot."MailshotTable"
    FOR EACH ROW EXECUTE FUNCTION mailshot.check_main_item();

-- Checks the shape of a MailshotEventsTable item (BEFORE INSERT OR UPDATE).
CREATE FUNCTION mailshot.check_event_item() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    i jsonb := NEW.item;
    pk text := NEW.pk::text;
    sk text := NEW.sk::text;
    email text := substr(pk, 5);
    what text := format('%s %s', pk, sk);
BEGIN
    IF left(pk, 4) <> 'SUB#' OR mailshot.normalize_email(email) <> email THEN
        PERFORM ddb.invalid_parameter(format('MailshotEventsTable holds SUB#<email> items (a lower-case address), not %s', pk));
    END IF;
    PERFORM mailshot.require(i, what, 'eventType', 'templateKey', 'timestamp', 'ttl');
    IF i ->> 'eventType' NOT IN ('delivery', 'open', 'click', 'bounce', 'complaint') THEN
        PERFORM ddb.invalid_parameter(format('%s: unknown event type %s (delivery, open, click, bounce or complaint)',
                                        what, i -> 'eventType'));
    END IF;
    IF sk <> 'EVT#' || (i ->> 'timestamp') || '#' || (i ->> 'eventType') THEN
        PERFORM ddb.invalid_parameter(format('%s: the sort key must be EVT#<timestamp>#<eventType>', what));
    END IF;
    IF jsonb_typeof(i -> 'ttl') <> 'number' OR (i ->> 'ttl')::numeric
       <> mailshot.ttl_after(mailshot.parse_iso(i ->> 'timestamp', 'timestamp'), mailshot.event_ttl_days()) THEN
        PERFORM ddb.invalid_parameter(format('%s: ttl must be timestamp + %s days, %s', what, mailshot.event_ttl_days(),
            mailshot.ttl_after(mailshot.parse_iso(i ->> 'timestamp', 'timestamp'), mailshot.event_ttl_days())));
    END IF;
    RETURN NEW;
END $$;

CREATE TRIGGER check_item BEFORE INSERT OR UPDATE ON mailshot."MailshotEventsTable"
    FOR EACH ROW EXECUTE FUNCTION mailshot.check_event_item();

-- Typed rows.
CREATE TYPE mailshot.subscriber AS (
    email text, first_name text, attributes jsonb, unsubscribed boolean, suppressed boolean,
    created_at timestamptz, updated_at timestamptz);
CREATE TYPE mailshot.execution AS (email text, sequence_id text, execution_arn text, started_at timestamptz);
CREATE TYPE mailshot.send AS (
    email text, sent_at timestamptz, template_key text, subject text, sequence_id text, expires_at timestamptz);
CREATE TYPE mailshot.suppression AS (email text, type text, reason text, suppressed_at timestamptz);
CREATE TYPE mailshot.event AS (
    email text, at timestamptz, event_type text, template_key text, sequence_id text, subject text,
    expires_at timestamptz);

-- The typed row of a PROFILE item (NULL for none).
CREATE FUNCTION mailshot.subscriber_of(item jsonb) RETURNS mailshot.subscriber
LANGUAGE sql STABLE STRICT PARALLEL SAFE
RETURN ROW(item ->> 'email', item ->> 'firstName', item -> 'attributes', (item ->> 'unsubscribed')::boolean,
           (item ->> 'suppressed')::boolean, (item ->> 'createdAt')::timestamptz,
           (item ->> 'updatedAt')::timestamptz)::mailshot.subscriber;

-- The typed row of an EXEC# item (NULL for none).
CREATE FUNCTION mailshot.execution_of(item jsonb) RETURNS mailshot.execution
LANGUAGE sql STABLE STRICT PARALLEL SAFE
RETURN ROW(substr(item ->> 'PK', 5), item ->> 'sequenceId', item ->> 'executionArn',
           (item ->> 'startedAt')::timestamptz)::mailshot.execution;

-- The typed row of a SENT# item.
CREATE FUNCTION mailshot.send_of(item jsonb) RETURNS mailshot.send
LANGUAGE sql STABLE STRICT PARALLEL SAFE
RETURN ROW(substr(item ->> 'PK', 5), (item ->> 'sentAt')::timestamptz, item ->> 'templateKey', item ->> 'subject',
           item ->> 'sequenceId', to_timestamp((item ->> 'ttl')::bigint))::mailshot.send;

-- The typed row of a SUPPRESSION item (NULL for none).
CREATE FUNCTION mailshot.suppression_of(item jsonb) RETURNS mailshot.suppression
LANGUAGE sql STABLE STRICT PARALLEL SAFE
RETURN ROW(substr(item ->> 'PK', 5), item ->> 'type', item ->> 'reason',
           (item ->> 'suppressedAt')::timestamptz)::mailshot.suppression;

-- The typed row of an event item.
CREATE FUNCTION mailshot.event_of(item jsonb) RETURNS mailshot.event
LANGUAGE sql STABLE STRICT PARALLEL SAFE
RETURN ROW(substr(item ->> 'PK', 5), (item ->> 'timestamp')::timestamptz, item ->> 'eventType', item ->> 'templateKey',
           item ->> 'sequenceId', item ->> 'subject', to_timestamp((item ->> 'ttl')::bigint))::mailshot.event;

-- Views with typed columns; expired items are hidden as every read hides them.
CREATE VIEW mailshot.subscribers AS
    SELECT s.* FROM mailshot."MailshotTable" t, mailshot.subscriber_of(t.item) s
    WHERE t.sk OPERATOR(pg_catalog.=) 'PROFILE'::ddb.ddb_key;
CREATE VIEW mailshot.executions AS
    SELECT e.* FROM mailshot."MailshotTable" t, mailshot.execution_of(t.item) e
    WHERE t.sk OPERATOR(pg_catalog.^@) 'EXEC#'::ddb.ddb_key;
CREATE VIEW mailshot.sends AS
    SELECT s.* FROM mailshot."MailshotTable" t, mailshot.send_of(t.item) s
    WHERE t.sk OPERATOR(pg_catalog.^@) 'SENT#'::ddb.ddb_key AND ddb.ttl_visible(t.expires_at);
CREATE VIEW mailshot.suppressions AS
    SELECT s.* FROM mailshot."MailshotTable" t, mailshot.suppression_of(t.item) s
    WHERE t.sk OPERATOR(pg_catalog.=) 'SUPPRESSION'::ddb.ddb_key;
CREATE VIEW mailshot.events AS
    SELECT e.* FROM mailshot."MailshotEventsTable" t, mailshot.event_of(t.item) e
    WHERE ddb.ttl_visible(t.expires_at);
COMMENT ON VIEW mailshot.sends IS 'mailshot: the send logs not yet expired, typed';
COMMENT ON VIEW mailshot.events IS 'mailshot: the engagement events not yet expired, typed';

-- Raises no_data_found for an address that has no subscriber profile.
CREATE FUNCTION mailshot.require_subscriber(email text) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF ddb.get_item('MailshotTable', mailshot.subscriber_pk(email)::ddb.ddb_key, 'PROFILE') IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'no_data_found',
            MESSAGE = format('unknown subscriber %s', mailshot.normalize_email(email));
    END IF;
END $$;

-- Creates a subscriber, or updates its name and attributes; a NULL
-- argument leaves its attribute as it is (createdAt and the flags stay too).
CREATE FUNCTION mailshot.upsert_subscriber(email text, first_name text DEFAULT NULL,
                                           attributes jsonb DEFAULT NULL, at timestamptz DEFAULT now())
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM ddb.update_item('MailshotTable', mailshot.subscriber_pk(email)::ddb.ddb_key, 'PROFILE',
        'SET email = :e, unsubscribed = if_not_exists(unsubscribed, :false), '
        'suppressed = if_not_exists(suppressed, :false), createdAt = if_not_exists(createdAt, :now), updatedAt = :now, '
        || CASE WHEN attributes IS NULL THEN '#a = if_not_exists(#a, :a)' ELSE '#a = :a' END
        || CASE WHEN first_name IS NULL THEN '' ELSE ', firstName = :f' END,
        names => '{"#a": "attributes"}',
        vals => jsonb_build_object(':e', mailshot.normalize_email(email), ':a', coalesce(attributes, '{}'),
                                   ':false', false, ':now', ddb.iso8601(at))
                || CASE WHEN first_name IS NULL THEN '{}'::jsonb ELSE jsonb_build_object(':f', first_name) END,
        return_values => 'NONE');
END $$;

-- M1: a subscriber's profile (PK = SUB#email, SK = PROFILE), or NULL.
CREATE FUNCTION mailshot.get_profile(email text) RETURNS mailshot.subscriber
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN mailshot.subscriber_of(ddb.get_item('MailshotTable', mailshot.subscriber_pk(email)::ddb.ddb_key, 'PROFILE'));

-- Records the start of a sequence's execution for a subscriber.
CREATE FUNCTION mailshot.start_execution(email text, sequence_id text, execution_arn text,
                                         at timestamptz DEFAULT now())
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM mailshot.require_subscriber(email);
    PERFORM ddb.put_item('MailshotTable', jsonb_build_object(
        'PK', mailshot.subscriber_pk(email), 'SK', mailshot.execution_sk(sequence_id), 'sequenceId', sequence_id,
        'executionArn', execution_arn, 'startedAt', ddb.iso8601(at)));
END $$;

-- Removes a finished execution; true when there was one.
CREATE FUNCTION mailshot.end_execution(email text, sequence_id text) RETURNS boolean
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
RETURN ddb.delete_item('MailshotTable', mailshot.subscriber_pk(email)::ddb.ddb_key,
                       mailshot.execution_sk(sequence_id)::ddb.ddb_key) IS NOT NULL;

-- M2: the active execution of a sequence (SK = EXEC#sequenceId), or NULL.
CREATE FUNCTION mailshot.get_execution(email text, sequence_id text) RETURNS mailshot.execution
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN mailshot.execution_of(ddb.get_item('MailshotTable', mailshot.subscriber_pk(email)::ddb.ddb_key,
                                          mailshot.execution_sk(sequence_id)::ddb.ddb_key));

-- M3: every execution of a subscriber (SK begins_with EXEC#).
CREATE FUNCTION mailshot.list_executions(email text) RETURNS SETOF mailshot.execution
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT (mailshot.execution_of(i)).*
    FROM ddb.query('MailshotTable', mailshot.subscriber_pk(email)::ddb.ddb_key, 'begins_with', 'EXEC#') i;
END;

-- Logs a send, with the ttl of the rule (M9: sentAt + 90 days); returns its
-- sort key.  A second send at the same millisecond is refused, never
-- written over the first.
CREATE FUNCTION mailshot.record_send(email text, template_key text, subject text, sequence_id text DEFAULT NULL,
                                     sent_at timestamptz DEFAULT clock_timestamp())
RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    sk text := mailshot.sent_sk(sent_at);
BEGIN
    PERFORM mailshot.require_subscriber(email);
    PERFORM ddb.put_item('MailshotTable', jsonb_strip_nulls(jsonb_build_object(
        'PK', mailshot.subscriber_pk(email), 'SK', sk, 'templateKey', template_key, 'subject', subject,
        'sequenceId', sequence_id, 'sentAt', ddb.iso8601(sent_at),
        'ttl', mailshot.ttl_after(sent_at, mailshot.send_log_ttl_days()))),
        condition => 'attribute_not_exists(SK)');
    RETURN sk;
EXCEPTION WHEN SQLSTATE 'YD002' THEN
    RAISE EXCEPTION USING ERRCODE = 'unique_violation',
        MESSAGE = format('a send to %s at %s is already logged', mailshot.normalize_email(email), ddb.iso8601(sent_at));
END $$;

-- M4: a subscriber's send history, newest first (SK begins_with SENT#); expired logs are gone.
CREATE FUNCTION mailshot.send_history(email text) RETURNS SETOF mailshot.send
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT (mailshot.send_of(i)).*
    FROM ddb.query('MailshotTable', mailshot.subscriber_pk(email)::ddb.ddb_key, 'begins_with', 'SENT#',
                   ascending => false) i;
END;

-- M5: was this template sent to the subscriber? (SK begins_with SENT#, filter templateKey)
CREATE FUNCTION mailshot.was_sent(email text, template_key text) RETURNS boolean
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN EXISTS (SELECT FROM ddb.query('MailshotTable', mailshot.subscriber_pk(email)::ddb.ddb_key, 'begins_with', 'SENT#',
                                     max_items => 1, filter => 'templateKey = :t',
                                     vals => jsonb_build_object(':t', template_key)));

-- Suppresses a subscriber (Permanent or Complaint): the SUPPRESSION item
-- and the profile's flag, in one transaction.
CREATE FUNCTION mailshot.suppress(email text, type text, reason text, at timestamptz DEFAULT now())
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM mailshot.require_subscriber(email);
    PERFORM ddb.put_item('MailshotTable', jsonb_build_object(
        'PK', mailshot.subscriber_pk(email), 'SK', 'SUPPRESSION', 'type', type, 'reason', reason,
        'suppressedAt', ddb.iso8601(at)));
    PERFORM ddb.update_item('MailshotTable', mailshot.subscriber_pk(email)::ddb.ddb_key, 'PROFILE',
        'SET suppressed = :true, updatedAt = :now', condition => 'attribute_exists(PK)',
        vals => jsonb_build_object(':true', true, ':now', ddb.iso8601(at)), return_values => 'NONE');
EXCEPTION WHEN SQLSTATE 'YD002' THEN
    RAISE EXCEPTION USING ERRCODE = 'no_data_found',
        MESSAGE = format('unknown subscriber %s', mailshot.normalize_email(email));
END $$;

-- M6: a subscriber's suppression (SK = SUPPRESSION), or NULL.
CREATE FUNCTION mailshot.get_suppression(email text) RETURNS mailshot.suppression
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN mailshot.suppression_of(ddb.get_item('MailshotTable', mailshot.subscriber_pk(email)::ddb.ddb_key, 'SUPPRESSION'));

-- Unsubscribes a subscriber.
CREATE FUNCTION mailshot.unsubscribe(email text, at timestamptz DEFAULT now()) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM ddb.update_item('MailshotTable', mailshot.subscriber_pk(email)::ddb.ddb_key, 'PROFILE',
        'SET unsubscribed = :true, updatedAt = :now', condition => 'attribute_exists(PK)',
        vals => jsonb_build_object(':true', true, ':now', ddb.iso8601(at)), return_values => 'NONE');
EXCEPTION WHEN SQLSTATE 'YD002' THEN
    RAISE EXCEPTION USING ERRCODE = 'no_data_found',
        MESSAGE = format('unknown subscriber %s', mailshot.normalize_email(email));
END $$;

-- M7: everything about a subscriber (PK only), items as stored.
CREATE FUNCTION mailshot.get_subscriber_items(email text) RETURNS SETOF jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT i FROM ddb.query('MailshotTable', mailshot.subscriber_pk(email)::ddb.ddb_key) i;
END;

-- Records an engagement event, with the ttl of the rule (M9: timestamp +
-- 365 days); returns its sort key.  A second event of one type at the same
-- millisecond is refused, never written over the first.
CREATE FUNCTION mailshot.record_event(email text, event_type text, template_key text,
                                      sequence_id text DEFAULT NULL, subject text DEFAULT NULL,
                                      at timestamptz DEFAULT clock_timestamp())
RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    sk text := mailshot.event_sk(at, event_type);
BEGIN
    PERFORM ddb.put_item('MailshotEventsTable', jsonb_strip_nulls(jsonb_build_object(
        'PK', mailshot.subscriber_pk(email), 'SK', sk, 'eventType', event_type, 'templateKey', template_key,
        'sequenceId', sequence_id, 'subject', subject, 'timestamp', ddb.iso8601(at),
        'ttl', mailshot.ttl_after(at, mailshot.event_ttl_days()))),
        condition => 'attribute_not_exists(SK)');
    RETURN sk;
EXCEPTION WHEN SQLSTATE 'YD002' THEN
    RAISE EXCEPTION USING ERRCODE = 'unique_violation',
        MESSAGE = format('a %s event of %s at %s is already recorded', event_type, mailshot.normalize_email(email),
                         ddb.iso8601(at));
END $$;

-- M10: a template's events in the window [since, until), oldest first,
-- optionally of one event type (Query TemplateIndex: templateKey = t AND SK
-- BETWEEN EVT#since AND EVT#until, filter eventType).
CREATE FUNCTION mailshot.template_events(template_key text, since timestamptz, until timestamptz DEFAULT now(),
                                         event_type text DEFAULT NULL)
RETURNS SETOF mailshot.event
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT (mailshot.event_of(i)).*
    FROM ddb.query('MailshotEventsTable', template_key::ddb.ddb_key, 'between',
                   ('EVT#' || ddb.iso8601(since))::ddb.ddb_key, ('EVT#' || ddb.iso8601(until))::ddb.ddb_key,
                   index_name => 'TemplateIndex',
                   filter => CASE WHEN event_type IS NOT NULL THEN 'eventType = :t' END,
                   vals => CASE WHEN event_type IS NOT NULL THEN jsonb_build_object(':t', event_type) END) i;
END;

-- The seed's example items: subscriber user@example.com with a profile, an
-- onboarding execution, a send log, a suppression, and engagement events of
-- the welcome email.  Sends and events are written relative to now, so that
-- their TTLs have not passed; the profile keeps the seed's dates.
CREATE FUNCTION mailshot.load_example_data() RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    sent timestamptz := date_trunc('second', now()) - interval '2 days';
BEGIN
    PERFORM mailshot.upsert_subscriber('user@example.com', 'Jane', '{"platform": "kajabi", "country": "ZA"}',
                                       at => '2026-03-01T00:00:00Z');
    PERFORM mailshot.start_execution('user@example.com', 'onboarding', 'arn:aws:states:us-east-1:123456789012:execution:onboarding:user-example-com',
                                     at => '2026-03-01T00:00:00Z');
    PERFORM mailshot.record_send('user@example.com', 'onboarding/welcome', 'Welcome!', 'onboarding', sent);
    PERFORM mailshot.record_event('user@example.com', 'delivery', 'onboarding/welcome', 'onboarding', 'Welcome!', sent + interval '5 seconds');
    PERFORM mailshot.record_event('user@example.com', 'open', 'onboarding/welcome', 'onboarding', 'Welcome!', sent + interval '1 hour');
    PERFORM mailshot.record_event('user@example.com', 'click', 'onboarding/welcome', 'onboarding', 'Welcome!', sent + interval '61 minutes');
    PERFORM mailshot.upsert_subscriber('bounced@example.com', 'Sam', at => '2026-03-01T00:00:00Z');
    PERFORM mailshot.record_send('bounced@example.com', 'onboarding/welcome', 'Welcome!', 'onboarding', sent);
    PERFORM mailshot.record_event('bounced@example.com', 'bounce', 'onboarding/welcome', 'onboarding', 'Welcome!', sent + interval '3 seconds');
    PERFORM mailshot.suppress('bounced@example.com', 'Permanent', 'General', sent + interval '4 seconds');
    RETURN 'user@example.com';
END $$;
