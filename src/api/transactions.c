/*
 * transactions.c — TransactWriteItems and TransactGetItems; and, on a shard
 * node, the claims of the items a router's TransactGetItems across nodes
 * reads (ddb.try_claim_items, which the router calls on each node:
 * sql/router/transactions.sql).
 *
 * A write transaction runs its actions in order inside one subtransaction,
 * each in a subtransaction of its own, so that every condition is checked
 * and reported: when any fails, everything is rolled back and the call fails
 * with DDB_ERROR_TRANSACTION_CANCELED and one CancellationReason per action,
 * in request order.  A ClientRequestToken makes a repeated request succeed
 * without running again for ten minutes (ddb.transaction_tokens).
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/json.h"

#include "../ddb_errors.h"
#include "../item/item_codec.h"
#include "../table/item_store.h"
#include "../table/table_access.h"
#include "api.h"

PG_FUNCTION_INFO_V1(ddb_try_claim_items);

#define TRANSACT_MAX_ITEMS 100
/* DynamoDB's limit on the items a transaction writes, together */
#define TRANSACT_MAX_BYTES (4 * 1024 * 1024)

/* A kind of TransactItems action: its member name and the operation that runs it. */
typedef struct ActionKind
{
	const char *name;
	Jsonb	   *(*run) (Jsonb *request);
} ActionKind;

static const ActionKind write_kinds[] = {
	{"Put", api_put_item}, {"Update", api_update_item},
	{"Delete", api_delete_item}, {"ConditionCheck", api_condition_check},
};
static const ActionKind get_kinds[] = {{"Get", api_get_item}};

/* The action of one TransactItems element. */
typedef struct TransactAction
{
	const ActionKind *kind;
	Jsonb	   *request;		/* the action's own request body */
	TableDef   *def;
	Datum		pk;
	Datum		sk;
	int64		put_bytes;		/* the size of the item a Put writes */
} TransactAction;

/* Reads the TransactItems array: each element one action of the allowed kinds. */
static TransactAction *
read_actions(Jsonb *request, const ActionKind *kinds, int nkinds, int *n)
{
	JsonbValue	items;
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	TransactAction *actions;

	if (!api_field(request, "TransactItems", &items) || items.type != jbvBinary ||
		!JsonContainerIsArray(items.val.binary.data))
		api_missing("transactItems");
	*n = (int) JsonContainerSize(items.val.binary.data);
	if (*n < 1)
		ddb_validation_error("1 validation error detected: Value '[]' at 'transactItems' failed to satisfy constraint: Member must have length greater than or equal to 1");
	if (*n > TRANSACT_MAX_ITEMS)
		ddb_validation_error("1 validation error detected: Value '%s' at 'transactItems' failed to satisfy constraint: Member must have length less than or equal to 100",
							 JsonbToCString(NULL, items.val.binary.data, 0));
	actions = palloc0(sizeof(TransactAction) * *n);
	*n = 0;
	it = JsonbIteratorInit(items.val.binary.data);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		Jsonb	   *element;
		JsonbValue	body;
		int			found = 0;

		if (tok != WJB_ELEM)
			continue;
		if (v.type != jbvBinary || !JsonContainerIsObject(v.val.binary.data))
			ereport(ERROR, (errcode(ERRCODE_DDB_SERIALIZATION),
							errmsg("A TransactItems element must be an object")));
		element = JsonbValueToJsonb(&v);
		for (int k = 0; k < nkinds; k++)
			if (api_field(element, kinds[k].name, &body))
			{
				if (body.type != jbvBinary || !JsonContainerIsObject(body.val.binary.data))
					ereport(ERROR, (errcode(ERRCODE_DDB_SERIALIZATION),
									errmsg("%s must be an object", kinds[k].name)));
				actions[*n].kind = &kinds[k];
				actions[*n].request = JsonbValueToJsonb(&body);
				found++;
			}
		if (found != 1 || JsonContainerSize(&element->root) != 1)
			ddb_validation_error("TransactItems can only contain one of Check, Put, Update or Delete");
		(*n)++;
	}
	return actions;
}

/*
 * Reads the table and key an action addresses, for the one-action-per-item
 * rule, and the size of the item a Put writes (a subtransaction's callback).
 */
