
-- ===========================================================================
-- Model uniflow (../shared/catalog.md U1-U7; docs/models/uniflow.md)
--
-- Six tables under the seed's names: profilesTable (META and EVENT#<ts>#<id>
-- per user, TTL on ttl), identityTable, sourcesTable (writeKeyHashIndex),
-- destinationsTable, segmentsTable, segmentMembersTable.  A write key is
-- never stored: only its sha256 digest, and it is shown once, at creation.
-- ===========================================================================

CREATE SCHEMA uniflow;
COMMENT ON SCHEMA uniflow IS 'The uniflow model (ddb_model): profiles, events, identities, sources, destinations, segments';

SELECT ddb.create_table('profilesTable', 'userId', 'S', 'sortKey', 'S', schema_name => 'uniflow', partitions => 0,
                        ttl_attribute => 'ttl');
SELECT ddb.create_table('identityTable', 'anonymousId', 'S', schema_name => 'uniflow', partitions => 0);
SELECT ddb.create_table('sourcesTable', 'id', 'S', schema_name => 'uniflow', partitions => 0);
SELECT ddb.create_index('sourcesTable', 'writeKeyHashIndex', 'writeKeyHash', 'S');
SELECT ddb.create_table('destinationsTable', 'id', 'S', schema_name => 'uniflow', partitions => 0);
SELECT ddb.create_table('segmentsTable', 'id', 'S', schema_name => 'uniflow', partitions => 0);
SELECT ddb.create_table('segmentMembersTable', 'segmentId', 'S', 'userId', 'S', schema_name => 'uniflow', partitions => 0);
SELECT ddb.own_model_table('uniflow', t)
FROM unnest(ARRAY['profilesTable', 'identityTable', 'sourcesTable', 'destinationsTable', 'segmentsTable',
                  'segmentMembersTable']) t;

-- An id of the model (userId, anonymousId, source, segment, destination ids):
-- a non-empty word without '#', which the keys use as a separator.
CREATE FUNCTION uniflow.checked_id(id text, what text) RETURNS text
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF id IS NULL OR id !~ '^[^#\s]{1,200}$' THEN
        PERFORM ddb.invalid_parameter(format('%s must be 1 to 200 characters without # or spaces, not %L', what, id));
    END IF;
    RETURN id;
END $$;

-- The sha256 hex digest of a write key: what sourcesTable stores instead of the key.
CREATE FUNCTION uniflow.write_key_hash(write_key text) RETURNS text
LANGUAGE sql STABLE STRICT PARALLEL SAFE
RETURN encode(sha256(convert_to(write_key, 'UTF8')), 'hex');

-- Checks the shape of a profilesTable item (BEFORE INSERT OR UPDATE).
CREATE FUNCTION uniflow.check_profile_item() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    i jsonb := NEW.item;
    sk text := NEW.sk::text;
BEGIN
    PERFORM uniflow.checked_id(NEW.pk::text, 'userId');
    IF sk = 'META' THEN
        IF jsonb_typeof(i -> 'traits') IS DISTINCT FROM 'object' OR NOT i ? 'createdAt' OR NOT i ? 'updatedAt' THEN
            PERFORM ddb.invalid_parameter(format('the META item of %s needs traits (a map), createdAt and updatedAt', NEW.pk));
        END IF;
        PERFORM (i ->> 'createdAt')::timestamptz, (i ->> 'updatedAt')::timestamptz;
    ELSIF sk ~ '^EVENT#\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z#[^#\s]+$' THEN
        IF jsonb_typeof(i -> 'event') IS DISTINCT FROM 'string' OR NOT i ? 'timestamp' OR NOT i ? 'messageId'
           OR sk <> 'EVENT#' || (i ->> 'timestamp') || '#' || (i ->> 'messageId') THEN
            PERFORM ddb.invalid_parameter(format('the event %s of %s needs event, timestamp and messageId matching its sortKey',
                                                 sk, NEW.pk));
        END IF;
    ELSE
        PERFORM ddb.invalid_parameter(format('profilesTable holds META and EVENT#<timestamp>#<messageId> items, not %s', sk));
    END IF;
    RETURN NEW;
