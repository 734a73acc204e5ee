-- ---------------------------------------------------------------------------
-- Point-in-time recovery through a router (docs/pitr.md, docs/scale-out.md):
-- the shard nodes keep no history of their items for a router to restore
-- from, so UpdateContinuousBackups and RestoreTableToPointInTime are refused
-- with DynamoDB's errors; DescribeContinuousBackups answers from the
-- router's catalog (DISABLED).
-- ---------------------------------------------------------------------------

-- Refuses UpdateContinuousBackups (ContinuousBackupsUnavailableException)
-- and RestoreTableToPointInTime (PointInTimeRecoveryUnavailableException).
CREATE FUNCTION ddb_router.refuse_pitr(role_name name, operation text, request jsonb) RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF operation = 'UpdateContinuousBackups' THEN
        PERFORM ddb_router.raise_error('YD030',
            'Backups are not available in a sharded deployment: its shards keep no point-in-time recovery history', NULL, NULL);
    END IF;
    PERFORM ddb_router.raise_error('YD031',
        format('Point in time recovery is not enabled for table ''%s'': a sharded deployment keeps no point-in-time recovery history',
               coalesce(request->>'SourceTableName', request->>'SourceTableArn')), NULL, NULL);
    RETURN NULL;
END $$;
