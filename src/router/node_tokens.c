/*
 * node_tokens.c — a router's tokens (sql/router/partiql.sql and
 * streams.sql): the NextToken of a PartiQL statement and the ShardIterator
 * of a stream the router gives its clients stand for a node (its place
 * among the nodes, from 1) and the node's own token, if any; the payload,
 * {"node": n, "token": "..."}, is sealed with the server's secret by
 * ddb_model (api_token_seal and api_token_open, model_imports.h), for the
 * purpose of its kind, so that an edited or forged one does not open.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "common/jsonapi.h"
#include "funcapi.h"
#include "mb/pg_wchar.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/numeric.h"

#include "../ddb_jsonb.h"
#include "model_imports.h"
#include "router.h"

PG_FUNCTION_INFO_V1(ddb_router_seal_node_token);
PG_FUNCTION_INFO_V1(ddb_router_open_node_token);

/* The purpose of a router's tokens of a kind (ShardIterator; NextToken, of a statement), or an error for another. */
static char *
node_token_purpose(FunctionCallInfo fcinfo)
{
	char	   *kind = PG_ARGISNULL(0) ? "" : text_to_cstring(PG_GETARG_TEXT_PP(0));

	if (strcmp(kind, "ShardIterator") == 0)
		return "router ShardIterator";
	if (strcmp(kind, "NextToken") == 0 && !PG_ARGISNULL(1))
		return psprintf("router NextToken %s", text_to_cstring(PG_GETARG_TEXT_PP(1)));
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("a router's token is a ShardIterator, or a NextToken of a statement")));
	pg_unreachable();
}

/*
 * ddb_router.seal_node_token(kind, statement, node, token): a router's
 * ShardIterator or NextToken (of a statement): the place of a node and the
 * node's own token, which the node opens, or none (the node's first page).
 * It stands for nothing the node's token does not: any role may seal one.
 */
Datum
ddb_router_seal_node_token(PG_FUNCTION_ARGS)
{
	char	   *purpose = node_token_purpose(fcinfo);
	JsonbParseState *state = NULL;
	JsonbValue	node = {.type = jbvNumeric};
	Jsonb	   *payload;

	if (PG_ARGISNULL(2) || PG_GETARG_INT32(2) < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a router's token names a node by its place, from 1")));
	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	ddb_push_key(&state, "node");
	node.val.numeric = int64_to_numeric(PG_GETARG_INT32(2));
	pushJsonbValue(&state, WJB_VALUE, &node);
	if (!PG_ARGISNULL(3))
		ddb_push_string(&state, "token", text_to_cstring(PG_GETARG_TEXT_PP(3)));
	payload = JsonbValueToJsonb(pushJsonbValue(&state, WJB_END_OBJECT, NULL));
	PG_RETURN_TEXT_P(cstring_to_text(ddb_model.api_token_seal(purpose,
															  JsonbToCString(NULL, &payload->root, VARSIZE(payload)))));
}

/* A node's place in a payload: a JSON integer from 1 to PG_INT32_MAX; false for anything else. */
static bool
node_place(const JsonbValue *v, int32 *node)
{
	char	   *digits;
	int64		place;

	if (v->type != jbvNumeric)
		return false;
	digits = DatumGetCString(DirectFunctionCall1(numeric_out, NumericGetDatum(v->val.numeric)));
	if (*digits == '\0' || strspn(digits, "0123456789") != strlen(digits) || strlen(digits) > 10)
		return false;
	place = strtoi64(digits, NULL, 10);
	if (place < 1 || place > PG_INT32_MAX)
		return false;
	*node = (int32) place;
	return true;
}

/*
 * The node and the node's token (NULL: none) of an opened payload; false
 * unless it is exactly the object a router seals: {"node": n} and an
 * optional {"token": a string}, nothing else.
 */
static bool
read_payload(char *payload, int32 *node, char **token)
{
	JsonLexContext *lex = makeJsonLexContextCstringLen(payload, strlen(payload), PG_UTF8, true);
	Jsonb	   *object;
	JsonbIterator *it;
	JsonbValue	k;
	JsonbValue	v;
	bool		has_node = false;

	/* checked as JSON before jsonb_in, which would raise */
	if (pg_parse_json(lex, &nullSemAction) != JSON_SUCCESS)
		return false;
	object = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(payload)));
	if (!JB_ROOT_IS_OBJECT(object) || JB_ROOT_IS_SCALAR(object))
		return false;
	*token = NULL;
	it = JsonbIteratorInit(&object->root);
	(void) JsonbIteratorNext(&it, &k, true);	/* WJB_BEGIN_OBJECT */
	while (JsonbIteratorNext(&it, &k, true) == WJB_KEY)
	{
		(void) JsonbIteratorNext(&it, &v, true);	/* WJB_VALUE */
		if (k.val.string.len == 4 && memcmp(k.val.string.val, "node", 4) == 0 && node_place(&v, node))
			has_node = true;
		else if (k.val.string.len == 5 && memcmp(k.val.string.val, "token", 5) == 0 && v.type == jbvString)
			*token = pnstrdup(v.val.string.val, v.val.string.len);
		else
			return false;
	}
	return has_node;
}

/* ddb_router.open_node_token(kind, statement, token): the node and node's token of a router's token; NULLs for anything else. */
Datum
ddb_router_open_node_token(PG_FUNCTION_ARGS)
{
	char	   *purpose = node_token_purpose(fcinfo);
	char	   *payload = PG_ARGISNULL(2) ? NULL :
		ddb_model.api_token_open(purpose, text_to_cstring(PG_GETARG_TEXT_PP(2)));
	Datum		values[2] = {0};
	bool		nulls[2] = {true, true};
	int32		node;
	char	   *token;
	TupleDesc	desc;

	if (payload && read_payload(payload, &node, &token))
	{
		values[0] = Int32GetDatum(node);
		nulls[0] = false;
		if (token)
		{
			values[1] = CStringGetTextDatum(token);
			nulls[1] = false;
		}
	}
	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "ddb_router: open_node_token must return a record");
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(desc), values, nulls)));
}
