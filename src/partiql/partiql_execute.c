/*
 * partiql_execute.c — ExecuteStatement, BatchExecuteStatement and
 * ExecuteTransaction: statements parsed and rewritten (partiql.h) and run as
 * their operations; SELECT's projection, Limit and NextToken; a batch
 * statement by statement in subtransactions with per-statement errors; a
 * transaction as TransactGetItems or TransactWriteItems.
 */
#include "postgres.h"

#include "utils/builtins.h"
#include "utils/json.h"

#include "../api/api.h"
#include "../ddb_errors.h"
#include "../request/request.h"
#include "../request/subtransaction.h"
#include "../request/tokens.h"
#include "partiql.h"

/* DynamoDB's limits on the statements of a batch and of a transaction. */
#define BATCH_MAX_STATEMENTS 25
#define TRANSACTION_MAX_STATEMENTS 100

/* A JSON text as jsonb. */
static Jsonb *
text_to_jsonb(const char *text)
{
	return DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(text)));
}

/* The attribute value a path reaches in a DynamoDB JSON item, or NULL. */
static JsonbValue *
value_at_path(JsonbContainer *item, List *steps)
{
	JsonbValue *v = NULL;
	ListCell   *lc;

	foreach(lc, steps)
	{
		char	   *step = lfirst(lc);
		JsonbValue *inner;

		if (v != NULL)
		{
			/* into {"M": {...}} or {"L": [...]} */
			if (v->type != jbvBinary)
				return NULL;
			inner = getKeyJsonValueFromContainer(v->val.binary.data, step[0] == '[' ? "L" : "M",
												 1, NULL);
			if (inner == NULL || inner->type != jbvBinary)
				return NULL;
			item = inner->val.binary.data;
		}
		if (step[0] == '[')
		{
			if (!JsonContainerIsArray(item))
				return NULL;
			v = getIthJsonbValueFromContainer(item, (uint32) atoi(step + 1));
		}
		else
			v = JsonContainerIsObject(item) ? getKeyJsonValueFromContainer(item, step, strlen(step), NULL) : NULL;
		if (v == NULL)
			return NULL;
	}
	return v;
}

/* A SELECT's item as its projection shapes it: each path's value under the path's last name. */
static JsonbValue *
project_item(JsonbValue *item, List *projection)
{
	JsonbParseState *state = NULL;
	JsonbValue *projected;
	ListCell   *lc;

	if (projection == NIL || item->type != jbvBinary)
		return item;
	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	foreach(lc, projection)
	{
		List	   *steps = lfirst(lc);
		JsonbValue *v = value_at_path(item->val.binary.data, steps);
		char	   *name = NULL;
		ListCell   *sc;

		if (v == NULL)
			continue;
		foreach(sc, steps)
			if (((char *) lfirst(sc))[0] != '[')
				name = lfirst(sc);
		ddb_push_key(&state, name);
		pushJsonbValue(&state, WJB_VALUE, v);
	}
	projected = palloc(sizeof(JsonbValue));
	ddb_binary_value(JsonbValueToJsonb(pushJsonbValue(&state, WJB_END_OBJECT, NULL)), projected);
	return projected;
}

/* Runs a rewritten statement; INSERT's failed condition is DDB_ERROR_DUPLICATE_ITEM. */
static Jsonb *
run_rewritten(Rewritten *rw, Jsonb *request)
{
	MemoryContext cxt = CurrentMemoryContext;
	Jsonb	   *volatile response = NULL;

	if (!rw->insert)
		return rw->run(request);
	PG_TRY();
	{
		response = rw->run(request);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		if (edata->sqlerrcode != ERRCODE_DDB_CONDITIONAL_CHECK_FAILED)
			PG_RE_THROW();
		FlushErrorState();
		ereport(ERROR,
				(errcode(ERRCODE_DDB_DUPLICATE_ITEM),
				 errmsg("Duplicate primary key exists in table")));
	}
	PG_END_TRY();
	return response;
}

/* A Statement member as text, checked. */
static char *
statement_text(Jsonb *request)
{
	char	   *text = api_string(request, "Statement");

	if (text == NULL)
		api_missing("statement");
	if (strlen(text) < 1 || strlen(text) > 8192)
		ddb_validation_error("1 validation error detected: Value at 'statement' failed to satisfy constraint: "
							 "Member must have length less than or equal to 8192 and greater than or equal to 1");
	return text;
}

/* The Parameters of a statement, or NULL. */
static JsonbContainer *
statement_params(Jsonb *request)
{
	JsonbValue	v;

	if (!api_field(request, "Parameters", &v))
		return NULL;
	if (v.type != jbvBinary || !JsonContainerIsArray(v.val.binary.data))
		ddb_validation_error("Parameters must be a list of AttributeValues");
	if (JsonContainerSize(v.val.binary.data) == 0)
		ddb_validation_error("1 validation error detected: Value '[]' at 'parameters' failed to satisfy constraint: "
							 "Member must have length greater than or equal to 1");
	return v.val.binary.data;
}

