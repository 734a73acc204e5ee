-- ---------------------------------------------------------------------------
-- Errors the SQL functions raise by name: DynamoDB's validation error (YD001)
-- and the models' invalid_parameter_value, and the words of DynamoDB's
-- request validation ("Value ... at '...' failed to satisfy constraint:
-- ...") for the operations checked in SQL.  The other DynamoDB errors are
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

-- The constraints of DynamoDB's request validation that a string member
-- breaks, each in its words ("Value 'x' at 'member' failed to satisfy
-- constraint: Member must ..."); shown_pattern is the pattern the message
-- shows (DynamoDB's Java one), pattern the one checked.  A value that is no
-- string is SerializationException (YD006), as DynamoDB's parser answers.
CREATE FUNCTION ddb.string_violations(value jsonb, name text, member text, required boolean DEFAULT false,
                                      min_length integer DEFAULT NULL, max_length integer DEFAULT NULL,
                                      pattern text DEFAULT NULL, shown_pattern text DEFAULT NULL,
                                      allowed text[] DEFAULT NULL) RETURNS text[]
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v text := value #>> '{}';
    broken text[] := '{}';
BEGIN
    IF value IS NULL OR jsonb_typeof(value) = 'null' THEN
        RETURN CASE WHEN required
                    THEN ARRAY[format('Value null at ''%s'' failed to satisfy constraint: Member must not be null', member)]
                    ELSE '{}' END;
    END IF;
    IF jsonb_typeof(value) <> 'string' THEN
        RAISE EXCEPTION USING ERRCODE = 'YD006', MESSAGE = format('Unexpected value type in payload for %s: expected a string', name);
    END IF;
    IF length(v) < min_length THEN
        broken := broken || format('Member must have length greater than or equal to %s', min_length);
    END IF;
    IF length(v) > max_length THEN
        broken := broken || format('Member must have length less than or equal to %s', max_length);
    END IF;
    IF v !~ pattern THEN
        broken := broken || format('Member must satisfy regular expression pattern: %s', coalesce(shown_pattern, pattern));
    END IF;
    IF NOT v = ANY (allowed) THEN
        broken := broken || format('Member must satisfy enum value set: [%s]', array_to_string(allowed, ', '));
    END IF;
    RETURN (SELECT coalesce(array_agg(format('Value ''%s'' at ''%s'' failed to satisfy constraint: %s', v, member, b)), '{}')
            FROM unnest(broken) b);
END $$;

-- The constraints an integer member breaks (min_value to max_value), as ddb.string_violations.
CREATE FUNCTION ddb.integer_violations(value jsonb, name text, member text, min_value bigint, max_value bigint)
RETURNS text[]
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF value IS NULL OR jsonb_typeof(value) = 'null' THEN
        RETURN '{}';
    END IF;
    IF jsonb_typeof(value) <> 'number' OR value::text !~ '^-?[0-9]{1,18}$' THEN
        RAISE EXCEPTION USING ERRCODE = 'YD006', MESSAGE = format('Unexpected value type in payload for %s: expected an integer', name);
    END IF;
    IF value::text::bigint < min_value THEN
        RETURN ARRAY[format('Value ''%s'' at ''%s'' failed to satisfy constraint: Member must have value greater than or equal to %s',
                            value, member, min_value)];
    END IF;
    IF value::text::bigint > max_value THEN
        RETURN ARRAY[format('Value ''%s'' at ''%s'' failed to satisfy constraint: Member must have value less than or equal to %s',
                            value, member, max_value)];
    END IF;
    RETURN '{}';
END $$;

-- Raises ValidationException for the broken constraints of a request, all
-- in one message, as DynamoDB does ("2 validation errors detected: ...; ...").
CREATE FUNCTION ddb.raise_violations(broken text[]) RETURNS void
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF cardinality(broken) > 0 THEN
        PERFORM ddb.validation_error(format('%s validation error%s detected: %s', cardinality(broken),
                                            CASE WHEN cardinality(broken) > 1 THEN 's' ELSE '' END,
                                            array_to_string(broken, '; ')));
    END IF;
END $$;
