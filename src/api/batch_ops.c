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
	char	   *table_name;
	TableDef   *def;
	Jsonb	   *item;			/* put; NULL for a delete */
	JsonbContainer *key;		/* delete's Key */
	Jsonb	   *given;			/* the item, or the delete's Key, as natural values */
	Datum		pk;
	Datum		sk;
} BatchWrite;

/* True when two writes give one key attribute equal values (an absent one equals nothing). */
static bool
same_given_value(BatchWrite *a, BatchWrite *b, const char *attribute)
{
	JsonbValue	x;
	JsonbValue	y;

	if (getKeyJsonValueFromContainer(&a->given->root, attribute, (int) strlen(attribute), &x) == NULL ||
		getKeyJsonValueFromContainer(&b->given->root, attribute, (int) strlen(attribute), &y) == NULL)
		return false;
	return compareJsonbContainers(&JsonbValueToJsonb(&x)->root, &JsonbValueToJsonb(&y)->root) == 0;
}

/*
 * True when two writes of one table give its key attributes equal values:
 * DynamoDB finds duplicates on the keys as given, before it checks that
 * each write has its key.
 */
static bool
same_given_key(BatchWrite *a, BatchWrite *b)
{
	KeySchema  *keys = &a->def->keys;

	return a->def == b->def && same_given_value(a, b, keys->hash_key) &&
		(keys->range_key == NULL || same_given_value(a, b, keys->range_key));
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
 * in DynamoDB's order before any is applied: the requests and their
 * attribute values; table by table, the table and duplicate keys among its
 * writes; then each write's key (and a put's index keys).
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
		char	   *table_name;
		JsonbIterator *rit;
		JsonbValue	r;
		JsonbIteratorToken rtok;

		if (tok != WJB_KEY)
			continue;
		table_name = pnstrdup(k.val.string.val, k.val.string.len);
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
									 table_name, JsonbToCString(NULL, array_of(&v, "RequestItems"), 0));
			if (r.type != jbvBinary || !JsonContainerIsObject(r.val.binary.data))
				ereport(ERROR, (errcode(ERRCODE_DDB_SERIALIZATION),
								errmsg("A WriteRequest must be an object")));
			wrapper = JsonbValueToJsonb(&r);
			writes[n].table_name = table_name;
			writes[n].item = NULL;
			writes[n].key = NULL;
			if (api_field(wrapper, "PutRequest", &put) == api_field(wrapper, "DeleteRequest", &del))
				ddb_validation_error("Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes");
			if (api_field(wrapper, "PutRequest", &put))
			{
				JsonbContainer *item = api_object(JsonbValueToJsonb(&put), "Item");

				if (item == NULL)
					api_missing("item");
				writes[n].item = item_from_dynamodb(item);
				writes[n].given = writes[n].item;
			}
			else
			{
				if (!api_field(JsonbValueToJsonb(&del), "Key", &inner) || inner.type != jbvBinary ||
					!JsonContainerIsObject(inner.val.binary.data))
					api_missing("key");
				writes[n].key = inner.val.binary.data;
				writes[n].given = item_from_dynamodb(writes[n].key);
			}
			n++;
		}
	}
	if (n == 0)
		ddb_validation_error("The requestItems parameter is required for BatchWriteItem");
	/* table by table, in the request's order: the table, then duplicate keys among its writes */
	for (int i = 0; i < n; i++)
	{
		writes[i].def = i > 0 && writes[i].table_name == writes[i - 1].table_name ?
			writes[i - 1].def : table_def_get(writes[i].table_name);
		for (int j = 0; j < i; j++)
			if (same_given_key(&writes[j], &writes[i]))
				ddb_validation_error("Provided list of item keys contains duplicates");
	}
	for (int i = 0; i < n; i++)
	{
		if (writes[i].item)
		{
			store_item_keys(writes[i].def, writes[i].item, &writes[i].pk, &writes[i].sk);
			/* (store_put checks again; here so that it comes before the duplicates) */
			gsi_check_item(writes[i].def, writes[i].item);
		}
		else
			api_table_key(writes[i].def, writes[i].key, &writes[i].pk, &writes[i].sk);
	}
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
	List	   *seen;
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
		seen = NIL;
		kit = JsonbIteratorInit(array_of(&keys, "Keys"));
		while ((ktok = JsonbIteratorNext(&kit, &key, true)) != WJB_DONE)
		{
			Datum		pk;
			Datum		sk;
			Jsonb	   *item;
			ListCell   *lc;

			if (ktok != WJB_ELEM)
				continue;
			if (++total > BATCH_GET_MAX)
				ddb_validation_error("Too many items requested for the BatchGetItem call");
			if (key.type != jbvBinary || !JsonContainerIsObject(key.val.binary.data))
				api_missing("key");
			api_table_key(def, key.val.binary.data, &pk, &sk);
			/* pairs of (pk, sk) already asked for in this table */
			for (lc = list_head(seen); lc != NULL; lc = lnext(seen, lnext(seen, lc)))
				if (api_same_key(PointerGetDatum(lfirst(lc)), PointerGetDatum(lfirst(lnext(seen, lc))), pk, sk))
					ddb_validation_error("Provided list of item keys contains duplicates");
			seen = lappend(lappend(seen, DatumGetPointer(pk)), DatumGetPointer(sk));
			item = store_get(def, pk, sk);
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
