-- ---------------------------------------------------------------------------
-- Items (docs/items.md): natural jsonb in, natural jsonb out
-- ---------------------------------------------------------------------------

-- Expressions (docs/expressions.md) are optional: condition, update, filter
-- and projection take DynamoDB's expression language; names maps #name
-- placeholders to attribute names and vals maps :value placeholders to
-- natural values, e.g. vals => '{":one": 1}'.

CREATE FUNCTION ddb.put_item(table_name text, item jsonb, return_old boolean DEFAULT false,
                             condition text DEFAULT NULL, names jsonb DEFAULT NULL,
                             vals jsonb DEFAULT NULL)
RETURNS jsonb AS 'MODULE_PATHNAME', 'ddb_put_item' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION ddb.put_item(text, jsonb, boolean, text, jsonb, jsonb) IS
    'PutItem: writes (or replaces) an item if the condition holds; returns the replaced item when return_old';

CREATE FUNCTION ddb.get_item(table_name text, pk ddb.ddb_key, sk ddb.ddb_key DEFAULT NULL,
                             projection text DEFAULT NULL, names jsonb DEFAULT NULL)
RETURNS jsonb AS 'MODULE_PATHNAME', 'ddb_get_item' LANGUAGE C STABLE;
COMMENT ON FUNCTION ddb.get_item(text, ddb.ddb_key, ddb.ddb_key, text, jsonb) IS
    'GetItem: the item with this key (projected), or NULL (expired items are never returned)';

CREATE FUNCTION ddb.update_item(table_name text, pk ddb.ddb_key, sk ddb.ddb_key DEFAULT NULL,
                                "update" text DEFAULT NULL, condition text DEFAULT NULL,
                                names jsonb DEFAULT NULL, vals jsonb DEFAULT NULL,
                                return_values text DEFAULT 'ALL_NEW')
RETURNS jsonb AS 'MODULE_PATHNAME', 'ddb_update_item' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION ddb.update_item(text, ddb.ddb_key, ddb.ddb_key, text, text, jsonb, jsonb, text) IS
    'UpdateItem: applies an update expression (creating the item if absent) if the condition holds; '
    'returns what return_values names (NONE, ALL_OLD, UPDATED_OLD, ALL_NEW, UPDATED_NEW)';

CREATE FUNCTION ddb.delete_item(table_name text, pk ddb.ddb_key, sk ddb.ddb_key DEFAULT NULL,
                                condition text DEFAULT NULL, names jsonb DEFAULT NULL,
                                vals jsonb DEFAULT NULL)
RETURNS jsonb AS 'MODULE_PATHNAME', 'ddb_delete_item' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION ddb.delete_item(text, ddb.ddb_key, ddb.ddb_key, text, jsonb, jsonb) IS
    'DeleteItem: deletes the item with this key if the condition holds and returns it, or NULL';

CREATE FUNCTION ddb.query(table_name text, pk ddb.ddb_key, sk_condition text DEFAULT NULL,
                          sk ddb.ddb_key DEFAULT NULL, sk_end ddb.ddb_key DEFAULT NULL,
                          index_name text DEFAULT NULL, ascending boolean DEFAULT true,
                          max_items integer DEFAULT NULL, filter text DEFAULT NULL,
                          projection text DEFAULT NULL, names jsonb DEFAULT NULL,
                          vals jsonb DEFAULT NULL)
RETURNS SETOF jsonb AS 'MODULE_PATHNAME', 'ddb_query' LANGUAGE C STABLE;
COMMENT ON FUNCTION ddb.query(text, ddb.ddb_key, text, ddb.ddb_key, ddb.ddb_key, text, boolean, integer,
                              text, text, jsonb, jsonb) IS
    'Query: the items of one partition key (of the table or of index_name) in sort key order; '
    'sk_condition is =, <, <=, >, >=, between (sk .. sk_end), begins_with or under (segment prefix); '
    'max_items counts the items returned after the filter';

CREATE FUNCTION ddb.scan(table_name text, index_name text DEFAULT NULL, max_items integer DEFAULT NULL,
                         filter text DEFAULT NULL, projection text DEFAULT NULL,
                         names jsonb DEFAULT NULL, vals jsonb DEFAULT NULL)
RETURNS SETOF jsonb AS 'MODULE_PATHNAME', 'ddb_scan' LANGUAGE C STABLE;
COMMENT ON FUNCTION ddb.scan(text, text, integer, text, text, jsonb, jsonb) IS
    'Scan: every item of a table or index (kept by the filter, projected), in key order';

CREATE FUNCTION ddb.from_dynamodb(item jsonb) RETURNS jsonb
AS 'MODULE_PATHNAME', 'ddb_from_dynamodb' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION ddb.from_dynamodb(jsonb) IS
    'A DynamoDB-JSON item ({"a": {"S": "x"}}) as a natural item ({"a": "x"})';

CREATE FUNCTION ddb.to_dynamodb(item jsonb) RETURNS jsonb
AS 'MODULE_PATHNAME', 'ddb_to_dynamodb' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION ddb.to_dynamodb(jsonb) IS
    'A natural item as DynamoDB JSON: the twin of ddb.from_dynamodb';

-- A timestamp as DynamoDB designs write them: ISO 8601 in UTC with
-- milliseconds (2026-03-17T10:30:00.000Z), which sorts as it reads.
CREATE FUNCTION ddb.iso8601(ts timestamptz) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
RETURN pg_catalog.to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"');
