-- ---------------------------------------------------------------------------
-- Access keys of ddb-gateway (docs/gateway.md, docs/security.md): AWS
-- Signature Version 4 needs the secret on the server side, so only the
-- extension's owner may read this table.  A key acts as its role: the
-- gateway runs its requests with ddb.execute_as, and the role's privileges
-- (ddb.grant_tables) decide what they may touch.
-- ---------------------------------------------------------------------------

CREATE TABLE ddb.access_keys (
    access_key_id text PRIMARY KEY,
    secret_access_key text NOT NULL,
    role_name name,             -- the role the key acts as; NULL: the gateway's own (an administrator's key)
    created_at timestamptz NOT NULL DEFAULT now(),
    revoked_at timestamptz
);
COMMENT ON TABLE ddb.access_keys IS 'Access keys the gateway verifies SigV4 signatures with; revoked keys stay for the record';
REVOKE ALL ON ddb.access_keys FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('ddb.access_keys', '');

-- ddb-gateway caches the keys it verifies with (src/gateway/keycache.c):
-- every change of this table tells it, once the change commits, to forget
-- what it cached, so that a revoked key stops working at once.
CREATE FUNCTION ddb.notify_access_keys() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM pg_catalog.pg_notify('ddb_access_keys', '');
    RETURN NULL;
END $$;
REVOKE ALL ON FUNCTION ddb.notify_access_keys() FROM PUBLIC;
CREATE TRIGGER access_keys_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ddb.access_keys
    FOR EACH STATEMENT EXECUTE FUNCTION ddb.notify_access_keys();

-- Creates an access key acting as a role (with the gateway's own
-- privileges when role_name is NULL) and returns its id and secret, as AWS
-- shows them: once.
CREATE FUNCTION ddb.create_access_key(role_name name DEFAULT NULL, OUT access_key_id text, OUT secret_access_key text)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF role_name IS NOT NULL AND to_regrole(quote_ident(role_name)) IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = '42704', MESSAGE = format('role "%s" does not exist', role_name),
            HINT = 'Create it first (CREATE ROLE ... NOLOGIN), give it tables with ddb.grant_tables, and let the gateway''s user SET ROLE to it.';
    END IF;
    access_key_id := 'AKDDB' || upper(substr(replace(gen_random_uuid()::text, '-', ''), 1, 15));
    secret_access_key := encode(decode(substr(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 1, 60), 'hex'), 'base64');
    INSERT INTO ddb.access_keys (access_key_id, secret_access_key, role_name)
    VALUES (access_key_id, secret_access_key, role_name);
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
