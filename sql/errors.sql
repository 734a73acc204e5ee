-- ---------------------------------------------------------------------------
-- Errors the SQL functions raise by name: DynamoDB's validation error (YD001)
-- and the models' invalid_parameter_value.  The other DynamoDB errors are
-- raised where they occur, each with its SQLSTATE of class YD (docs/errors.md).
-- ---------------------------------------------------------------------------

-- Raises invalid_parameter_value (22023): the models' error for bad input.
CREATE FUNCTION ddb.invalid_parameter(message text) RETURNS void
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value', MESSAGE = message;
END $$;

-- Raises DynamoDB's validation error (SQLSTATE YD001).
CREATE FUNCTION ddb.validation_error(message text) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RAISE EXCEPTION USING ERRCODE = 'YD001', MESSAGE = message;
END $$;