static void
action_key(void *arg)
{
	TransactAction *a = (TransactAction *) arg;

	a->def = table_def_get(api_table_name(api_required_string(a->request, "TableName", "tableName")));
	if (a->kind->run == api_put_item)
	{
		JsonbContainer *item = api_object(a->request, "Item");
		Jsonb	   *natural;

		if (item == NULL)
			api_missing("item");
		natural = item_from_dynamodb(item);
		store_item_keys(a->def, natural, &a->pk, &a->sk);
		a->put_bytes = item_size(&natural->root);
		return;
	}
	api_table_key(a->def, api_object(a->request, "Key"), &a->pk, &a->sk);
}

/*
 * True for a ValidationException that concerns one action's key or item
 * rather than the request: DynamoDB reports it as that action's
 * ValidationError cancellation reason (a Key of the wrong type or shape, as
 * the conformance suite recorded for TransactGetItems; a key attribute of
 * the wrong type in a Put's item or an index key; an update of a key
 * attribute or a key over its size limit, as DynamoDB Local answers).  A
 * malformed expression or placeholder stays the request's
 * ValidationException.
 */
static bool
is_action_validation(ErrorData *edata)
{
	static const char *const action_messages[] = {
		"The provided key element does not match the schema",
		"One or more parameter values were invalid: Type mismatch for ",
		"One or more parameter values were invalid: Cannot update attribute ",
		"One or more parameter values were invalid: Size of hashkey ",
		"One or more parameter values were invalid: Size of rangekey ",
	};

	if (edata->sqlerrcode != ERRCODE_DDB_VALIDATION)
		return false;
	for (size_t i = 0; i < lengthof(action_messages); i++)
		if (strncmp(edata->message, action_messages[i], strlen(action_messages[i])) == 0)
			return true;
	return false;
}

/*
 * Runs fn on an action in a subtransaction: false, with the message, for an
 * error that is the action's ValidationError; other errors are the request's.
 */
static bool
action_valid(void (*fn) (void *), TransactAction *a, const char **message)
{
	ErrorData  *edata = api_subtransaction_run(fn, a);

	if (edata == NULL)
		return true;
	if (!is_action_validation(edata))
		ReThrowError(edata);
	*message = edata->message;
	return false;
}

/* Pushes a CancellationReason: {"Code": ..., "Message": ..., "Item": ...}. */
static void
push_reason(JsonbParseState **state, const char *code, const char *message, Jsonb *item)
{
	JsonbValue	v;

	pushJsonbValue(state, WJB_BEGIN_OBJECT, NULL);
	ddb_push_string(state, "Code", code);
	if (message)
		ddb_push_string(state, "Message", message);
	if (item)
	{
		ddb_push_key(state, "Item");
		ddb_binary_value(item, &v);
		pushJsonbValue(state, WJB_VALUE, &v);
	}
	pushJsonbValue(state, WJB_END_OBJECT, NULL);
}

/* DynamoDB's message of a cancellation reason code, or NULL for None. */
static const char *
reason_message(const char *code)
{
	if (strcmp(code, "ConditionalCheckFailed") == 0)
		return "The conditional request failed";
	if (strcmp(code, "DuplicateItem") == 0)
		return "Duplicate primary key exists in table";
	if (strcmp(code, "TransactionConflict") == 0)
		return "Transaction is ongoing for the item";
	return NULL;
}

/*
 * True for an error of an action that another transaction caused (its row
 * of error_types.h, or of DDB_SQLSTATE_ERRORS for a deadlock or a
 * serialization failure): DynamoDB's TransactionConflict.
 */
static bool
is_conflict(ErrorData *edata)
{
	char	   *message;
	const DdbErrorType *type = ddb_error_type_of_errcode(edata->sqlerrcode);

	if (type == NULL)
		type = ddb_database_error(edata, &message);
	return type == ddb_error_type(DDB_ERROR_TRANSACTION_CONFLICT);
}

/*
 * Raises DDB_ERROR_TRANSACTION_CANCELED: one CancellationReason per action
 * (Code, and Message and Item where given; a NULL message: the code's own),
 * the codes in the message.
 */
