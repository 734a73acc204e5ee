/*
 * tokens.c — the opaque tokens given to clients (a stream's shard
 * iterators, PartiQL's NextToken, the pages of ListExports and
 * ListImports, and a router's, whose payload ddb_router.so builds and
 * reads itself: src/router/node_tokens.c): the payload, base64, then a dot and an
 * HMAC-SHA256 of the token's purpose and payload under the server's secret
 * (ddb.server_secret, readable by the extension's owner alone).  A token
 * that was edited, forged or issued for another purpose does not open.
 * Tokens are sealed and opened here only: a payload is a JSON object the
 * sealer built, and an opener gives its members only when it is exactly
 * the object expected (its members and their types).  The SQL sealers are
 * each for one purpose, and check that the caller may have what the token
 * stands for, as the operation that gives it does.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "common/jsonapi.h"
#include "funcapi.h"
#include "mb/pg_wchar.h"
#include "utils/jsonb.h"
#include "utils/numeric.h"
#include "common/base64.h"
#include "common/hmac.h"
#include "common/sha2.h"
#include "executor/spi.h"
#include "utils/builtins.h"

#include "../ddb_errors.h"
#include "../ddb_jsonb.h"
#include "../table/table_access.h"
#include "tokens.h"

PG_FUNCTION_INFO_V1(ddb_stream_iterator);
PG_FUNCTION_INFO_V1(ddb_open_stream_iterator);
PG_FUNCTION_INFO_V1(ddb_seal_job_page_token);
PG_FUNCTION_INFO_V1(ddb_open_job_page_token);

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

/* The payload of a token sealed for purpose as jsonb, NULL when it does not open or is no JSON. */
static Jsonb *
open_payload(const char *purpose, const char *token)
{
	char	   *payload = api_token_open(purpose, token);
	JsonLexContext *lex;

	if (payload == NULL)
		return NULL;
	/* checked as JSON before jsonb_in, which would raise */
	lex = makeJsonLexContextCstringLen(payload, strlen(payload), PG_UTF8, true);
	if (pg_parse_json(lex, &nullSemAction) != JSON_SUCCESS)
		return NULL;
	return DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(payload)));
}

/* An integer JSON number as an int64; false when it is none or out of range. */
static bool
numeric_integer(Numeric n, int64 *out)
{
	char	   *digits = DatumGetCString(DirectFunctionCall1(numeric_out, NumericGetDatum(n)));
	const char *d = digits[0] == '-' ? digits + 1 : digits;
	char	   *end;

	if (*d == '\0' || strspn(d, "0123456789") != strlen(d) || strlen(d) > 19)
		return false;
	errno = 0;
	*out = strtoi64(digits, &end, 10);
	return errno == 0 && *end == '\0';
}

/* True when a member of a token's payload has the type its spec says (an integer for jbvNumeric). */
static bool
member_type_matches(const JsonbValue *v, enum jbvType type)
{
	int64		ignored;

	if (type == jbvNumeric)
		return v->type == jbvNumeric && numeric_integer(v->val.numeric, &ignored);
	if (type == jbvObject)
		return v->type == jbvBinary && JsonContainerIsObject(v->val.binary.data);
	return v->type == type;
}

