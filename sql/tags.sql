-- ---------------------------------------------------------------------------
-- Tags (TagResource, UntagResource, ListTagsOfResource)
-- ---------------------------------------------------------------------------

-- The table a resource ARN names (arn:aws:dynamodb:<region>:<account>:table/<name>),
-- raising YD001 (validation) for a malformed ARN and YD010 (access denied),
-- as DynamoDB does, for one that names no table here.
CREATE FUNCTION ddb.table_of_arn(arn text) RETURNS ddb.tables
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    name text := ddb.arn_table_name(arn);
    t ddb.tables;
BEGIN
    IF name IS NULL OR name !~ '^[a-zA-Z0-9_.-]{3,255}$' THEN
        PERFORM ddb.validation_error(format('Invalid TableArn: Invalid ResourceArn provided as input %s', arn));
    END IF;
    SELECT * INTO t FROM ddb.tables WHERE tables.table_name = name;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'YD010',
            MESSAGE = format('User is not authorized to perform: dynamodb:ListTagsOfResource on resource: %s', arn);
    END IF;
    RETURN t;
END $$;

-- The Tags of a request (TagResource's, CreateTable's) as an object of
-- key to value, checked: each key 1 to 128 characters, each value given and
-- at most 256, and with the tags a table has already (current), at most 50.
CREATE FUNCTION ddb.request_tags(tags jsonb, current jsonb) RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    added jsonb;
BEGIN
    IF jsonb_typeof(tags) IS DISTINCT FROM 'array' OR jsonb_array_length(tags) = 0 THEN
        PERFORM ddb.validation_error('1 validation error detected: Value null at ''tags'' failed to satisfy constraint: Member must not be null');
    END IF;
    IF EXISTS (SELECT FROM jsonb_array_elements(tags) e
               WHERE jsonb_typeof(e) <> 'object' OR coalesce(length(e->>'Key'), 0) NOT BETWEEN 1 AND 128
                  OR e->>'Value' IS NULL OR length(e->>'Value') > 256) THEN
        PERFORM ddb.validation_error('One or more parameter values were invalid: a tag key is 1 to 128 characters and its value at most 256');
    END IF;
    SELECT jsonb_object_agg(e->>'Key', e->>'Value') INTO added FROM jsonb_array_elements(tags) e;
    IF (SELECT count(*) FROM jsonb_object_keys(current || added)) > 50 THEN
        RAISE EXCEPTION USING ERRCODE = 'YD009', MESSAGE = 'The number of tags exceeds the limit of 50 tags per resource';
    END IF;
    RETURN added;
END $$;

-- TagResource: adds or replaces tags (at most 50 per table).
CREATE FUNCTION ddb.api_tag_resource(request jsonb) RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t ddb.tables := ddb.table_of_arn(request->>'ResourceArn');
BEGIN
    PERFORM ddb.check_table_access(t.table_name, 'TagResource', 'write');
    PERFORM ddb.set_table_tags(t.table_name, t.tags || ddb.request_tags(request->'Tags', t.tags));
    RETURN '{}';
END $$;

-- UntagResource: removes tags by key.
CREATE FUNCTION ddb.api_untag_resource(request jsonb) RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t ddb.tables := ddb.table_of_arn(request->>'ResourceArn');
BEGIN
    PERFORM ddb.check_table_access(t.table_name, 'UntagResource', 'write');
    IF jsonb_typeof(request->'TagKeys') IS DISTINCT FROM 'array' THEN
        PERFORM ddb.validation_error('1 validation error detected: Value null at ''tagKeys'' failed to satisfy constraint: Member must not be null');
    END IF;
    PERFORM ddb.set_table_tags(t.table_name, t.tags - ARRAY(SELECT jsonb_array_elements_text(request->'TagKeys')));
    RETURN '{}';
END $$;

-- ListTagsOfResource: the tags of a table, by key.
CREATE FUNCTION ddb.api_list_tags_of_resource(request jsonb) RETURNS jsonb
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t ddb.tables := ddb.table_of_arn(request->>'ResourceArn');
BEGIN
    PERFORM ddb.check_table_access(t.table_name, 'ListTagsOfResource', 'read');
    RETURN jsonb_build_object('Tags', coalesce((SELECT jsonb_agg(jsonb_build_object('Key', key, 'Value', value) ORDER BY key)
                                                FROM jsonb_each_text(t.tags)), '[]'));
END $$;
