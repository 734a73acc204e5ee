-- ---------------------------------------------------------------------------
-- Exports and imports through a router (docs/transfer.md, docs/scale-out.md):
-- an export reads point-in-time recovery's history, which the shard nodes do
-- not keep, and an import would have to spread one table's items over the
-- nodes, which no job of a router does; both are refused with DynamoDB's
-- errors.  DescribeExport, ListExports, DescribeImport and ListImports are
-- the router's own, and find none.
-- ---------------------------------------------------------------------------

-- Refuses ExportTableToPointInTime (PointInTimeRecoveryUnavailableException,
-- once its table is known: one the router's catalog lacks, or the role may
-- not read, is DynamoDB's error first, TableNotFoundException, as the
-- router's own DescribeContinuousBackups of it answers) and ImportTable
-- (ValidationException).
CREATE FUNCTION ddb_router.refuse_transfer(role_name name, operation text, request jsonb) RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF operation = 'ExportTableToPointInTime' THEN
        IF jsonb_typeof(request->'TableArn') = 'string' THEN
            PERFORM ddb.execute_metered(role_name, 'DescribeContinuousBackups',
                                        jsonb_build_object('TableName', request->'TableArn'));
        END IF;
        PERFORM ddb_router.raise_error('YD031',
            format('Point in time recovery is not enabled for table ''%s'': a sharded deployment keeps no point-in-time '
                   'recovery history to export from', request->>'TableArn'), NULL, NULL);
    END IF;
    PERFORM ddb_router.raise_error('YD001',
        'ImportTable is not supported by a sharded deployment (ddb_router): import into a single node''s database, '
        'or write the items through the router (BatchWriteItem)', NULL, NULL);
    RETURN NULL;
END $$;
