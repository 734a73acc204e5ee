-- ---------------------------------------------------------------------------
-- Attributes kept unique across the nodes.  A node keeps an attribute unique
-- with a unique index of a table's relation on (item ->> 'A') (user_service's
-- S7: one user per email address, docs/models/user_service.md); on a sharded
-- deployment two items with one value may live on two nodes.  So a write
-- through the router that sets such an attribute first locks the value on
-- the router (writers of one value take turns until the first one's request
-- has ended, its node's commit included) and looks for it on every node
-- through a global index whose partition key is the attribute; an item of
-- another key that holds it is a conflict, refused with the error a node's
-- unique index raises (SQLSTATE 23505, ConditionalCheckFailedException).
-- ---------------------------------------------------------------------------

-- The unique attributes of the tables, with the global index that finds an item by one.
CREATE VIEW ddb_router.unique_attributes AS
SELECT t.table_name, a.attribute, i.index_name, c.relname AS unique_index
FROM ddb.tables t
JOIN pg_catalog.pg_index x ON x.indrelid = to_regclass(format('%I.%I', t.schema_name, t.relation_name))
                           AND x.indisunique AND x.indnatts = 1 AND x.indexprs IS NOT NULL
CROSS JOIN LATERAL (SELECT substring(pg_catalog.pg_get_indexdef(x.indexrelid, 1, false)
                                     FROM $re$^\(\(item ->> '([^']+)'::text\)\)$$re$) AS attribute) a
JOIN ddb.indexes i ON i.table_name = t.table_name AND i.hash_key = a.attribute AND NOT i.local AND i.extra_hash_keys IS NULL
JOIN pg_catalog.pg_class c ON c.oid = x.indexrelid
WHERE a.attribute IS NOT NULL;
COMMENT ON VIEW ddb_router.unique_attributes IS 'Attributes the nodes keep unique (a unique index on item ->> attribute), kept unique across them';

-- The value an update sets an attribute to (an AttributeValue), null when it leaves it or
-- removes it; raises when it sets it any other way than to a value (SET A = :v).
CREATE FUNCTION ddb_router.updated_value(spec jsonb, attribute text) RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    expression text := spec->>'UpdateExpression';
    refs text[] := ARRAY[attribute] || ARRAY(SELECT n FROM jsonb_each_text(spec->'ExpressionAttributeNames') e(n, v) WHERE v = attribute);
    ref text;
    placeholder text;
    message text;
BEGIN
    IF spec->'AttributeUpdates'->attribute IS NOT NULL THEN
        IF coalesce(spec->'AttributeUpdates'->attribute->>'Action', 'PUT') = 'DELETE' THEN
            RETURN NULL;
        END IF;
        RETURN spec->'AttributeUpdates'->attribute->'Value';
    END IF;
    IF expression IS NULL THEN
        RETURN NULL;
    END IF;
    FOREACH ref IN ARRAY refs LOOP
        CONTINUE WHEN expression !~ ('(^|[^A-Za-z0-9_#.])' || regexp_replace(ref, '([^A-Za-z0-9_])', '\\\1', 'g') || '($|[^A-Za-z0-9_])');
        placeholder := substring(expression FROM '(?:^|[^A-Za-z0-9_#.])' || regexp_replace(ref, '([^A-Za-z0-9_])', '\\\1', 'g')
                                                 || '\s*=\s*(:[A-Za-z0-9_]+)\s*(?:,|$|REMOVE|ADD|DELETE|SET)');
        IF placeholder IS NOT NULL THEN
            RETURN spec->'ExpressionAttributeValues'->placeholder;
        END IF;
        -- named in a REMOVE clause (and in no SET): the value goes, nothing to claim
        CONTINUE WHEN expression ~* ('REMOVE[^=]*(^|[^A-Za-z0-9_#.])' || regexp_replace(ref, '([^A-Za-z0-9_])', '\\\1', 'g') || '($|[^A-Za-z0-9_])')
                      AND expression !~* 'SET';
        message := format('On a sharded deployment %s keeps %s unique across its nodes: an update may only set it to a value (SET %s = :value) or remove it',
                          spec->>'TableName', attribute, attribute);
        PERFORM ddb_router.raise_error('YD001', message, NULL, NULL);
    END LOOP;
    RETURN NULL;
END
$$;

-- The items a write request puts or updates: (operation, the Put's or Update's request).
CREATE FUNCTION ddb_router.written_items(operation text, request jsonb)
RETURNS TABLE (kind text, spec jsonb)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT operation, request WHERE operation IN ('PutItem', 'UpdateItem')
    UNION ALL
    SELECT 'PutItem', jsonb_build_object('TableName', t.name, 'Item', w->'PutRequest'->'Item')
    FROM jsonb_each(CASE WHEN operation = 'BatchWriteItem' AND jsonb_typeof(request->'RequestItems') = 'object'
                         THEN request->'RequestItems' ELSE '{}' END) t(name, list),
         jsonb_array_elements(CASE WHEN jsonb_typeof(t.list) = 'array' THEN t.list ELSE '[]' END) w
    WHERE jsonb_typeof(w->'PutRequest'->'Item') = 'object'
    UNION ALL
    SELECT CASE a.action WHEN 'Put' THEN 'PutItem' ELSE 'UpdateItem' END, a.spec
    FROM jsonb_array_elements(CASE WHEN operation = 'TransactWriteItems' AND jsonb_typeof(request->'TransactItems') = 'array'
                                   THEN request->'TransactItems' ELSE '[]' END) x(item),
         jsonb_each(CASE WHEN jsonb_typeof(x.item) = 'object' THEN x.item ELSE '{}' END) a(action, spec)
    WHERE a.action IN ('Put', 'Update') AND jsonb_typeof(a.spec) = 'object'
    UNION ALL
    SELECT s.operation, s.request
    FROM ddb_router.statement_routes(CASE WHEN written_items.operation = 'ExecuteStatement' THEN jsonb_build_array(request)
                                          WHEN jsonb_typeof(request->'Statements') = 'array' THEN request->'Statements'
                                          WHEN jsonb_typeof(request->'TransactStatements') = 'array' THEN request->'TransactStatements'
                                          ELSE '[]' END) s
    WHERE written_items.operation IN ('ExecuteStatement', 'BatchExecuteStatement', 'ExecuteTransaction')
      AND s.operation IN ('PutItem', 'UpdateItem')
$$;

-- Claims a unique value a write sets (claim: its attribute, \x01, its value), until the transaction
-- ends: one of the server's own locks (src/ddb_locks.h), for a caller that may act as the role
-- (NULL: itself), a role that may write the table.
CREATE FUNCTION ddb_router.claim_unique(role_name name, table_name text, claim text) RETURNS void
    AS 'MODULE_PATHNAME', 'ddb_router_claim_unique' LANGUAGE C VOLATILE;

-- Locks each unique value a write request sets and refuses it, as a node's unique index
-- would, when an item of another key holds one; the values it locked.
CREATE FUNCTION ddb_router.guard_unique(role_name name, operation text, request jsonb) RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    claim record;
    holder jsonb;
    claimed jsonb := '[]';
BEGIN
    FOR claim IN
        SELECT u.table_name, u.attribute, u.index_name, u.unique_index, v.value,
               coalesce(w.spec->'Item', w.spec->'Key') AS item, t.hash_key, t.range_key
        FROM ddb_router.written_items(operation, request) w
        JOIN ddb_router.unique_attributes u ON u.table_name = w.spec->>'TableName'
        JOIN ddb.tables t ON t.table_name = u.table_name
        CROSS JOIN LATERAL (SELECT CASE w.kind WHEN 'PutItem' THEN w.spec->'Item'->u.attribute
                                               ELSE ddb_router.updated_value(w.spec, u.attribute) END AS value) v
        WHERE jsonb_typeof(v.value) = 'object'
        ORDER BY hashtext(u.table_name || E'\x01' || u.attribute || E'\x01' || v.value::text)
    LOOP
        PERFORM ddb_router.claim_unique(role_name, claim.table_name, claim.attribute || E'\x01' || claim.value::text);
        claimed := claimed || jsonb_build_array(claim.value);
        FOR holder IN
            SELECT i FROM jsonb_array_elements(ddb_router.answer_response(ddb_router.query_global_index(NULL, 'Query',
                jsonb_build_object('TableName', claim.table_name, 'IndexName', claim.index_name,
                                   'KeyConditionExpression', '#a = :v',
                                   'ExpressionAttributeNames', jsonb_build_object('#a', claim.attribute),
                                   'ExpressionAttributeValues', jsonb_build_object(':v', claim.value))))->'Items') i
        LOOP
            CONTINUE WHEN holder->claim.hash_key = claim.item->claim.hash_key
                      AND (claim.range_key IS NULL OR holder->claim.range_key = claim.item->claim.range_key);
            RAISE EXCEPTION 'duplicate key value violates unique constraint "%"', claim.unique_index
                USING ERRCODE = 'unique_violation',
                      HINT = format('On a sharded deployment %s keeps %s unique across its nodes: another item holds this value.',
                                    claim.table_name, claim.attribute),
                      DETAIL = jsonb_build_object('__type', 'com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException',
                                                  'message', 'The conditional request failed')::text;
        END LOOP;
    END LOOP;
    RETURN claimed::text;
END
$$;
