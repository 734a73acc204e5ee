/*
 * item_claims.c — on a shard node, the claims of the items a router's
 * TransactGetItems across nodes reads (ddb.try_claim_items, which the
 * router calls on each node: sql/router/transactions.sql).  It reads both
 * kinds of transaction element, TransactItems' and PartiQL's, so it sits
 * above both, beside the dispatcher.
 */
#include "postgres.h"

#include "storage/lmgr.h"
#include "utils/jsonb.h"

#include "../api/api.h"
#include "../partiql/partiql.h"
#include "../request/request.h"
#include "../table/item_store.h"
#include "../table/table_def.h"

PG_FUNCTION_INFO_V1(ddb_try_claim_items);

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