/* What a NextToken is sealed for: the statement it pages through (tokens.c). */
static char *
next_token_purpose(Jsonb *request)
{
	return psprintf("NextToken %s", statement_text(request));
}

/*
 * The ExclusiveStartKey a NextToken stands for, as JSON text: a token this
 * server sealed for the request's statement whose payload is a
 * LastEvaluatedKey (tokens.c checks its shape), written out again here.
 */
static char *
next_token_key(Jsonb *request)
{
	Jsonb	   *key = api_token_open_key(next_token_purpose(request), api_string(request, "NextToken"));

	if (key == NULL)
		ddb_validation_error("The provided NextToken is not valid");
	return JsonbToCString(NULL, &key->root, VARSIZE(key));
}

/*
 * Runs one statement; *items (SELECT) gets its items as the projection
 * shapes them, *next its LastEvaluatedKey.  With single_item (a batch), a
 * SELECT must name one item by its whole key.
 */
static void
run_statement(Jsonb *request, List **items, JsonbValue *next, const char **table, int64 limit, bool single_item)
{
	Statement	st;
	Rewritten	rw;
	Jsonb	   *response;
	char	   *req;
	JsonbValue	v;

	partiql_parse(&st, statement_text(request), statement_params(request));
	if (st.kind == 'E')
		ddb_validation_error("EXISTS is only allowed in a transaction (ExecuteTransaction)");
	*table = st.table;
	if (single_item && st.kind == 'S')
	{
		List	   *taken = NIL;

		partiql_single_item_key(&st, &taken);
	}
	partiql_rewrite(&st, &rw, api_bool(request, "ConsistentRead", false));
	req = rw.request;
	if (st.kind == 'S' && (limit > 0 || api_field(request, "NextToken", &v)))
	{
		StringInfoData more;

		initStringInfo(&more);
		appendBinaryStringInfo(&more, req, strlen(req) - 1);
		if (limit > 0)
			appendStringInfo(&more, ", \"Limit\": " INT64_FORMAT, limit);
		if (api_field(request, "NextToken", &v))
			appendStringInfo(&more, ", \"ExclusiveStartKey\": %s", next_token_key(request));
		appendStringInfoChar(&more, '}');
		req = more.data;
	}
	response = run_rewritten(&rw, text_to_jsonb(req));
	if (items && st.kind == 'S')
	{
		JsonbValue *found = getKeyJsonValueFromContainer(&response->root, "Items", 5, NULL);
		JsonbValue *last = getKeyJsonValueFromContainer(&response->root, "LastEvaluatedKey", 16, NULL);

		if (found && found->type == jbvBinary)
			for (uint32 i = 0; i < JsonContainerSize(found->val.binary.data); i++)
				*items = lappend(*items, project_item(getIthJsonbValueFromContainer(found->val.binary.data, i),
													  st.projection));
		if (last && next)
			*next = *last;
	}
}

/*
 * The operation a statement ({"Statement", "Parameters"}) stands for, and
 * its request in *request: where a router of a sharded deployment sends the
 * statement (src/router/).  Raises DynamoDB's error for an invalid statement.
 */
const char *
api_statement_operation(Jsonb *element, Jsonb **request)
{
	Statement	st;
	Rewritten	rw;

	partiql_parse(&st, statement_text(element), statement_params(element));
	partiql_rewrite(&st, &rw, false);
	*request = text_to_jsonb(rw.request);
	if (rw.run == api_query)
		return "Query";
	if (rw.run == api_scan)
		return "Scan";
	if (rw.run == api_put_item)
		return "PutItem";
	if (rw.run == api_get_item)
		return "GetItem";
	if (rw.run == api_update_item)
		return "UpdateItem";
	if (rw.run == api_delete_item)
		return "DeleteItem";
	return "ConditionCheck";
}

/* Pushes "Items": [...] of a response. */
static void
push_items(JsonbParseState **state, List *items)
{
	ListCell   *lc;

	ddb_push_key(state, "Items");
	pushJsonbValue(state, WJB_BEGIN_ARRAY, NULL);
	foreach(lc, items)
		pushJsonbValue(state, WJB_ELEM, lfirst(lc));
	pushJsonbValue(state, WJB_END_ARRAY, NULL);
}

/* ExecuteStatement: one PartiQL statement. */
Jsonb *
api_execute_statement(Jsonb *request)
{
	JsonbParseState *state = NULL;
	List	   *items = NIL;
	JsonbValue	next = {.type = jbvNull};
	const char *table;

	run_statement(request, &items, &next, &table, api_int(request, "Limit", 1, INT_MAX), false);
	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	push_items(&state, items);
	if (next.type != jbvNull)
		ddb_push_string(&state, "NextToken", api_token_seal(next_token_purpose(request),
															JsonbToCString(NULL, next.val.binary.data, next.val.binary.len)));
	return JsonbValueToJsonb(pushJsonbValue(&state, WJB_END_OBJECT, NULL));
}