END $$;

CREATE TRIGGER check_item BEFORE INSERT OR UPDATE ON uniflow."profilesTable"
    FOR EACH ROW EXECUTE FUNCTION uniflow.check_profile_item();

-- Checks the shape of a sourcesTable item: never a write key in clear.
CREATE FUNCTION uniflow.check_source_item() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    i jsonb := NEW.item;
BEGIN
    IF i ? 'writeKey' THEN
        PERFORM ddb.invalid_parameter('a source never stores its write key, only writeKeyHash (its sha256 digest)');
    END IF;
    IF i ->> 'writeKeyHash' IS NULL OR i ->> 'writeKeyHash' !~ '^[0-9a-f]{64}$' OR i ->> 'name' IS NULL THEN
        PERFORM ddb.invalid_parameter(format('source %s needs a name and writeKeyHash, a sha256 hex digest', NEW.pk));
    END IF;
    RETURN NEW;
END $$;

CREATE TRIGGER check_item BEFORE INSERT OR UPDATE ON uniflow."sourcesTable"
    FOR EACH ROW EXECUTE FUNCTION uniflow.check_source_item();

-- U4: one source per write key, whoever writes.
CREATE UNIQUE INDEX "sourcesTable: one source per write key (U4)"
    ON uniflow."sourcesTable" ((item OPERATOR(pg_catalog.->>) 'writeKeyHash'));

-- Checks an identityTable item: ids of the model, and a link that never
-- moves to another user (U3), whoever writes.
CREATE FUNCTION uniflow.check_identity_item() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM uniflow.checked_id(NEW.pk::text, 'anonymousId'), uniflow.checked_id(NEW.item ->> 'userId', 'userId');
    IF TG_OP = 'UPDATE' AND OLD.item ->> 'userId' IS DISTINCT FROM NEW.item ->> 'userId' THEN
        RAISE EXCEPTION USING ERRCODE = 'unique_violation',
            MESSAGE = format('anonymousId %s is already linked to another user', NEW.pk);
    END IF;
    RETURN NEW;
END $$;

CREATE TRIGGER check_item BEFORE INSERT OR UPDATE ON uniflow."identityTable"
    FOR EACH ROW EXECUTE FUNCTION uniflow.check_identity_item();

-- Checks a segmentMembersTable item: ids of the model.
CREATE FUNCTION uniflow.check_member_item() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM uniflow.checked_id(NEW.pk::text, 'segmentId'), uniflow.checked_id(NEW.sk::text, 'userId');
    RETURN NEW;
END $$;

CREATE TRIGGER check_item BEFORE INSERT OR UPDATE ON uniflow."segmentMembersTable"
    FOR EACH ROW EXECUTE FUNCTION uniflow.check_member_item();

-- Typed rows.
CREATE TYPE uniflow.profile AS (user_id text, traits jsonb, created_at timestamptz, updated_at timestamptz);
CREATE TYPE uniflow.event AS (user_id text, at timestamptz, message_id text, event text, properties jsonb);
CREATE TYPE uniflow.source AS (id text, name text, write_key_hash text, created_at timestamptz);
CREATE TYPE uniflow.new_source AS (id text, write_key text);

-- The typed profile of a META item (NULL for none).
CREATE FUNCTION uniflow.profile_of(item jsonb) RETURNS uniflow.profile
LANGUAGE sql STABLE STRICT PARALLEL SAFE
RETURN ROW(item ->> 'userId', item -> 'traits', (item ->> 'createdAt')::timestamptz,
           (item ->> 'updatedAt')::timestamptz)::uniflow.profile;

-- The typed row of an EVENT# item.
CREATE FUNCTION uniflow.event_of(item jsonb) RETURNS uniflow.event
LANGUAGE sql STABLE STRICT PARALLEL SAFE
RETURN ROW(item ->> 'userId', (item ->> 'timestamp')::timestamptz, item ->> 'messageId', item ->> 'event',
           item -> 'properties')::uniflow.event;