static void
raise_cancelled(int n, const char **codes, const char **messages, Jsonb **items)
{
	JsonbParseState *state = NULL;
	StringInfoData summary;
	JsonbValue	reasons;
	char	   *message;

	initStringInfo(&summary);
	pushJsonbValue(&state, WJB_BEGIN_ARRAY, NULL);
	for (int i = 0; i < n; i++)
	{
		push_reason(&state, codes[i], messages && messages[i] ? messages[i] : reason_message(codes[i]),
					items ? items[i] : NULL);
		appendStringInfo(&summary, "%s%s", i ? ", " : "", codes[i]);
	}
	ddb_binary_value(JsonbValueToJsonb(pushJsonbValue(&state, WJB_END_ARRAY, NULL)), &reasons);
	message = psprintf("Transaction cancelled, please refer cancellation reasons for specific reasons [%s]",
					   summary.data);
	ereport(ERROR,
			(errcode(ERRCODE_DDB_TRANSACTION_CANCELED),
			 errmsg("%s", message),
			 errdetail("%s", ddb_error_body(ddb_error_type(DDB_ERROR_TRANSACTION_CANCELED), message,
											"CancellationReasons", &reasons))));
}

/* The DynamoDB-JSON item a ConditionalCheckFailed error body carries, or NULL. */
static Jsonb *
failed_item(const char *detail)
{
	Jsonb	   *body;
	JsonbValue	item;

	if (detail == NULL || detail[0] != '{')
		return NULL;
	body = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(detail)));
	if (getKeyJsonValueFromContainer(&body->root, "Item", 4, &item) == NULL)
		return NULL;
	return JsonbValueToJsonb(&item);
}

/*
 * Claims a ClientRequestToken for this request (body: the request without
 * its token, as text): true when the request is to run.  The token's row is
 * inserted before the actions run and commits or rolls back with them, so a
 * concurrent request under the same token waits for this one and then sees
 * its outcome.  False when this very request already ran; raises for the
 * token used by another request.  The digest is md5 of the caller's role
 * and the body (another role's identical request is not a replay).  A
 * token claimed by 0.1's library has md5 of the body alone, which this
 * library never writes: it still matches its request, as 0.1 matched it,
 * for the ten minutes it lives after an update.
 */
static bool
token_claim(const char *token, const char *body)
{
	char	   *digest = text_to_cstring(DatumGetTextPP(DirectFunctionCall1(md5_text,
																			  PointerGetDatum(cstring_to_text(psprintf("%u:%s", GetUserId(), body))))));
	Oid			argtypes[3] = {TEXTOID, TEXTOID, TEXTOID};
	Datum		args[3] = {CStringGetTextDatum(token), CStringGetTextDatum(digest), CStringGetTextDatum(body)};
	bool		isnull;
	bool		same;
	OwnerContext saved;

	/* the tokens of every caller share one table, the owner's */
	owner_context_enter(ddb_relation_oid("transaction_tokens"), &saved);
	SPI_connect();
	SPI_execute("DELETE FROM ddb.transaction_tokens WHERE created_at OPERATOR(pg_catalog.<) "
				"(pg_catalog.now() OPERATOR(pg_catalog.-) '10 minutes'::pg_catalog.interval)", false, 0);
	SPI_execute_with_args("INSERT INTO ddb.transaction_tokens (token, request_digest) VALUES ($1, $2) "
						  "ON CONFLICT (token) DO NOTHING", 2, argtypes, args, NULL, false, 0);
	if (SPI_processed == 1)
	{
		SPI_finish();
		owner_context_exit(&saved);
		return true;
	}
	SPI_execute_with_args("SELECT request_digest OPERATOR(pg_catalog.=) $2 OR request_digest OPERATOR(pg_catalog.=) "
						  "pg_catalog.md5($3) FROM ddb.transaction_tokens "
						  "WHERE token OPERATOR(pg_catalog.=) $1", 3, argtypes, args, NULL, false, 1);
	if (SPI_processed != 1)
		elog(ERROR, "ddb_model: the row of token \"%s\" vanished", token);
	same = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	SPI_finish();
	owner_context_exit(&saved);
	if (!same)
		ereport(ERROR,
				(errcode(ERRCODE_DDB_IDEMPOTENT_MISMATCH),
				 errmsg("Request failed with the same idempotency token but different parameters")));
	return false;
}

