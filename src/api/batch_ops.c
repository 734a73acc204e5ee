/*
 * batch_ops.c — BatchWriteItem (up to 25 puts and deletes, checked before
 * any is applied) and BatchGetItem (up to 100 keys across tables).
 */
#include "postgres.h"

#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "../ddb_errors.h"
#include "../item/item_codec.h"
#include "../table/gsi.h"
#include "api.h"

#define BATCH_WRITE_MAX 25
#define BATCH_GET_MAX 100

/* One write of a BatchWriteItem, checked before any is applied. */
typedef struct BatchWrite
{
	TableDef   *def;
	Jsonb	   *item;			/* put; NULL for a delete */
	Datum		pk;
	Datum		sk;
} BatchWrite;

/* True when two writes address the same item. */
static bool
same_item(BatchWrite *a, BatchWrite *b)
{
	return a->def == b->def && api_same_key(a->pk, a->sk, b->pk, b->sk);
}

/* qsort's order of writes: by table name, then by key in DynamoDB's order. */
static int
write_order(const void *a, const void *b)
{
	const BatchWrite *x = *(BatchWrite *const *) a;
	const BatchWrite *y = *(BatchWrite *const *) b;
	int			c = strcmp(x->def->name, y->def->name);

	if (c == 0)
		c = api_compare_keys(x->pk, y->pk);
	if (c == 0 && x->sk)
		c = api_compare_keys(x->sk, y->sk);
	return c;
}

/* The array value of an object entry, or an error naming what was expected. */
static JsonbContainer *
array_of(JsonbValue *v, const char *what)
{
	if (v->type != jbvBinary || !JsonContainerIsArray(v->val.binary.data))
		ereport(ERROR,
				(errcode(ERRCODE_DDB_SERIALIZATION),
				 errmsg("Unexpected value type in payload for %s: expected a list", what)));
	return v->val.binary.data;
}

/*
 * BatchWriteItem: up to 25 puts and deletes, all applied or none.  Checked
 * before any is applied, in DynamoDB's order: table by table, the table,
 * then write by write its values, its key, a put's index keys and whether an
 * earlier write has the same key (the first error met is the one reported).
 */
Jsonb *
api_batch_write_item(Jsonb *request)
{
	JsonbContainer *tables = api_object(request, "RequestItems");
	BatchWrite	writes[BATCH_WRITE_MAX];
	BatchWrite **order;
	int			n = 0;
	JsonbIterator *it;
	JsonbValue	k;
	JsonbValue	v;
	JsonbIteratorToken tok;
	JsonbParseState *state = NULL;
	bool		metrics;

	if (tables == NULL)
		api_missing("requestItems");
	it = JsonbIteratorInit(tables);
	while ((tok = JsonbIteratorNext(&it, &k, true)) != WJB_DONE)
	{
		TableDef   *def;
		JsonbIterator *rit;
		JsonbValue	r;
		JsonbIteratorToken rtok;

		if (tok != WJB_KEY)
			continue;
		def = table_def_get(pnstrdup(k.val.string.val, k.val.string.len));
		JsonbIteratorNext(&it, &v, true);
		if (JsonContainerSize(array_of(&v, "RequestItems")) == 0)
			ddb_validation_error("1 validation error detected: Value '[]' at 'requestItems' failed to satisfy constraint: Map value must satisfy constraint: [Member must have length greater than or equal to 1]");
		rit = JsonbIteratorInit(array_of(&v, "RequestItems"));
		while ((rtok = JsonbIteratorNext(&rit, &r, true)) != WJB_DONE)
		{
			JsonbValue	put;
			JsonbValue	del;
			JsonbValue	inner;
			Jsonb	   *wrapper;

			if (rtok != WJB_ELEM)
				continue;
			if (n == BATCH_WRITE_MAX)
				ddb_validation_error("1 validation error detected: Value '{%s=%s}' at 'requestItems' failed to satisfy constraint: Map value must satisfy constraint: [Member must have length less than or equal to 25, Member must have length greater than or equal to 1]",
									 def->name, JsonbToCString(NULL, array_of(&v, "RequestItems"), 0));
			if (r.type != jbvBinary || !JsonContainerIsObject(r.val.binary.data))
				ereport(ERROR, (errcode(ERRCODE_DDB_SERIALIZATION),
								errmsg("A WriteRequest must be an object")));
			wrapper = JsonbValueToJsonb(&r);
			writes[n].def = def;
			if (api_field(wrapper, "PutRequest", &put) == api_field(wrapper, "DeleteRequest", &del))
				ddb_validation_error("Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes");
			if (api_field(wrapper, "PutRequest", &put))
			{
				JsonbContainer *item = api_object(JsonbValueToJsonb(&put), "Item");

				if (item == NULL)
					api_missing("item");
				writes[n].item = item_from_dynamodb(item);
				store_item_keys(def, writes[n].item, &writes[n].pk, &writes[n].sk);
				/* (store_put checks again; here so that it comes before a later write's error) */
				gsi_check_item(def, writes[n].item);
			}
			else
			{
				writes[n].item = NULL;
				if (!api_field(JsonbValueToJsonb(&del), "Key", &inner) || inner.type != jbvBinary ||
					!JsonContainerIsObject(inner.val.binary.data))
					api_missing("key");
				api_table_key(def, inner.val.binary.data, &writes[n].pk, &writes[n].sk);
			}
			for (int i = 0; i < n; i++)
				if (same_item(&writes[i], &writes[n]))
					ddb_validation_error("Provided list of item keys contains duplicates");
			n++;
		}
	}
	if (n == 0)
		ddb_validation_error("The requestItems parameter is required for BatchWriteItem");
	metrics = api_collection_metrics_wanted(request);
	/* written in one order whatever the request's, so two batches never wait on each other's rows in turn */
	order = palloc(sizeof(BatchWrite *) * n);
	for (int i = 0; i < n; i++)
		order[i] = &writes[i];
	qsort(order, n, sizeof(BatchWrite *), write_order);
	for (int i = 0; i < n; i++)
	{
		if (order[i]->item)
			store_put(order[i]->def, order[i]->item, NULL, NULL);
		else
			store_delete(order[i]->def, order[i]->pk, order[i]->sk, NULL, NULL);
	}
	/* a deleted item is not read back: one unit, DynamoDB's least */
	for (int i = 0; i < n; i++)
		api_capacity_write_item(writes[i].def->name, writes[i].item, NULL);
	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	ddb_push_key(&state, "UnprocessedItems");
	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	if (metrics)
	{
		TableDef  **defs = palloc(sizeof(TableDef *) * n);
		Datum	   *pks = palloc(sizeof(Datum) * n);

		for (int i = 0; i < n; i++)
		{
			defs[i] = writes[i].def;
			pks[i] = writes[i].pk;
		}
		api_push_collection_metrics_map(&state, defs, pks, n);
	}
	return JsonbValueToJsonb(pushJsonbValue(&state, WJB_END_OBJECT, NULL));
}