-- The typed row of a sourcesTable item (NULL for none).
CREATE FUNCTION uniflow.source_of(item jsonb) RETURNS uniflow.source
LANGUAGE sql STABLE STRICT PARALLEL SAFE
RETURN ROW(item ->> 'id', item ->> 'name', item ->> 'writeKeyHash', (item ->> 'createdAt')::timestamptz)::uniflow.source;

CREATE VIEW uniflow.profiles AS
    SELECT p.* FROM uniflow."profilesTable" t, uniflow.profile_of(t.item) p
    WHERE t.sk OPERATOR(pg_catalog.=) 'META'::ddb.ddb_key AND ddb.ttl_visible(t.expires_at);
CREATE VIEW uniflow.events AS
    SELECT e.* FROM uniflow."profilesTable" t, uniflow.event_of(t.item) e
    WHERE t.sk OPERATOR(pg_catalog.^@) 'EVENT#'::ddb.ddb_key AND ddb.ttl_visible(t.expires_at);
CREATE VIEW uniflow.identities AS
    SELECT t.item ->> 'anonymousId' AS anonymous_id, t.item ->> 'userId' AS user_id,
           (t.item ->> 'linkedAt')::timestamptz AS linked_at
    FROM uniflow."identityTable" t;
CREATE VIEW uniflow.sources AS
    SELECT s.* FROM uniflow."sourcesTable" t, uniflow.source_of(t.item) s;
CREATE VIEW uniflow.segments AS
    SELECT t.item ->> 'id' AS id, t.item ->> 'name' AS name, t.item -> 'rules' AS rules FROM uniflow."segmentsTable" t;
CREATE VIEW uniflow.segment_members AS
    SELECT t.item ->> 'segmentId' AS segment_id, t.item ->> 'userId' AS user_id,
           (t.item ->> 'addedAt')::timestamptz AS added_at
    FROM uniflow."segmentMembersTable" t;
CREATE VIEW uniflow.destinations AS
    SELECT t.item ->> 'id' AS id, t.item ->> 'type' AS type, t.item -> 'config' AS config
    FROM uniflow."destinationsTable" t;