/* The response of a TransactWriteItems asking for ItemCollectionMetrics. */
static Jsonb *
collection_metrics_response(TransactAction *actions, int n)
{
	TableDef  **defs = palloc(sizeof(TableDef *) * n);
	Datum	   *pks = palloc(sizeof(Datum) * n);
	JsonbParseState *state = NULL;
	int			nwritten = 0;

	/* a ConditionCheck writes nothing */
	for (int i = 0; i < n; i++)
		if (actions[i].kind->run != api_condition_check)
		{
			defs[nwritten] = actions[i].def;
			pks[nwritten++] = actions[i].pk;
		}
	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	api_push_collection_metrics_map(&state, defs, pks, nwritten);
	return JsonbValueToJsonb(pushJsonbValue(&state, WJB_END_OBJECT, NULL));
}

/* TransactWriteItems. */
Jsonb *
api_transact_write_items(Jsonb *request)
{
	return api_transact_write(request, NULL);
}

/* Runs one action of a transaction (a subtransaction's callback). */
static void
run_action(void *arg)
{
	TransactAction *a = (TransactAction *) arg;

	a->kind->run(a->request);
}

/*
 * TransactWriteItems, where inserts[i] (if given) marks a Put whose failed
 * condition means its item exists: a PartiQL INSERT, whose cancellation
 * reason is DynamoDB's DuplicateItem.
 */
Jsonb *
api_transact_write(Jsonb *request, const bool *inserts)
{
	Subtransaction all;
	char	   *token = api_client_request_token(request);
	int			n;
	TransactAction *actions = read_actions(request, write_kinds, lengthof(write_kinds), &n);
	const char **codes = palloc0(sizeof(char *) * n);
	const char **messages = palloc0(sizeof(char *) * n);
	Jsonb	  **items = palloc0(sizeof(Jsonb *) * n);
	bool		cancelled = false;
	bool		conflict = false;
	bool		metrics = api_collection_metrics_wanted(request);
	int64		put_bytes = 0;

	/* an action whose key DynamoDB refuses is that action's ValidationError */
	for (int i = 0; i < n; i++)
	{
		codes[i] = "None";
		if (!action_valid(action_key, &actions[i], &messages[i]))
		{
			codes[i] = "ValidationError";
			cancelled = true;
			continue;
		}
		put_bytes += actions[i].put_bytes;
		if (put_bytes > TRANSACT_MAX_BYTES)
			ddb_validation_error("Transaction request cannot be larger than 4 MB");
		for (int j = 0; j < i; j++)
			if (strcmp(codes[j], "None") == 0 && actions[j].def == actions[i].def &&
				api_same_key(actions[j].pk, actions[j].sk, actions[i].pk, actions[i].sk))
				ddb_validation_error("Transaction request cannot include multiple operations on one item");
	}
	if (token)
	{
		Jsonb	   *body = DatumGetJsonbP(DirectFunctionCall2(jsonb_delete, JsonbPGetDatum(request),
															  CStringGetTextDatum("ClientRequestToken")));

		if (!token_claim(token, JsonbToCString(NULL, &body->root, 0)))
			return ddb_empty_object();
	}

	/*
	 * The items, claimed before anything is written (each tried for 10 ms at
	 * most): one another transaction holds cancels this one
	 * (TransactionConflict), as DynamoDB cancels, so that two transactions
	 * never wait on each other's rows.
	 */
	for (int i = 0; i < n; i++)
		if (strcmp(codes[i], "None") == 0 && !store_claim_item(actions[i].def, actions[i].pk, actions[i].sk))
		{
			codes[i] = "TransactionConflict";
			conflict = true;
		}
	if (conflict)
		raise_cancelled(n, codes, messages, items);

	/*
	 * All actions in one subtransaction; each in one of its own.  Every
	 * action with a key runs, also after another's cancellation reason, so
	 * that a malformed expression anywhere is the request's error, as in
	 * DynamoDB.
	 */
	api_subtransaction_begin(&all);
	for (int i = 0; i < n; i++)
	{
		ErrorData  *edata;

		if (strcmp(codes[i], "None") != 0)
			continue;
		edata = api_subtransaction_run(run_action, &actions[i]);
		if (edata == NULL)
			continue;
		if (edata->sqlerrcode == ERRCODE_DDB_CONDITIONAL_CHECK_FAILED)
		{
			codes[i] = inserts && inserts[i] ? "DuplicateItem" : "ConditionalCheckFailed";
			items[i] = failed_item(edata->detail);
		}
		else if (is_conflict(edata))
			codes[i] = "TransactionConflict";
		else if (edata->sqlerrcode == ERRCODE_DDB_PROVISIONED_THROUGHPUT_EXCEEDED)
		{
			/* its table or a global index is out of capacity (throttle.c): DynamoDB's reason, its message */
			codes[i] = "ProvisionedThroughputExceeded";
			messages[i] = edata->message;
		}
		else if (is_action_validation(edata))
		{
			codes[i] = "ValidationError";
			messages[i] = edata->message;
		}
		else
		{
			/* any other error ends the whole request, as it is */
			api_subtransaction_rollback(&all);
			ReThrowError(edata);
		}
		cancelled = true;
	}
	if (!cancelled)
	{
		api_subtransaction_commit(&all);
		return metrics ? collection_metrics_response(actions, n) : ddb_empty_object();
	}
	api_subtransaction_rollback(&all);
	raise_cancelled(n, codes, messages, items);
	return NULL;
}

