-- ---------------------------------------------------------------------------
-- RETAIN: DROP EXTENSION refuses while DynamoDB tables hold items
-- ---------------------------------------------------------------------------

-- The tables DROP EXTENSION would destroy items of: every table users
-- created, the model tables that hold items, and every backup (docs/backups.md).
CREATE FUNCTION ddb.tables_blocking_drop() RETURNS SETOF text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t ddb.tables;
    has_items boolean;
BEGIN
    FOR t IN SELECT * FROM ddb.tables ORDER BY table_name LOOP
        IF t.model IS NULL THEN
            RETURN NEXT t.table_name;
            CONTINUE;
        END IF;
        EXECUTE format('SELECT EXISTS (SELECT FROM %I.%I)', t.schema_name, t.relation_name) INTO has_items;
        IF has_items THEN
            RETURN NEXT t.table_name;
        END IF;
    END LOOP;
    RETURN QUERY SELECT 'backup ' || b.backup_arn FROM ddb.backups b ORDER BY b.backup_arn;
END $$;

CREATE FUNCTION ddb.guard_drop_extension() RETURNS event_trigger
    AS 'MODULE_PATHNAME', 'ddb_guard_drop_extension' LANGUAGE C;
REVOKE ALL ON FUNCTION ddb.guard_drop_extension() FROM PUBLIC;
CREATE EVENT TRIGGER ddb_guard_drop_extension ON ddl_command_start
    WHEN TAG IN ('DROP EXTENSION') EXECUTE FUNCTION ddb.guard_drop_extension();
