-- ---------------------------------------------------------------------------
-- Access keys of ddb-gateway (docs/gateway.md): AWS Signature Version 4
-- needs the secret on the server side, so only the extension's owner may
-- read this table.
-- ---------------------------------------------------------------------------

CREATE TABLE ddb.access_keys (
    access_key_id text PRIMARY KEY,
    secret_access_key text NOT NULL,
    tables text[],              -- the tables the key may use; NULL: every table
    created_at timestamptz NOT NULL DEFAULT now(),
    revoked_at timestamptz
);
COMMENT ON TABLE ddb.access_keys IS 'Access keys the gateway verifies SigV4 signatures with; revoked keys stay for the record';
REVOKE ALL ON ddb.access_keys FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('ddb.access_keys', '');

-- Creates an access key (limited to some tables when tables is given) and
-- returns its id and secret, as AWS shows them: once.
CREATE FUNCTION ddb.create_access_key(tables text[] DEFAULT NULL, OUT access_key_id text, OUT secret_access_key text)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    access_key_id := 'AKDDB' || upper(substr(replace(gen_random_uuid()::text, '-', ''), 1, 15));
    secret_access_key := encode(decode(substr(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 1, 60), 'hex'), 'base64');
    INSERT INTO ddb.access_keys (access_key_id, secret_access_key, tables)
    VALUES (access_key_id, secret_access_key, tables);
END $$;

-- Revokes an access key; true when it was active.
CREATE FUNCTION ddb.revoke_access_key(access_key_id text) RETURNS boolean
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    WITH revoked AS (
        UPDATE ddb.access_keys k SET revoked_at = now()
        WHERE k.access_key_id = revoke_access_key.access_key_id AND k.revoked_at IS NULL RETURNING 1)
    SELECT EXISTS (SELECT FROM revoked);
END;