/* BatchGetItem: up to 100 keys across tables. */
Jsonb *
api_batch_get_item(Jsonb *request)
{
	JsonbContainer *tables = api_object(request, "RequestItems");
	JsonbIterator *it;
	JsonbValue	k;
	JsonbValue	v;
	JsonbIteratorToken tok;
	JsonbParseState *state = NULL;
	int			total = 0;
	Datum		pks[BATCH_GET_MAX];
	Datum		sks[BATCH_GET_MAX];
	Jsonb	   *items[BATCH_GET_MAX];
	int			nkeys;
	Placeholders ph;
	ProjectionNode *projection;

	if (tables == NULL)
		api_missing("requestItems");
	if (JsonContainerSize(tables) == 0)
		ddb_validation_error("The requestItems parameter is required for BatchGetItem");
	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	ddb_push_key(&state, "Responses");
	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	it = JsonbIteratorInit(tables);
	while ((tok = JsonbIteratorNext(&it, &k, true)) != WJB_DONE)
	{
		char	   *name;
		TableDef   *def;
		Jsonb	   *spec;
		JsonbValue	keys;
		JsonbIterator *kit;
		JsonbValue	key;
		JsonbIteratorToken ktok;

		if (tok != WJB_KEY)
			continue;
		name = pnstrdup(k.val.string.val, k.val.string.len);
		def = table_def_get(name);
		JsonbIteratorNext(&it, &v, true);
		if (v.type != jbvBinary || !JsonContainerIsObject(v.val.binary.data))
			ereport(ERROR, (errcode(ERRCODE_DDB_SERIALIZATION),
							errmsg("KeysAndAttributes must be an object")));
		spec = JsonbValueToJsonb(&v);
		spec = api_legacy_to_expressions(spec, LEGACY_ATTRIBUTES_TO_GET, NULL);
		api_expr_context(spec, &ph);
		projection = itemexpr_projection(&ph, api_string(spec, "ProjectionExpression"));
		if (projection == NULL)
			api_reject_placeholders(spec, NULL);
		itemexpr_check_unused(&ph);
		if (!api_field(spec, "Keys", &keys))
			api_missing("keys");
		ddb_push_key(&state, name);
		pushJsonbValue(&state, WJB_BEGIN_ARRAY, NULL);
		if (JsonContainerSize(array_of(&keys, "Keys")) == 0)
			ddb_validation_error("1 validation error detected: Value '[]' at 'requestItems.%s.member.keys' failed to satisfy constraint: Member must have length greater than or equal to 1",
								 name);
		if (JsonContainerSize(array_of(&keys, "Keys")) > BATCH_GET_MAX)
			ddb_validation_error("1 validation error detected: Value at 'RequestItems.%s.member.Keys' failed to satisfy constraint: Member must have length less than or equal to 100",
								 name);
		nkeys = 0;
		kit = JsonbIteratorInit(array_of(&keys, "Keys"));
		while ((ktok = JsonbIteratorNext(&kit, &key, true)) != WJB_DONE)
		{
			if (ktok != WJB_ELEM)
				continue;
			if (++total > BATCH_GET_MAX)
				ddb_validation_error("Too many items requested for the BatchGetItem call");
			if (key.type != jbvBinary || !JsonContainerIsObject(key.val.binary.data))
				api_missing("key");
			api_table_key(def, key.val.binary.data, &pks[nkeys], &sks[nkeys]);
			/* keys already asked for in this table */
			for (int i = 0; i < nkeys; i++)
				if (api_same_key(pks[i], sks[i], pks[nkeys], sks[nkeys]))
					ddb_validation_error("Provided list of item keys contains duplicates");
			nkeys++;
		}
		/* one statement for the table's keys, not one per key */
		store_get_many(def, nkeys, pks, sks, items);
		for (int i = 0; i < nkeys; i++)
		{
			Jsonb	   *item = items[i];

			api_capacity_read_item(def->name, item, false);
			if (item && projection)
				item = itemexpr_project(projection, item);
			if (item)
				item_push_dynamodb(&state, &item->root);
		}
		pushJsonbValue(&state, WJB_END_ARRAY, NULL);
	}
	pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	ddb_push_key(&state, "UnprocessedKeys");
	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	return JsonbValueToJsonb(pushJsonbValue(&state, WJB_END_OBJECT, NULL));
}