/* The payload of a token sealed for purpose when it is exactly the object members describe; see tokens.h. */
Jsonb *
api_token_open_object(const char *purpose, const char *token, const TokenMember *members, int n)
{
	Jsonb	   *object = open_payload(purpose, token);
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken t;
	int			required = 0;
	int			found = 0;

	if (object == NULL || !JB_ROOT_IS_OBJECT(object) || JB_ROOT_IS_SCALAR(object))
		return NULL;
	for (int i = 0; i < n; i++)
		required += members[i].optional ? 0 : 1;
	it = JsonbIteratorInit(&object->root);
	while ((t = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		int			i;

		if (t != WJB_KEY)
			continue;
		for (i = 0; i < n; i++)
			if (strlen(members[i].name) == (size_t) v.val.string.len
				&& memcmp(members[i].name, v.val.string.val, v.val.string.len) == 0)
				break;
		if (i == n || JsonbIteratorNext(&it, &v, true) != WJB_VALUE || !member_type_matches(&v, members[i].type))
			return NULL;
		found += members[i].optional ? 0 : 1;
	}
	return found == required ? object : NULL;
}

/* True when a JSON value is a key's AttributeValue: {"S" | "N" | "B": a string}. */
static bool
key_attribute_value(const JsonbValue *v)
{
	JsonbValue *type;

	if (v->type != jbvBinary || !JsonContainerIsObject(v->val.binary.data) || JsonContainerSize(v->val.binary.data) != 1)
		return false;
	for (const char *t = "SNB"; *t; t++)
		if ((type = getKeyJsonValueFromContainer(v->val.binary.data, t, 1, NULL)) != NULL)
			return type->type == jbvString;
	return false;
}

/*
 * The payload of a token sealed for purpose when it is a LastEvaluatedKey:
 * an object of 1 to 4 members (a table's key and an index's), each a key's
 * AttributeValue; else NULL.  See tokens.h.
 */
Jsonb *
api_token_open_key(const char *purpose, const char *token)
{
	Jsonb	   *key = open_payload(purpose, token);
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken t;

	if (key == NULL || !JB_ROOT_IS_OBJECT(key) || JB_ROOT_IS_SCALAR(key) || JB_ROOT_COUNT(key) < 1 || JB_ROOT_COUNT(key) > 4)
		return NULL;
	it = JsonbIteratorInit(&key->root);
	while ((t = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
		if (t == WJB_VALUE && !key_attribute_value(&v))
			return NULL;
	return key;
}

/* A string member of an opened token's payload, or NULL when absent. */
char *
api_token_string(Jsonb *payload, const char *name)
{
	JsonbValue *v = JB_ROOT_IS_OBJECT(payload) && !JB_ROOT_IS_SCALAR(payload) ?
		getKeyJsonValueFromContainer(&payload->root, name, strlen(name), NULL) : NULL;

	return v && v->type == jbvString ? pnstrdup(v->val.string.val, v->val.string.len) : NULL;
}

/* An integer member of an opened token's payload in [min, max], false when absent or out of range. */
bool
api_token_int64(Jsonb *payload, const char *name, int64 min, int64 max, int64 *out)
{
	JsonbValue *v = JB_ROOT_IS_OBJECT(payload) && !JB_ROOT_IS_SCALAR(payload) ?
		getKeyJsonValueFromContainer(&payload->root, name, strlen(name), NULL) : NULL;

	return v != NULL && v->type == jbvNumeric && numeric_integer(v->val.numeric, out) && *out >= min && *out <= max;
}

/* A token for a JSON object built in state (after its WJB_BEGIN_OBJECT and members). */
static text *
seal_object(const char *purpose, JsonbParseState **state)
{
	Jsonb	   *object = JsonbValueToJsonb(pushJsonbValue(state, WJB_END_OBJECT, NULL));

	return cstring_to_text(api_token_seal(purpose, JsonbToCString(NULL, &object->root, VARSIZE(object))));
}

/* Pushes a member "name": integer. */
static void
push_int64(JsonbParseState **state, const char *name, int64 value)
{
	JsonbValue	v = {.type = jbvNumeric};

	ddb_push_key(state, name);
	v.val.numeric = int64_to_numeric(value);
	pushJsonbValue(state, WJB_VALUE, &v);
}

/* A record of a function's result type from its values (NULL where isnull). */
static Datum
result_record(FunctionCallInfo fcinfo, Datum *values, bool *nulls)
{
	TupleDesc	desc;

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "ddb_model: a token opener must return a record");
	return HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(desc), values, nulls));
}

/* A shard iterator's payload: {"table": name, "label": stream label, "after": sequence number}. */
static const TokenMember shard_iterator_members[] = {
	{"table", jbvString, false}, {"label", jbvString, false}, {"after", jbvNumeric, false}};

/*
 * ddb.stream_iterator(table_name, label, after_sequence): a shard iterator
 * after a sequence number of a table's stream, for a caller that may read
 * the table (as GetShardIterator asks), of a stream the table has or had
 * (its label is the latest's: older streams' records are gone).
 */