/* Reads a Get's Key into its action (a subtransaction's callback). */
static void
read_get_key(void *arg)
{
	TransactAction *a = (TransactAction *) arg;

	api_table_key(a->def, api_object(a->request, "Key"), &a->pk, &a->sk);
}

/* The Gets of a TransactGetItems being run: the action running, and the response being built. */
typedef struct GetsRun
{
	TransactAction *actions;
	int			n;
	int			current;
	JsonbParseState *state;
} GetsRun;

/* Runs every Get, pushing its answer to the response (a subtransaction's callback). */
static void
run_gets(void *arg)
{
	GetsRun    *run = (GetsRun *) arg;

	for (run->current = 0; run->current < run->n; run->current++)
	{
		Jsonb	   *got = run->actions[run->current].kind->run(run->actions[run->current].request);
		JsonbValue	v;

		ddb_binary_value(got, &v);
		pushJsonbValue(&run->state, WJB_ELEM, &v);
	}
}

/*
 * TransactGetItems: the items of up to 100 Gets, in request order.  A Get
 * with a key DynamoDB refuses cancels the request with a ValidationError
 * reason; two Gets of one item are a validation error.  A Get whose table
 * is out of read capacity (throttle.c) cancels it with a
 * ProvisionedThroughputExceeded reason, as DynamoDB does.
 */
Jsonb *
api_transact_get_items(Jsonb *request)
{
	int			n;
	TransactAction *actions = read_actions(request, get_kinds, lengthof(get_kinds), &n);
	const char **codes = palloc0(sizeof(char *) * n);
	const char **messages = palloc0(sizeof(char *) * n);
	bool		invalid = false;
	GetsRun		run = {actions, n, 0, NULL};
	ErrorData  *edata;

	for (int i = 0; i < n; i++)
	{
		char	   *table = api_required_string(actions[i].request, "TableName", "tableName");

		/*
		 * a Get's TableName has no pattern (it may be an ARN): a name no
		 * table has is not found, as DynamoDB Local answers it
		 */
		actions[i].def = table_def_get(table[0] ? table : api_table_name(table));
		codes[i] = "None";
		if (!action_valid(read_get_key, &actions[i], &messages[i]))
		{
			codes[i] = "ValidationError";
			invalid = true;
			continue;
		}
		for (int j = 0; j < i; j++)
			if (strcmp(codes[j], "None") == 0 && actions[j].def == actions[i].def &&
				api_same_key(actions[j].pk, actions[j].sk, actions[i].pk, actions[i].sk))
				ddb_validation_error("Transaction request cannot include multiple operations on one item");
	}
	if (invalid)
		raise_cancelled(n, codes, messages, NULL);

	pushJsonbValue(&run.state, WJB_BEGIN_OBJECT, NULL);
	ddb_push_key(&run.state, "Responses");
	pushJsonbValue(&run.state, WJB_BEGIN_ARRAY, NULL);
	edata = api_subtransaction_run(run_gets, &run);
	if (edata != NULL)
	{
		if (edata->sqlerrcode != ERRCODE_DDB_PROVISIONED_THROUGHPUT_EXCEEDED)
			ReThrowError(edata);
		codes[run.current] = "ProvisionedThroughputExceeded";
		messages[run.current] = edata->message;
		raise_cancelled(n, codes, messages, NULL);
	}
	pushJsonbValue(&run.state, WJB_END_ARRAY, NULL);
	return JsonbValueToJsonb(pushJsonbValue(&run.state, WJB_END_OBJECT, NULL));
}