/* The statements of a batch or transaction: 1 to max objects. */
static JsonbContainer *
statement_list(Jsonb *request, const char *field, const char *member, int max)
{
	JsonbValue	v;
	int			n;

	if (!api_field(request, field, &v))
		api_missing(member);
	if (v.type != jbvBinary || !JsonContainerIsArray(v.val.binary.data))
		ddb_validation_error("%s must be a list", field);
	n = JsonContainerSize(v.val.binary.data);
	if (n < 1)
		ddb_validation_error("1 validation error detected: Value '[]' at '%s' failed to satisfy constraint: "
							 "Member must have length greater than or equal to 1", member);
	if (n > max)
		ddb_validation_error("1 validation error detected: Value at '%s' failed to satisfy constraint: "
							 "Member must have length less than or equal to %d", member, max);
	return v.val.binary.data;
}

/* Element i of a statement list as a request of its own. */
static Jsonb *
list_element(JsonbContainer *list, int i)
{
	JsonbValue *v = getIthJsonbValueFromContainer(list, i);

	if (v->type != jbvBinary || !JsonContainerIsObject(v->val.binary.data))
		ddb_validation_error("A statement must be an object with a Statement");
	return JsonbValueToJsonb(v);
}

/* DynamoDB's short error code of a batch response: ResourceNotFound, ConditionalCheckFailed, ... */
static const char *
batch_error_code(int sqlerrcode)
{
	if (sqlerrcode == ERRCODE_DDB_RESOURCE_NOT_FOUND)
		return "ResourceNotFound";
	if (sqlerrcode == ERRCODE_DDB_CONDITIONAL_CHECK_FAILED)
		return "ConditionalCheckFailed";
	if (sqlerrcode == ERRCODE_DDB_DUPLICATE_ITEM)
		return "DuplicateItem";
	if (sqlerrcode == ERRCODE_DDB_TRANSACTION_CANCELED || sqlerrcode == ERRCODE_DDB_TRANSACTION_CONFLICT)
		return "TransactionConflict";
	if (sqlerrcode == ERRCODE_DDB_ACCESS_DENIED || sqlerrcode == ERRCODE_INSUFFICIENT_PRIVILEGE)
		return "AccessDenied";
	if (sqlerrcode == ERRCODE_DDB_PROVISIONED_THROUGHPUT_EXCEEDED)
		return "ProvisionedThroughputExceeded";
	return "ValidationError";
}

/* A statement of a batch, and what running it found. */
typedef struct BatchStatement
{
	Jsonb	   *request;		/* the element of Statements */
	List	   *items;			/* SELECT's item (one at most) */
	const char *table;
} BatchStatement;

/* Runs one statement of a batch (a subtransaction's callback). */
static void
run_batch_statement(void *arg)
{
	BatchStatement *statement = (BatchStatement *) arg;

	run_statement(statement->request, &statement->items, NULL, &statement->table, -1, true);
}

/*
 * BatchExecuteStatement: up to 25 statements, each on its own (in a
 * subtransaction): a failed one is an Error in its response, the others
 * take effect.
 */
Jsonb *
api_batch_execute_statement(Jsonb *request)
{
	JsonbContainer *list = statement_list(request, "Statements", "statements", BATCH_MAX_STATEMENTS);
	int			n = JsonContainerSize(list);
	JsonbParseState *state = NULL;

	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	ddb_push_key(&state, "Responses");
	pushJsonbValue(&state, WJB_BEGIN_ARRAY, NULL);
	for (int i = 0; i < n; i++)
	{
		BatchStatement statement = {list_element(list, i), NIL, NULL};
		ErrorData  *failure = api_subtransaction_run(run_batch_statement, &statement);

		/* what DynamoDB reports per statement is reported; anything else ends the batch */
		if (failure && ERRCODE_TO_CATEGORY(failure->sqlerrcode) != ERRCODE_TO_CATEGORY(ERRCODE_DDB_VALIDATION))
			ReThrowError(failure);
		pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
		if (failure)
		{
			ddb_push_key(&state, "Error");
			pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
			ddb_push_string(&state, "Code", batch_error_code(failure->sqlerrcode));
			ddb_push_string(&state, "Message", failure->message);
			pushJsonbValue(&state, WJB_END_OBJECT, NULL);
		}
		else
		{
			ddb_push_string(&state, "TableName", statement.table);
			if (statement.items != NIL)
			{
				ddb_push_key(&state, "Item");
				pushJsonbValue(&state, WJB_VALUE, linitial(statement.items));
			}
		}
		pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	}
	pushJsonbValue(&state, WJB_END_ARRAY, NULL);
	return JsonbValueToJsonb(pushJsonbValue(&state, WJB_END_OBJECT, NULL));
}

