-- ---------------------------------------------------------------------------
-- Point-in-time recovery through a router (docs/pitr.md, docs/scale-out.md):
-- the shard nodes keep no history of their items for a router to restore
-- from, so UpdateContinuousBackups and RestoreTableToPointInTime are refused
-- with DynamoDB's errors; DescribeContinuousBackups answers from the
-- router's catalog (DISABLED).
-- ---------------------------------------------------------------------------

-- Refuses UpdateContinuousBackups (ContinuousBackupsUnavailableException)
-- and RestoreTableToPointInTime (PointInTimeRecoveryUnavailableException),
-- once the table is known: one the router's catalog lacks (or the role may
-- not read) is DynamoDB's error first, TableNotFoundException, as the
-- router's own DescribeContinuousBackups of it answers.
CREATE FUNCTION ddb_router.refuse_pitr(role_name name, operation text, request jsonb) RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    table_name jsonb := CASE WHEN operation = 'UpdateContinuousBackups' THEN request->'TableName'
                             ELSE coalesce(request->'SourceTableName', request->'SourceTableArn') END;
BEGIN
    IF jsonb_typeof(table_name) = 'string' THEN
        PERFORM ddb.execute_metered(role_name, 'DescribeContinuousBackups', jsonb_build_object('TableName', table_name));
    END IF;
    IF operation = 'UpdateContinuousBackups' THEN
        PERFORM ddb_router.raise_error('YD030',
            'Backups are not available in a sharded deployment: its shards keep no point-in-time recovery history', NULL, NULL);
    END IF;
    PERFORM ddb_router.raise_error('YD031',
        format('Point in time recovery is not enabled for table ''%s'': a sharded deployment keeps no point-in-time recovery history',
               coalesce(request->>'SourceTableName', request->>'SourceTableArn')), NULL, NULL);
    RETURN NULL;
END $$;
