/*
 * tokens.c — the opaque tokens given to clients (a stream's shard
 * iterators, PartiQL's NextToken): the payload, base64, then a dot and an
 * HMAC-SHA256 of the token's purpose and payload under the server's secret
 * (ddb.server_secret, readable by the extension's owner alone).  A token
 * that was edited, forged or issued for another purpose does not open.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "common/base64.h"
#include "common/hmac.h"
#include "common/sha2.h"
#include "executor/spi.h"
#include "utils/builtins.h"

#include "../ddb_errors.h"
#include "../table/table_access.h"
#include "api.h"

PG_FUNCTION_INFO_V1(ddb_seal_token);
PG_FUNCTION_INFO_V1(ddb_open_token);

#define TOKEN_MAC_BYTES PG_SHA256_DIGEST_LENGTH

/* The server's secret, read as the owner of ddb.server_secret. */
static bytea *
server_secret(void)
{
	OwnerContext saved;
	MemoryContext cxt = CurrentMemoryContext;
	bytea	   *secret;
	bool		isnull;
	MemoryContext spi_cxt;

	owner_context_enter(ddb_relation_oid("server_secret"), &saved);
	SPI_connect();
	if (SPI_execute("SELECT secret FROM ddb.server_secret", true, 1) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "ddb_model: ddb.server_secret must hold one row");
	spi_cxt = MemoryContextSwitchTo(cxt);
	secret = DatumGetByteaPCopy(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	MemoryContextSwitchTo(spi_cxt);
	SPI_finish();
	owner_context_exit(&saved);
	return secret;
}

/* The MAC of a purpose and a payload, as lowercase hex (2 * TOKEN_MAC_BYTES + 1 bytes). */
static char *
token_mac(const char *purpose, const char *payload, size_t payload_len)
{
	bytea	   *secret = server_secret();
	pg_hmac_ctx *ctx = pg_hmac_create(PG_SHA256);
	uint8		mac[TOKEN_MAC_BYTES];
	char	   *hex = palloc(2 * TOKEN_MAC_BYTES + 1);

	if (ctx == NULL ||
		pg_hmac_init(ctx, (uint8 *) VARDATA_ANY(secret), VARSIZE_ANY_EXHDR(secret)) < 0 ||
		pg_hmac_update(ctx, (const uint8 *) purpose, strlen(purpose) + 1) < 0 ||
		pg_hmac_update(ctx, (const uint8 *) payload, payload_len) < 0 ||
		pg_hmac_final(ctx, mac, sizeof(mac)) < 0)
		elog(ERROR, "ddb_model: could not compute a token's HMAC: %s", pg_hmac_error(ctx));
	pg_hmac_free(ctx);
	hex_encode((const char *) mac, sizeof(mac), hex);
	hex[2 * TOKEN_MAC_BYTES] = '\0';
	return hex;
}

/* True when two strings of n bytes are equal, in a time that does not depend on where they differ. */
static bool
equal_in_constant_time(const char *a, const char *b, size_t n)
{
	unsigned char diff = 0;

	for (size_t i = 0; i < n; i++)
		diff |= (unsigned char) a[i] ^ (unsigned char) b[i];
	return diff == 0;
}

/* A token for a payload, bound to its purpose ("ShardIterator", "NextToken"). */
char *
api_token_seal(const char *purpose, const char *payload)
{
	int			len = strlen(payload);
	char	   *encoded = palloc(pg_b64_enc_len(len) + 1);
	int			n = pg_b64_encode(payload, len, encoded, pg_b64_enc_len(len));

	if (n < 0)
		elog(ERROR, "ddb_model: could not encode a token");
	encoded[n] = '\0';
	return psprintf("%s.%s", encoded, token_mac(purpose, payload, len));
}

/* The payload of a token sealed for purpose, or NULL when it is not one. */
char *
api_token_open(const char *purpose, const char *token)
{
	const char *dot = strrchr(token, '.');
	int			encoded_len;
	char	   *payload;
	int			n;

	if (dot == NULL || strlen(dot + 1) != 2 * TOKEN_MAC_BYTES)
		return NULL;
	encoded_len = dot - token;
	payload = palloc(pg_b64_dec_len(encoded_len) + 1);
	n = pg_b64_decode(token, encoded_len, payload, pg_b64_dec_len(encoded_len));
	if (n < 0 || memchr(payload, '\0', n) != NULL)
		return NULL;
	payload[n] = '\0';
	/* a forger learns nothing from how long a refusal takes */
	if (!equal_in_constant_time(token_mac(purpose, payload, n), dot + 1, 2 * TOKEN_MAC_BYTES))
		return NULL;
	return payload;
}

/* ddb.seal_token(purpose, payload): api_token_seal for SQL. */
Datum
ddb_seal_token(PG_FUNCTION_ARGS)
{
	PG_RETURN_TEXT_P(cstring_to_text(api_token_seal(text_to_cstring(PG_GETARG_TEXT_PP(0)),
													text_to_cstring(PG_GETARG_TEXT_PP(1)))));
}

/* ddb.open_token(purpose, token): api_token_open for SQL, NULL for a token that does not open. */
Datum
ddb_open_token(PG_FUNCTION_ARGS)
{
	char	   *payload = api_token_open(text_to_cstring(PG_GETARG_TEXT_PP(0)),
										 text_to_cstring(PG_GETARG_TEXT_PP(1)));

	if (payload == NULL)
		PG_RETURN_NULL();
	PG_RETURN_TEXT_P(cstring_to_text(payload));
}
