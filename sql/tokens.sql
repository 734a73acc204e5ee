-- ---------------------------------------------------------------------------
-- Opaque tokens (shard iterators, PartiQL's NextToken, listings' pages):
-- sealed with this secret by src/request/tokens.c, and opened there, each
-- kind by functions of its own (ddb.stream_iterator, ...): no SQL function
-- seals or opens a payload of the caller's.  Only the owner reads it; it
-- is not dumped, so a restored database makes a new one (and old tokens
-- stop opening).
-- ---------------------------------------------------------------------------

CREATE TABLE ddb.server_secret (
    secret bytea NOT NULL CHECK (octet_length(secret) >= 30)
);
CREATE UNIQUE INDEX server_secret_one_row ON ddb.server_secret ((true));
-- 244 random bits from the operating system's strong source
INSERT INTO ddb.server_secret
VALUES (decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex'));