/*
 * The Get a read statement of a transaction stands for: {"TableName",
 * "Key"} of the one item it reads.
 */
static char *
transaction_get(Statement *st)
{
	List	   *taken = NIL;
	char	   *key = partiql_single_item_key(st, &taken);
	StringInfoData get;

	if (partiql_remaining_condition(st->conjuncts, taken) != NULL)
		ddb_validation_error("Where clause of a read in a transaction may only name the key attributes");
	initStringInfo(&get);
	appendStringInfoString(&get, "{\"TableName\": ");
	escape_json(&get, st->table);
	appendStringInfo(&get, ", \"Key\": %s}", key);
	return get.data;
}

/*
 * The Get ({"TableName", "Key"}) a read statement of an ExecuteTransaction
 * stands for: the item a router of a sharded deployment claims before it
 * reads it (src/router/).  Raises DynamoDB's error for a statement that
 * reads no single item.
 */
Jsonb *
api_statement_get(Jsonb *element)
{
	Statement	st;

	partiql_parse(&st, statement_text(element), statement_params(element));
	if (st.kind != 'S')
		ddb_validation_error("Transactions must contain only read statements or only write statements");
	return text_to_jsonb(transaction_get(&st));
}

/*
 * ExecuteTransaction: up to 100 statements, all reads (a TransactGetItems)
 * or all writes and EXISTS checks (a TransactWriteItems), each addressing
 * one item by its key; an INSERT that finds its item cancels with the
 * reason DuplicateItem.
 */
Jsonb *
api_execute_transaction(Jsonb *request)
{
	JsonbContainer *list = statement_list(request, "TransactStatements", "transactStatements",
										  TRANSACTION_MAX_STATEMENTS);
	int			n = JsonContainerSize(list);
	StringInfoData actions;
	char		kind = 0;
	List	   *projections = NIL;
	char	   *token = api_client_request_token(request);
	bool	   *inserts = palloc0(sizeof(bool) * n);

	initStringInfo(&actions);
	for (int i = 0; i < n; i++)
	{
		Jsonb	   *element = list_element(list, i);
		Statement	st;
		Rewritten	rw;
		const char *wrapper;

		partiql_parse(&st, statement_text(element), statement_params(element));
		if (kind != 0 && (kind == 'S') != (st.kind == 'S'))
			ddb_validation_error("Transactions must contain only read statements or only write statements");
		kind = st.kind;
		if (st.kind == 'S')
		{
			appendStringInfo(&actions, "%s{\"Get\": %s}", i ? ", " : "", transaction_get(&st));
			projections = lappend(projections, st.projection);
			continue;
		}
		partiql_rewrite(&st, &rw, false);
		wrapper = st.kind == 'I' ? "Put" : st.kind == 'U' ? "Update" : st.kind == 'E' ? "ConditionCheck" : "Delete";
		appendStringInfo(&actions, "%s{\"%s\": %s}", i ? ", " : "", wrapper, rw.request);
		inserts[i] = rw.insert;
	}
	if (kind == 'S')
	{
		Jsonb	   *response = api_transact_get_items(text_to_jsonb(psprintf("{\"TransactItems\": [%s]}", actions.data)));
		JsonbParseState *state = NULL;
		JsonbValue *responses;
		ListCell   *lc;

		responses = getKeyJsonValueFromContainer(&response->root, "Responses", 9, NULL);
		pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
		ddb_push_key(&state, "Responses");
		pushJsonbValue(&state, WJB_BEGIN_ARRAY, NULL);
		foreach(lc, projections)
		{
			JsonbValue *r = getIthJsonbValueFromContainer(responses->val.binary.data, foreach_current_index(lc));
			JsonbValue *item = getKeyJsonValueFromContainer(r->val.binary.data, "Item", 4, NULL);

			pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
			if (item)
			{
				ddb_push_key(&state, "Item");
				pushJsonbValue(&state, WJB_VALUE, project_item(item, lfirst(lc)));
			}
			pushJsonbValue(&state, WJB_END_OBJECT, NULL);
		}
		pushJsonbValue(&state, WJB_END_ARRAY, NULL);
		return JsonbValueToJsonb(pushJsonbValue(&state, WJB_END_OBJECT, NULL));
	}
	appendStringInfoChar(&actions, ']');
	if (token)
	{
		appendStringInfoString(&actions, ", \"ClientRequestToken\": ");
		escape_json(&actions, token);
	}
	api_transact_write(text_to_jsonb(psprintf("{\"TransactItems\": [%s}", actions.data)), inserts);
	return ddb_empty_object();
}