-- Records an event in a user's history (EVENT#<timestamp>#<messageId>);
-- ttl_days, when given, makes it expire (the table's TTL).  Returns the messageId.
CREATE FUNCTION uniflow.track(user_id text, event text, properties jsonb DEFAULT '{}',
                              at timestamptz DEFAULT clock_timestamp(), message_id text DEFAULT gen_random_uuid()::text,
                              ttl_days integer DEFAULT NULL)
RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF event IS NULL OR event = '' THEN
        PERFORM ddb.invalid_parameter('an event needs a name');
    END IF;
    PERFORM ddb.put_item('profilesTable', jsonb_build_object(
        'userId', uniflow.checked_id(user_id, 'userId'),
        'sortKey', 'EVENT#' || ddb.iso8601(at) || '#' || uniflow.checked_id(message_id, 'messageId'),
        'event', event, 'properties', coalesce(properties, '{}'), 'timestamp', ddb.iso8601(at),
        'messageId', message_id)
        || CASE WHEN ttl_days IS NULL THEN '{}'::jsonb
                ELSE jsonb_build_object('ttl', floor(date_part('epoch', at))::bigint + ttl_days * 86400) END,
        condition => 'attribute_not_exists(sortKey)');
    RETURN message_id;
EXCEPTION WHEN SQLSTATE 'YD002' THEN
    RAISE EXCEPTION USING ERRCODE = 'unique_violation',
        MESSAGE = format('event %s of %s is already recorded', message_id, user_id);
END $$;

-- Identify: links an anonymous visitor to a known user (once: an
-- anonymousId never moves to another user) and merges traits into the
-- user's META item, a later write winning per trait.
CREATE FUNCTION uniflow.identify(user_id text, traits jsonb DEFAULT '{}', anonymous_id text DEFAULT NULL,
                                 at timestamptz DEFAULT now())
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    sets text := 'updatedAt = :now';
    names jsonb := '{}';
    vals jsonb := jsonb_build_object(':now', ddb.iso8601(at));
    linked jsonb;
    n integer := 0;
    trait record;
BEGIN
    PERFORM uniflow.checked_id(user_id, 'userId');
    IF traits IS NULL OR jsonb_typeof(traits) <> 'object' THEN
        PERFORM ddb.invalid_parameter('traits must be a jsonb object');
    END IF;
    IF anonymous_id IS NOT NULL THEN
        linked := ddb.put_item('identityTable', jsonb_build_object(
            'anonymousId', uniflow.checked_id(anonymous_id, 'anonymousId'), 'userId', user_id,
            'linkedAt', ddb.iso8601(at)), true,
            condition => 'attribute_not_exists(anonymousId) OR userId = :u', vals => jsonb_build_object(':u', user_id));
    END IF;
    -- the META item first exists, so that each trait can be set on its own path
    PERFORM ddb.update_item('profilesTable', user_id::ddb.ddb_key, 'META',
        'SET traits = if_not_exists(traits, :empty), createdAt = if_not_exists(createdAt, :now), updatedAt = :now',
        vals => jsonb_build_object(':empty', '{}'::jsonb, ':now', ddb.iso8601(at)), return_values => 'NONE');
    FOR trait IN SELECT key, value FROM jsonb_each(traits) LOOP
        sets := sets || format(', traits.#t%s = :t%s', n, n);
        names := names || jsonb_build_object('#t' || n, trait.key);
        vals := vals || jsonb_build_object(':t' || n, trait.value);
        n := n + 1;
    END LOOP;
    PERFORM ddb.update_item('profilesTable', user_id::ddb.ddb_key, 'META', 'SET ' || sets,
        names => CASE WHEN n > 0 THEN names END, vals => vals, return_values => 'NONE');
EXCEPTION WHEN SQLSTATE 'YD002' THEN
    RAISE EXCEPTION USING ERRCODE = 'unique_violation',
        MESSAGE = format('anonymousId %s is already linked to another user', anonymous_id);
END $$;

-- U1: a user's merged profile (userId = X, sortKey = META), or NULL.
CREATE FUNCTION uniflow.get_profile(user_id text) RETURNS uniflow.profile
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN uniflow.profile_of(ddb.get_item('profilesTable', user_id::ddb.ddb_key, 'META'));

-- U2: a user's event history in timestamp order (sortKey begins_with EVENT#).
CREATE FUNCTION uniflow.event_history(user_id text) RETURNS SETOF uniflow.event
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT (uniflow.event_of(i)).* FROM ddb.query('profilesTable', user_id::ddb.ddb_key, 'begins_with', 'EVENT#') i;
END;

-- U3: the user an anonymous visitor was linked to, or NULL.
CREATE FUNCTION uniflow.resolve_identity(anonymous_id text) RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN ddb.get_item('identityTable', anonymous_id::ddb.ddb_key) ->> 'userId';

-- Creates a source; the write key is returned here once and never stored
-- (only its sha256 digest is).
CREATE FUNCTION uniflow.create_source(name text, id text DEFAULT gen_random_uuid()::text, at timestamptz DEFAULT now())
RETURNS uniflow.new_source
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    write_key text := 'wk_' || replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', '');
BEGIN
    PERFORM ddb.put_item('sourcesTable', jsonb_build_object(
        'id', uniflow.checked_id(id, 'source id'), 'name', name, 'writeKeyHash', uniflow.write_key_hash(write_key),
        'createdAt', ddb.iso8601(at)), condition => 'attribute_not_exists(id)');
    RETURN ROW(id, write_key)::uniflow.new_source;
EXCEPTION WHEN SQLSTATE 'YD002' THEN
    RAISE EXCEPTION USING ERRCODE = 'unique_violation', MESSAGE = format('source %s exists', id);
END $$;

-- U4: the source a write key belongs to, or NULL (writeKeyHashIndex,
-- writeKeyHash = sha256(key)).  Only digests are compared, so the time
-- taken does not depend on how much of a wrong key is right.
CREATE FUNCTION uniflow.authenticate(write_key text) RETURNS uniflow.source
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN (SELECT uniflow.source_of(i)
        FROM ddb.query('sourcesTable', uniflow.write_key_hash(coalesce(write_key, ''))::ddb.ddb_key,
                       index_name => 'writeKeyHashIndex', max_items => 1) i);

-- Creates or replaces a destination connector configuration.
CREATE FUNCTION uniflow.put_destination(id text, type text, config jsonb DEFAULT '{}') RETURNS void
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT ddb.put_item('destinationsTable', jsonb_build_object('id', uniflow.checked_id(id, 'destination id'),
                        'type', type, 'config', coalesce(config, '{}')));
END;

-- Creates or replaces a segment definition.
CREATE FUNCTION uniflow.put_segment(id text, name text, rules jsonb DEFAULT '{}') RETURNS void
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT ddb.put_item('segmentsTable', jsonb_build_object('id', uniflow.checked_id(id, 'segment id'),
                        'name', name, 'rules', coalesce(rules, '{}')));
END;

-- U6: a source, destination or segment by id ('source', 'destination', 'segment'), or NULL.
CREATE FUNCTION uniflow.get_by_id(kind text, id text) RETURNS jsonb
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF kind NOT IN ('source', 'destination', 'segment') THEN
        PERFORM ddb.invalid_parameter(format('kind is source, destination or segment, not %L', kind));
    END IF;
    RETURN ddb.get_item(kind || 's' || 'Table', id::ddb.ddb_key);
END $$;

-- Adds a user to a segment (the membership records the segment evaluation writes).
CREATE FUNCTION uniflow.add_segment_member(segment_id text, user_id text, at timestamptz DEFAULT now()) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF ddb.get_item('segmentsTable', segment_id::ddb.ddb_key) IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'no_data_found', MESSAGE = format('unknown segment %s', segment_id);
    END IF;
    PERFORM ddb.put_item('segmentMembersTable', jsonb_build_object('segmentId', segment_id,
        'userId', uniflow.checked_id(user_id, 'userId'), 'addedAt', ddb.iso8601(at)));
END $$;

-- U5: the users of a segment (segmentId = X).
CREATE FUNCTION uniflow.segment_members(segment_id text) RETURNS SETOF text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT i ->> 'userId' FROM ddb.query('segmentMembersTable', segment_id::ddb.ddb_key) i;
END;

-- Example data: a source, a visitor who is identified, events, a segment.
CREATE FUNCTION uniflow.load_example_data() RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM uniflow.create_source('website', id => 'src_web');
    PERFORM uniflow.track('user_123', 'Page Viewed', '{"path": "/pricing"}', '2025-03-08T10:00:00Z', 'msg-001');
    PERFORM uniflow.identify('user_123', '{"email": "jane@example.com", "plan": "free"}', 'abc-123', '2025-03-08T10:01:00Z');
    PERFORM uniflow.track('user_123', 'Signed Up', '{"plan": "free"}', '2025-03-08T10:02:00Z', 'msg-002');
    PERFORM uniflow.identify('user_123', '{"plan": "pro"}', at => '2025-03-09T09:00:00Z');
    PERFORM uniflow.track('user_123', 'Order Completed', '{"total": 4900}', '2025-03-09T09:05:00Z', 'msg-003');
    PERFORM uniflow.put_destination('dst_warehouse', 'webhook', '{"url": "https://example.com/hook"}');
    PERFORM uniflow.put_segment('seg_456', 'Pro users', '{"trait": "plan", "equals": "pro"}');
    PERFORM uniflow.add_segment_member('seg_456', 'user_123');
    RETURN 'user_123';
END $$;
