-- ---------------------------------------------------------------------------
-- Opaque tokens (shard iterators, PartiQL's NextToken): sealed with this
-- secret by src/api/tokens.c.  Only the owner reads it; it is not dumped,
-- so a restored database makes a new one (and old tokens stop opening).
-- ---------------------------------------------------------------------------

CREATE TABLE ddb.server_secret (
    secret bytea NOT NULL CHECK (octet_length(secret) >= 30)
);
CREATE UNIQUE INDEX server_secret_one_row ON ddb.server_secret ((true));
-- 244 random bits from the operating system's strong source
INSERT INTO ddb.server_secret
VALUES (decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex'));

-- A token for a payload, sealed for a purpose.
CREATE FUNCTION ddb.seal_token(purpose text, payload text) RETURNS text
    AS 'MODULE_PATHNAME', 'ddb_seal_token' LANGUAGE C STABLE STRICT;
-- The payload of a token sealed for a purpose, or NULL when it was edited, forged or sealed for another.
CREATE FUNCTION ddb.open_token(purpose text, token text) RETURNS text
    AS 'MODULE_PATHNAME', 'ddb_open_token' LANGUAGE C STABLE STRICT;
