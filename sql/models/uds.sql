
-- ===========================================================================
-- Model uds, the user data store (../shared/catalog.md D1-D7;
-- docs/models/uds.md)
--
-- calculatedBehavior (user, key); apps (appName); appDataJson and
-- appDataBlob (appUser = <appName>#<user>, key) with the GSI userIndex
-- (user, appKey = <appName>#<key>, keys only); appUsage (appUser) holds the
-- bytes and items each user stores in each app, kept exact by a trigger in
-- the writing transaction, which also refuses a write that would go over
-- the app's quota.
-- ===========================================================================

CREATE SCHEMA uds;
COMMENT ON SCHEMA uds IS 'The uds model (ddb_model): calculated behaviour, apps, per-user app data with quotas';

SELECT ddb.create_table('calculatedBehavior', 'user', 'S', 'key', 'S', schema_name => 'uds', partitions => 0);
SELECT ddb.create_table('apps', 'appName', 'S', schema_name => 'uds', partitions => 0);
SELECT ddb.create_table('appDataJson', 'appUser', 'S', 'key', 'S', schema_name => 'uds', partitions => 0);
SELECT ddb.create_index('appDataJson', 'userIndex', 'user', 'S', 'appKey', 'S', projection_type => 'KEYS_ONLY');
SELECT ddb.create_table('appDataBlob', 'appUser', 'S', 'key', 'S', schema_name => 'uds', partitions => 0);
SELECT ddb.create_index('appDataBlob', 'userIndex', 'user', 'S', 'appKey', 'S', projection_type => 'KEYS_ONLY');
SELECT ddb.create_table('appUsage', 'appUser', 'S', schema_name => 'uds', partitions => 0);
SELECT ddb.own_model_table('uds', t)
FROM unnest(ARRAY['calculatedBehavior', 'apps', 'appDataJson', 'appDataBlob', 'appUsage']) t;

-- The app that holds created content (data.user.*): always there, never registered.
CREATE FUNCTION uds.created_content_app() RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN 'hmh';

-- The quota of an app without one of its own: 10 MiB per user.
CREATE FUNCTION uds.default_quota_bytes() RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN 10485760;

-- An app name: 1 to 100 of [A-Za-z0-9_.-], so that "<appName>#" is unambiguous.
CREATE FUNCTION uds.checked_app(app text) RETURNS text
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF app IS NULL OR app !~ '^[A-Za-z0-9_.-]{1,100}$' THEN
        PERFORM ddb.invalid_parameter(format('an app name is 1 to 100 of A-Z a-z 0-9 _ . -, not %L', app));
    END IF;
    RETURN app;
END $$;

-- A user id: 1 to 200 characters without '#' or spaces.
CREATE FUNCTION uds.checked_user(user_id text) RETURNS text
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF user_id IS NULL OR user_id !~ '^[^#\s]{1,200}$' THEN
        PERFORM ddb.invalid_parameter(format('a user id is 1 to 200 characters without # or spaces, not %L', user_id));
    END IF;
    RETURN user_id;
END $$;

-- A data key: 1 to 1024 bytes, as DynamoDB's sort keys.
CREATE FUNCTION uds.checked_key(key text) RETURNS text
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF key IS NULL OR key = '' OR octet_length(key) > 1024 THEN
        PERFORM ddb.invalid_parameter('a data key is 1 to 1024 bytes');
    END IF;
    RETURN key;
END $$;

-- The hash key of an app's data of a user: <appName>#<user>.
CREATE FUNCTION uds.app_user(app text, user_id text) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
RETURN uds.checked_app(app) || '#' || uds.checked_user(user_id);

-- The quota of an app, in bytes per user.
CREATE FUNCTION uds.quota_of(app text) RETURNS bigint
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN coalesce((ddb.get_item('apps', app::ddb.ddb_key) ->> 'quotaBytes')::bigint, uds.default_quota_bytes());

-- Checks the shape of an appDataJson or appDataBlob item (BEFORE INSERT OR
-- UPDATE), whatever path wrote it: keys that agree with appName, user and
-- key, a registered app, a binary value in appDataBlob.
CREATE FUNCTION uds.check_app_data() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    i jsonb := NEW.item;
BEGIN
    IF NOT (i ? 'appName' AND i ? 'user' AND i ? 'value' AND i ? 'appKey') THEN
        PERFORM ddb.invalid_parameter(format('%s item %s/%s needs appName, user, appKey and value', TG_TABLE_NAME, NEW.pk, NEW.sk));
    END IF;
    IF NEW.pk::text <> uds.app_user(i ->> 'appName', i ->> 'user') OR i ->> 'appKey' <> (i ->> 'appName') || '#' || NEW.sk::text THEN
        PERFORM ddb.invalid_parameter(format('%s item %s/%s: appUser must be <appName>#<user> and appKey <appName>#<key>',
                                             TG_TABLE_NAME, NEW.pk, NEW.sk));
    END IF;
    IF i ->> 'appName' <> uds.created_content_app() AND ddb.get_item('apps', (i ->> 'appName')::ddb.ddb_key) IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'no_data_found', MESSAGE = format('unknown app %s', i ->> 'appName');
    END IF;
    IF octet_length(i ->> 'appKey') > 1024 THEN
        PERFORM ddb.invalid_parameter(format('%s item %s/%s: the app name and the key together exceed 1024 bytes',
                                             TG_TABLE_NAME, NEW.pk, NEW.sk));
    END IF;
    IF TG_TABLE_NAME = 'appDataBlob' AND (jsonb_typeof(i -> 'value') <> 'object' OR NOT i -> 'value' ? '$B'
                                          OR (SELECT count(*) FROM jsonb_object_keys(i -> 'value')) <> 1) THEN
        PERFORM ddb.invalid_parameter(format('appDataBlob item %s/%s: value must be a binary', NEW.pk, NEW.sk));
    END IF;
    RETURN NEW;
END $$;

-- D7: keeps appUsage exact (AFTER each write of app data, in its
-- transaction) and refuses a write that would take the user over the app's
-- quota.  The usage item's row lock orders concurrent writers of one
-- (app, user), so the figure and the check see every committed write.
CREATE FUNCTION uds.track_usage() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    item jsonb := CASE WHEN TG_OP = 'DELETE' THEN OLD.item ELSE NEW.item END;
    bytes bigint := coalesce(CASE WHEN TG_OP <> 'DELETE' THEN NEW.item_size END, 0)
                    - coalesce(CASE WHEN TG_OP <> 'INSERT' THEN OLD.item_size END, 0);
    items integer := CASE TG_OP WHEN 'INSERT' THEN 1 WHEN 'DELETE' THEN -1 ELSE 0 END;
    quota bigint;
BEGIN
    IF bytes = 0 AND items = 0 THEN
        RETURN NULL;
    END IF;
    -- the quota (a read of the app) matters only to a write that grows the data
    IF bytes > 0 THEN
        quota := uds.quota_of(item ->> 'appName');
    END IF;
    PERFORM ddb.update_item('appUsage', ((item ->> 'appName') || '#' || (item ->> 'user'))::ddb.ddb_key, NULL,
        'SET appName = :a, #u = :u ADD #b :d, #n :k',
        condition => CASE WHEN bytes > 0 THEN 'attribute_not_exists(#b) AND :d <= :q OR #b <= :room' END,
        names => '{"#b": "bytes", "#n": "items", "#u": "user"}',
        vals => jsonb_build_object(':a', item ->> 'appName', ':u', item ->> 'user', ':d', bytes, ':k', items)
                || CASE WHEN bytes > 0 THEN jsonb_build_object(':q', quota, ':room', quota - bytes) ELSE '{}' END,
        return_values => 'NONE');
    RETURN NULL;
EXCEPTION WHEN SQLSTATE 'YD002' THEN
    RAISE EXCEPTION USING ERRCODE = 'check_violation',
        MESSAGE = format('D7: quota exceeded: %s would store more than %s bytes in app %s',
                         item ->> 'user', quota, item ->> 'appName');
END $$;

-- Checks an apps item: a valid name, not hmh, a quota of whole bytes.
CREATE FUNCTION uds.check_app() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF uds.checked_app(NEW.pk::text) = uds.created_content_app() THEN
        PERFORM ddb.invalid_parameter(format('the app name %s is reserved for created content', NEW.pk));
    END IF;
    IF NEW.item ? 'quotaBytes' AND (jsonb_typeof(NEW.item -> 'quotaBytes') <> 'number'
       OR (NEW.item ->> 'quotaBytes')::numeric < 0 OR (NEW.item ->> 'quotaBytes')::numeric <> trunc((NEW.item ->> 'quotaBytes')::numeric)) THEN
        PERFORM ddb.invalid_parameter(format('app %s: quotaBytes is a whole number of bytes, 0 or more', NEW.pk));
    END IF;
    RETURN NEW;
END $$;

-- D7: appUsage is written by the usage trigger and by reconcile only, so
-- that no write path can move a user's figure away from the data.
CREATE FUNCTION uds.guard_usage() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF pg_trigger_depth() < 2 AND current_setting('uds.reconciling', true) IS DISTINCT FROM 'on' THEN
        PERFORM ddb.invalid_parameter('appUsage is kept by the extension from the app data (D7); it is not written directly');
    END IF;
    RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
END $$;

CREATE TRIGGER check_item BEFORE INSERT OR UPDATE ON uds."apps"
    FOR EACH ROW EXECUTE FUNCTION uds.check_app();
CREATE TRIGGER guard_usage BEFORE INSERT OR UPDATE OR DELETE ON uds."appUsage"
    FOR EACH ROW EXECUTE FUNCTION uds.guard_usage();
CREATE TRIGGER check_item BEFORE INSERT OR UPDATE ON uds."appDataJson"
    FOR EACH ROW EXECUTE FUNCTION uds.check_app_data();
CREATE TRIGGER check_item BEFORE INSERT OR UPDATE ON uds."appDataBlob"
    FOR EACH ROW EXECUTE FUNCTION uds.check_app_data();
CREATE TRIGGER track_usage AFTER INSERT OR UPDATE OR DELETE ON uds."appDataJson"
    FOR EACH ROW EXECUTE FUNCTION uds.track_usage();
CREATE TRIGGER track_usage AFTER INSERT OR UPDATE OR DELETE ON uds."appDataBlob"
    FOR EACH ROW EXECUTE FUNCTION uds.track_usage();

CREATE VIEW uds.calculated_behavior AS
    SELECT t.pk::text AS user_id, t.sk::text AS key, t.item -> 'value' AS value FROM uds."calculatedBehavior" t;
COMMENT ON VIEW uds.calculated_behavior IS 'uds: every calculated behaviour value';
CREATE VIEW uds.app_data AS
    SELECT 'json' AS kind, t.item ->> 'appName' AS app, t.item ->> 'user' AS user_id, t.sk::text AS key,
           t.item -> 'value' AS value, t.item_size AS bytes
    FROM uds."appDataJson" t
    UNION ALL
    SELECT 'blob', t.item ->> 'appName', t.item ->> 'user', t.sk::text, t.item -> 'value', t.item_size
    FROM uds."appDataBlob" t;
COMMENT ON VIEW uds.app_data IS 'uds: every JSON and blob value, with its DynamoDB item size';
CREATE VIEW uds.usage AS
    SELECT t.item ->> 'appName' AS app, t.item ->> 'user' AS user_id, (t.item ->> 'bytes')::bigint AS bytes,
           (t.item ->> 'items')::integer AS items, uds.quota_of(t.item ->> 'appName') AS quota_bytes
    FROM uds."appUsage" t;
COMMENT ON VIEW uds.usage IS 'uds: the stored usage of each user in each app (D7)';

-- Registers an app, with its quota per user (NULL: the default, 10 MiB).
CREATE FUNCTION uds.register_app(app text, quota_bytes bigint DEFAULT NULL) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF uds.checked_app(app) = uds.created_content_app() THEN
        PERFORM ddb.invalid_parameter(format('the app name %s is reserved for created content', app));
    END IF;
    IF quota_bytes IS NOT NULL AND quota_bytes < 0 THEN
        PERFORM ddb.invalid_parameter('a quota is a number of bytes, 0 or more');
    END IF;
    PERFORM ddb.put_item('apps', jsonb_build_object('appName', app)
                                 || CASE WHEN quota_bytes IS NULL THEN '{}'::jsonb
                                         ELSE jsonb_build_object('quotaBytes', quota_bytes) END);
END $$;

-- D1 data.cb.*: a calculated behaviour value of a user, or NULL.
CREATE FUNCTION uds.cb_get(user_id text, key text) RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN ddb.get_item('calculatedBehavior', uds.checked_user(user_id)::ddb.ddb_key, key::ddb.ddb_key) -> 'value';

-- D1: stores a calculated behaviour value.
CREATE FUNCTION uds.cb_put(user_id text, key text, value jsonb) RETURNS void
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT ddb.put_item('calculatedBehavior', jsonb_build_object('user', uds.checked_user(user_id),
                        'key', uds.checked_key(key), 'value', value));
END;

-- D1: every calculated behaviour of a user, by key.
CREATE FUNCTION uds.cb_list(user_id text) RETURNS TABLE (key text, value jsonb)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT i ->> 'key', i -> 'value' FROM ddb.query('calculatedBehavior', uds.checked_user(user_id)::ddb.ddb_key) i;
END;

-- D3 data.app.*: stores a JSON value of a user in an app.
CREATE FUNCTION uds.json_put(app text, user_id text, key text, value jsonb) RETURNS void
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT ddb.put_item('appDataJson', jsonb_build_object('appUser', uds.app_user(app, user_id),
                        'key', uds.checked_key(key), 'appName', app, 'user', user_id, 'appKey', app || '#' || key,
                        'value', value));
END;

-- D3: a JSON value, or NULL.
CREATE FUNCTION uds.json_get(app text, user_id text, key text) RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN ddb.get_item('appDataJson', uds.app_user(app, user_id)::ddb.ddb_key, key::ddb.ddb_key) -> 'value';

-- D3: stores a binary value of a user in an app.
CREATE FUNCTION uds.blob_put(app text, user_id text, key text, value bytea) RETURNS void
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT ddb.put_item('appDataBlob', jsonb_build_object('appUser', uds.app_user(app, user_id),
                        'key', uds.checked_key(key), 'appName', app, 'user', user_id, 'appKey', app || '#' || key,
                        'value', jsonb_build_object('$B', translate(encode(value, 'base64'), E'\n', ''))));
END;

-- D3: a binary value, or NULL.
CREATE FUNCTION uds.blob_get(app text, user_id text, key text) RETURNS bytea
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN decode(ddb.get_item('appDataBlob', uds.app_user(app, user_id)::ddb.ddb_key, key::ddb.ddb_key) -> 'value' ->> '$B',
              'base64');

-- D3: deletes a value of either kind ('json' or 'blob'); true when there was one.
CREATE FUNCTION uds.data_delete(kind text, app text, user_id text, key text) RETURNS boolean
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF kind NOT IN ('json', 'blob') THEN
        PERFORM ddb.invalid_parameter(format('kind is json or blob, not %L', kind));
    END IF;
    RETURN ddb.delete_item(CASE kind WHEN 'json' THEN 'appDataJson' ELSE 'appDataBlob' END,
                           uds.app_user(app, user_id)::ddb.ddb_key, key::ddb.ddb_key) IS NOT NULL;
END $$;

-- D2 data.user.*: created content, stored as app data of the reserved app hmh.
CREATE FUNCTION uds.content_put(user_id text, key text, value jsonb) RETURNS void
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
RETURN uds.json_put(uds.created_content_app(), user_id, key, value);

-- D2: a created content value, or NULL.
CREATE FUNCTION uds.content_get(user_id text, key text) RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN uds.json_get(uds.created_content_app(), user_id, key);

-- D4: a user's usage of an app, recomputed from the data: both tables,
-- hash key <appName>#<user>, every key, DynamoDB item sizes, in the pages a
-- Query reads them in (a page ends before the item that would take it past
-- 1 MB), one row per page.
CREATE FUNCTION uds.quota_pages(app text, user_id text)
RETURNS TABLE (table_name text, page integer, items bigint, bytes bigint, last_key text)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    WITH RECURSIVE rows AS (
        SELECT d.table_name, d.key, d.size, row_number() OVER (PARTITION BY d.table_name ORDER BY d.key::ddb.ddb_key) AS n
        FROM (SELECT 'appDataJson' AS table_name, t.sk::text AS key, t.item_size::bigint AS size
              FROM uds."appDataJson" t WHERE t.pk = uds.app_user(app, user_id)::ddb.ddb_key
              UNION ALL
              SELECT 'appDataBlob', t.sk::text, t.item_size
              FROM uds."appDataBlob" t WHERE t.pk = uds.app_user(app, user_id)::ddb.ddb_key) d),
    paged AS (
        SELECT r.table_name, r.key, r.size, r.n, 1 AS page, r.size AS page_bytes FROM rows r WHERE r.n = 1
        UNION ALL
        SELECT r.table_name, r.key, r.size, r.n,
               p.page + (p.page_bytes + r.size > 1048576)::integer,
               CASE WHEN p.page_bytes + r.size > 1048576 THEN r.size ELSE p.page_bytes + r.size END
        FROM paged p JOIN rows r ON r.table_name = p.table_name AND r.n = p.n + 1)
    SELECT table_name, page, count(*), sum(size)::bigint, (array_agg(key ORDER BY n DESC))[1]
    FROM paged GROUP BY table_name, page ORDER BY table_name, page;
END;

-- D4: a user's usage of an app in bytes, recomputed from the data.
CREATE FUNCTION uds.quota_used(app text, user_id text) RETURNS bigint
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN (SELECT coalesce(sum(t.item_size), 0)::bigint FROM uds."appDataJson" t WHERE t.pk = uds.app_user(app, user_id)::ddb.ddb_key)
     + (SELECT coalesce(sum(t.item_size), 0)::bigint FROM uds."appDataBlob" t WHERE t.pk = uds.app_user(app, user_id)::ddb.ddb_key);

-- D5 data.admin.users: the users storing data for an app, across both
-- tables, keys only, a page of at most page_size after after_user.
CREATE FUNCTION uds.app_users(app text, after_user text DEFAULT NULL, page_size integer DEFAULT 100)
RETURNS SETOF text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT DISTINCT substr(k, length(app) + 2) COLLATE "C" AS user_id
    FROM (SELECT t.pk::text AS k FROM uds."appDataJson" t WHERE t.pk ^@ (uds.checked_app(app) || '#')::ddb.ddb_key
          UNION ALL
          SELECT t.pk::text FROM uds."appDataBlob" t WHERE t.pk ^@ (uds.checked_app(app) || '#')::ddb.ddb_key) keys
    WHERE after_user IS NULL OR substr(k, length(app) + 2) COLLATE "C" > after_user COLLATE "C"
    ORDER BY 1 LIMIT page_size;
END;

-- D6 data.admin.apps: the apps a user stores data in, through the userIndex
-- of both tables, keys only, a page of at most page_size after after_app.
CREATE FUNCTION uds.user_apps(user_id text, after_app text DEFAULT NULL, page_size integer DEFAULT 100)
RETURNS SETOF text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT DISTINCT split_part(k, '#', 1) COLLATE "C" AS app
    FROM (SELECT i ->> 'appKey' AS k FROM ddb.query('appDataJson', uds.checked_user(user_id)::ddb.ddb_key,
                                                     index_name => 'userIndex') i
          UNION ALL
          SELECT i ->> 'appKey' FROM ddb.query('appDataBlob', uds.checked_user(user_id)::ddb.ddb_key,
                                               index_name => 'userIndex') i) keys
    WHERE after_app IS NULL OR split_part(k, '#', 1) COLLATE "C" > after_app COLLATE "C"
    ORDER BY 1 LIMIT page_size;
END;

-- D7: the stored usage of each (app, user) against the usage recomputed
-- from the data; the rows that drifted.  With repair, the stored figures
-- are set to the recomputed ones (in the same transaction).
CREATE FUNCTION uds.reconcile(repair boolean DEFAULT false)
RETURNS TABLE (app text, user_id text, stored_bytes bigint, actual_bytes bigint, stored_items integer, actual_items integer)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
    drift record;
BEGIN
    FOR drift IN
        WITH actual AS (
            SELECT d.app, d.user_id, sum(d.bytes)::bigint AS bytes, count(*)::integer AS items
            FROM uds.app_data d GROUP BY d.app, d.user_id)
        SELECT coalesce(s.app, a.app) AS app, coalesce(s.user_id, a.user_id) AS user_id,
               coalesce(s.bytes, 0) AS stored_bytes, coalesce(a.bytes, 0) AS actual_bytes,
               coalesce(s.items, 0) AS stored_items, coalesce(a.items, 0) AS actual_items
        FROM uds.usage s FULL JOIN actual a ON a.app = s.app AND a.user_id = s.user_id
        WHERE coalesce(s.bytes, 0) <> coalesce(a.bytes, 0) OR coalesce(s.items, 0) <> coalesce(a.items, 0)
        ORDER BY 1, 2
    LOOP
        app := drift.app;
        user_id := drift.user_id;
        stored_bytes := drift.stored_bytes;
        actual_bytes := drift.actual_bytes;
        stored_items := drift.stored_items;
        actual_items := drift.actual_items;
        RETURN NEXT;
        IF repair THEN
            -- writers of this (app, user) hold the usage item's lock until they commit: wait for them,
            -- then count again, so that no write is left out of the figure
            PERFORM FROM uds."appUsage" t WHERE t.pk = (drift.app || '#' || drift.user_id)::ddb.ddb_key FOR UPDATE;
            PERFORM set_config('uds.reconciling', 'on', true);
            PERFORM ddb.put_item('appUsage', jsonb_build_object('appUser', drift.app || '#' || drift.user_id,
                                 'appName', drift.app, 'user', drift.user_id,
                                 'bytes', uds.quota_used(drift.app, drift.user_id),
                                 'items', (SELECT count(*) FROM uds.app_data d
                                           WHERE d.app = drift.app AND d.user_id = drift.user_id)));
            PERFORM set_config('uds.reconciling', 'off', true);
        END IF;
    END LOOP;
END $$;

-- Example data: an app with a small quota, a user's calculated behaviour,
-- JSON and blob data, created content.
CREATE FUNCTION uds.load_example_data() RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM uds.register_app('reader', quota_bytes => 4096);
    PERFORM uds.register_app('mathtutor');
    PERFORM uds.cb_put('u-100', 'reading.level', '{"level": 4, "updated": "2026-03-01"}');
    PERFORM uds.cb_put('u-100', 'streak.days', '12');
    PERFORM uds.json_put('reader', 'u-100', 'bookmarks', '[{"book": "b-1", "page": 42}]');
    PERFORM uds.json_put('reader', 'u-100', 'settings', '{"font": "large", "theme": "dark"}');
    PERFORM uds.blob_put('reader', 'u-100', 'avatar.png', '\x89504e470d0a1a0a'::bytea);
    PERFORM uds.json_put('mathtutor', 'u-100', 'progress', '{"unit": 3}');
    PERFORM uds.json_put('reader', 'u-200', 'settings', '{"font": "small"}');
    PERFORM uds.content_put('u-100', 'note-1', '{"text": "My first note"}');
    RETURN 'u-100';
END $$;