Datum
ddb_stream_iterator(PG_FUNCTION_ARGS)
{
	char	   *table = text_to_cstring(PG_GETARG_TEXT_PP(0));
	Oid			argtypes[2] = {TEXTOID, TEXTOID};
	Datum		args[2] = {PG_GETARG_DATUM(0), PG_GETARG_DATUM(1)};
	JsonbParseState *state = NULL;
	bool		found;

	table_access_check_operation(table, "GetShardIterator", "read");
	SPI_connect();
	if (SPI_execute_with_args("SELECT FROM ddb.tables WHERE table_name OPERATOR(pg_catalog.=) $1 "
							  "AND stream_label OPERATOR(pg_catalog.=) $2", 2, argtypes, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "ddb_model: could not read the stream of table %s", table);
	found = SPI_processed == 1;
	SPI_finish();
	if (!found)
		ereport(ERROR,
				(errcode(ERRCODE_DDB_RESOURCE_NOT_FOUND),
				 errmsg("Requested resource not found: Stream %s of table %s does not exist",
						text_to_cstring(PG_GETARG_TEXT_PP(1)), table)));
	if (PG_GETARG_INT64(2) < 0)
		ddb_validation_error("Invalid SequenceNumber");
	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	ddb_push_string(&state, "table", table);
	ddb_push_string(&state, "label", text_to_cstring(PG_GETARG_TEXT_PP(1)));
	push_int64(&state, "after", PG_GETARG_INT64(2));
	PG_RETURN_TEXT_P(seal_object("ShardIterator", &state));
}

/*
 * ddb.open_stream_iterator(token): the table, stream label and sequence
 * number of a shard iterator ddb.stream_iterator sealed; NULLs for anything
 * else.
 */
Datum
ddb_open_stream_iterator(PG_FUNCTION_ARGS)
{
	Jsonb	   *payload = api_token_open_object("ShardIterator", text_to_cstring(PG_GETARG_TEXT_PP(0)),
												shard_iterator_members, lengthof(shard_iterator_members));
	Datum		values[3] = {0};
	bool		nulls[3] = {true, true, true};
	int64		after;

	if (payload && api_token_int64(payload, "after", 0, PG_INT64_MAX, &after))
	{
		values[0] = CStringGetTextDatum(api_token_string(payload, "table"));
		values[1] = CStringGetTextDatum(api_token_string(payload, "label"));
		values[2] = Int64GetDatum(after);
		nulls[0] = nulls[1] = nulls[2] = false;
	}
	PG_RETURN_DATUM(result_record(fcinfo, values, nulls));
}

/* A page of a listing of jobs: {"job": the page's last job, "filter": the listing's table filter}. */
static const TokenMember job_page_members[] = {{"job", jbvNumeric, false}, {"filter", jbvString, false}};

/* The purpose of a listing's tokens of a kind of jobs (export, import), or an error for another kind. */
static char *
job_page_purpose(text *kind)
{
	char	   *k = text_to_cstring(kind);

	if (strcmp(k, "export") != 0 && strcmp(k, "import") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("jobs of kind \"%s\" are not listed a page at a time", k)));
	return psprintf("%s page", k);
}

/*
 * ddb.seal_job_page_token(kind, job_id, filter): the NextToken of a
 * listing of the caller's jobs of a kind (ddb.job_page) after a job of its
 * own (ddb.jobs' policy), filtered by a table (filter: 16 hex digits).
 */
Datum
ddb_seal_job_page_token(PG_FUNCTION_ARGS)
{
	char	   *purpose = job_page_purpose(PG_GETARG_TEXT_PP(0));
	char	   *filter = text_to_cstring(PG_GETARG_TEXT_PP(2));
	Oid			argtypes[2] = {INT4OID, TEXTOID};
	Datum		args[2] = {PG_GETARG_DATUM(1), PG_GETARG_DATUM(0)};
	JsonbParseState *state = NULL;
	bool		found;

	if (strlen(filter) != 16 || strspn(filter, "0123456789abcdef") != 16)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a listing's filter is 16 hex digits")));
	SPI_connect();
	if (SPI_execute_with_args("SELECT FROM ddb.jobs WHERE id OPERATOR(pg_catalog.=) $1 AND kind OPERATOR(pg_catalog.=) $2",
							  2, argtypes, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "ddb_model: could not read a job");
	found = SPI_processed == 1;
	SPI_finish();
	if (!found)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("a listing's token names a job of the caller's")));
	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	push_int64(&state, "job", PG_GETARG_INT32(1));
	ddb_push_string(&state, "filter", filter);
	PG_RETURN_TEXT_P(seal_object(purpose, &state));
}

/* ddb.open_job_page_token(kind, token, filter): the job a listing's token names, NULL for anything else or another filter. */
Datum
ddb_open_job_page_token(PG_FUNCTION_ARGS)
{
	char	   *purpose = job_page_purpose(PG_GETARG_TEXT_PP(0));
	Jsonb	   *payload = api_token_open_object(purpose, text_to_cstring(PG_GETARG_TEXT_PP(1)),
												job_page_members, lengthof(job_page_members));
	char	   *filter;
	int64		job;

	if (payload == NULL || !api_token_int64(payload, "job", 1, PG_INT32_MAX, &job))
		PG_RETURN_NULL();
	filter = api_token_string(payload, "filter");
	if (strcmp(filter, text_to_cstring(PG_GETARG_TEXT_PP(2))) != 0)
		PG_RETURN_NULL();
	PG_RETURN_INT32((int32) job);
}
