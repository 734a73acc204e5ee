-- A helper of the regress files of DynamoDB operations (api_exports, api_pitr).
-- each request's SQLSTATE and the __type and message of its DynamoDB body, or 'ok'
CREATE FUNCTION pg_temp.try(operation text, request jsonb) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    state text;
    body text;
BEGIN
    PERFORM ddb.execute(operation, request);
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, body = PG_EXCEPTION_DETAIL;
    RETURN state || ' ' || split_part(body::jsonb ->> '__type', '#', 2) || ': ' || (body::jsonb ->> 'message');
END $$;