/*
 * The request of an element of a transaction: a TransactItems one
 * ({"Get": {...}}) or a PartiQL statement ({"Statement": ...}).
 */
static Jsonb *
element_request(Jsonb *element)
{
	JsonbValue	v;

	if (JsonContainerIsObject(&element->root) && api_field(element, "Statement", &v))
		return api_statement_get(element);
	if (JsonContainerIsObject(&element->root) && JsonContainerSize(&element->root) == 1)
	{
		JsonbIterator *it = JsonbIteratorInit(&element->root);

		(void) JsonbIteratorNext(&it, &v, true);	/* WJB_BEGIN_OBJECT */
		(void) JsonbIteratorNext(&it, &v, true);	/* the action's name */
		if (JsonbIteratorNext(&it, &v, true) == WJB_VALUE && v.type == jbvBinary)
			return JsonbValueToJsonb(&v);
	}
	return NULL;
}

/* Tries to claim the item an element reads, shared until the transaction ends; false when a transaction holds it. */
static bool
try_claim(Jsonb *element)
{
	Jsonb	   *request = element_request(element);
	JsonbValue	name;
	JsonbContainer *key;
	TableDef   *def;
	Datum		pk;
	Datum		sk;
	LOCKTAG		tag;

	if (request == NULL || !JsonContainerIsObject(&request->root) ||
		!api_field(request, "TableName", &name) || name.type != jbvString)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a claim names an action with a TableName and Key, or a statement")));
	def = table_def_get(pnstrdup(name.val.string.val, name.val.string.len));
	key = api_object(request, "Key");
	if (key == NULL)
		api_missing("key");
	api_table_key(def, key, &pk, &sk);
	store_item_lock_tag(def, pk, sk, &tag);
	return LockAcquire(&tag, ShareLock, false, true) != LOCKACQUIRE_NOT_AVAIL;
}

/*
 * ddb.try_claim_items(claims): on a node, for a router's TransactGetItems
 * across nodes, claims ([[n, element], ...]) the items its elements read;
 * the claims it could not take, which another transaction holds.  Closed
 * to PUBLIC (a claim held stalls TransactWriteItems of the item): the user
 * a router reaches its nodes as, which may act as any role, calls it.
 */
Datum
ddb_try_claim_items(PG_FUNCTION_ARGS)
{
	Jsonb	   *claims = PG_GETARG_JSONB_P(0);
	JsonbParseState *state = NULL;
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken token;

	if (!JsonContainerIsArray(&claims->root) || JsonContainerIsScalar(&claims->root))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("ddb.try_claim_items takes an array of claims [n, element]")));
	(void) pushJsonbValue(&state, WJB_BEGIN_ARRAY, NULL);
	it = JsonbIteratorInit(&claims->root);
	while ((token = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		Jsonb	   *claim;
		JsonbValue *element;

		if (token != WJB_ELEM)
			continue;
		claim = v.type == jbvBinary ? JsonbValueToJsonb(&v) : NULL;
		if (claim == NULL || !JsonContainerIsArray(&claim->root) || JsonContainerIsScalar(&claim->root) ||
			JsonContainerSize(&claim->root) != 2 ||
			(element = getIthJsonbValueFromContainer(&claim->root, 1)) == NULL || element->type != jbvBinary)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("a claim of ddb.try_claim_items is [n, element]")));
		if (!try_claim(JsonbValueToJsonb(element)))
			(void) pushJsonbValue(&state, WJB_ELEM, &v);
	}
	PG_RETURN_JSONB_P(JsonbValueToJsonb(pushJsonbValue(&state, WJB_END_ARRAY, NULL)));
}
