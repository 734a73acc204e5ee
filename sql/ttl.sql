-- ---------------------------------------------------------------------------
-- TTL (docs/ttl.md)
-- ---------------------------------------------------------------------------

-- TTL visibility as every read of the extension applies it (docs/ttl.md),
-- for views and plain SELECTs: no expiry, an expiry still ahead, or one
-- DynamoDB ignores because it is more than five years past.
CREATE FUNCTION ddb.ttl_visible(expires_at bigint) RETURNS boolean
LANGUAGE sql STABLE PARALLEL SAFE
RETURN expires_at IS NULL
    OR expires_at OPERATOR(pg_catalog.>) pg_catalog.floor(pg_catalog.date_part('epoch', pg_catalog.statement_timestamp()))::bigint
    OR expires_at OPERATOR(pg_catalog.<=) (pg_catalog.floor(pg_catalog.date_part('epoch', pg_catalog.statement_timestamp()))::bigint
                                           OPERATOR(pg_catalog.-) 157680000);

CREATE FUNCTION ddb.item_expiry(table_name text, item jsonb) RETURNS bigint
    AS 'MODULE_PATHNAME', 'ddb_item_expiry' LANGUAGE C STABLE STRICT;
COMMENT ON FUNCTION ddb.item_expiry(text, jsonb) IS
    'The TTL (epoch seconds) the table reads from an item: its TTL attribute when that is a number, else NULL';

-- UpdateTimeToLive: enables TTL on an attribute, or disables it.
CREATE FUNCTION ddb.update_time_to_live(table_name text, attribute_name text, enabled boolean DEFAULT true)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t ddb.tables;
BEGIN
    t := ddb.require_table(table_name, true);
    -- writers wait until every expiry follows the new setting (and then use it)
    EXECUTE format('LOCK TABLE %I.%I IN SHARE ROW EXCLUSIVE MODE', t.schema_name, t.relation_name);
    IF attribute_name IS NULL OR attribute_name = '' THEN
        PERFORM ddb.validation_error('1 validation error detected: Value null at ''timeToLiveSpecification.attributeName'' failed to satisfy constraint: Member must not be null');
    END IF;
    IF enabled AND t.ttl_attribute IS NOT NULL THEN
        PERFORM ddb.validation_error('TimeToLive is already enabled');
    END IF;
    IF NOT enabled AND t.ttl_attribute IS NULL THEN
        PERFORM ddb.validation_error('TimeToLive is already disabled');
    END IF;
    IF NOT enabled AND t.ttl_attribute <> attribute_name THEN
        PERFORM ddb.validation_error('TimeToLive is enabled on a different attribute: ' || t.ttl_attribute);
    END IF;
    UPDATE ddb.tables SET ttl_attribute = CASE WHEN enabled THEN attribute_name END
    WHERE tables.table_name = t.table_name;
    -- every item's expiry follows the new setting (and its GSI entries with it)
    EXECUTE format('UPDATE %I.%I SET expires_at = ddb.item_expiry(%L, item) '
                   'WHERE expires_at IS DISTINCT FROM ddb.item_expiry(%L, item)',
                   t.schema_name, t.relation_name, t.table_name, t.table_name);
END $$;

-- Deletes up to batch_size items whose TTL has passed (and their GSI entries),
-- skipping rows other transactions hold; returns how many it deleted.
CREATE FUNCTION ddb.expire(table_name text, batch_size integer DEFAULT 1000) RETURNS bigint
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t ddb.tables;
    now_epoch bigint := floor(extract(epoch FROM statement_timestamp()))::bigint;  -- whole seconds passed, as the readers count
    deleted bigint;
BEGIN
    t := ddb.require_table(table_name);
    IF batch_size IS NULL OR batch_size < 1 THEN
        PERFORM ddb.validation_error('batch_size must be at least 1');
    END IF;
    -- with TTL disabled nothing expires, whatever expires_at still says
    IF t.ttl_attribute IS NULL THEN
        RETURN 0;
    END IF;
    -- DynamoDB ignores TTLs more than five years in the past
    EXECUTE format(
        'WITH doomed AS (SELECT pk%s FROM %I.%I WHERE expires_at <= $1 AND expires_at > $1 - 157680000 '
        'LIMIT $2 FOR UPDATE SKIP LOCKED) '
        'DELETE FROM %I.%I t USING doomed d WHERE t.pk = d.pk%s',
        CASE WHEN t.range_key IS NOT NULL THEN ', sk' ELSE '' END,
        t.schema_name, t.relation_name, t.schema_name, t.relation_name,
        CASE WHEN t.range_key IS NOT NULL THEN ' AND t.sk = d.sk' ELSE '' END)
    USING now_epoch, batch_size;
    GET DIAGNOSTICS deleted = ROW_COUNT;
    RETURN deleted;
END $$;
