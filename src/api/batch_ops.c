/*
 * batch_ops.c — BatchWriteItem (up to 25 puts and deletes, checked before
 * any is applied) and BatchGetItem (up to 100 keys across tables).  With
 * throttling on (src/metering/throttle.c), a write or key whose table (or, for a write,
 * a global index of it) is out of capacity comes back unprocessed
 * (UnprocessedItems, UnprocessedKeys); when none could be served, the
 * request is ProvisionedThroughputExceededException, as DynamoDB answers.
 */
#include "postgres.h"

#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "../ddb_errors.h"
#include "../item/item_codec.h"
#include "../metering/metering.h"
#include "../metering/throttle.h"
#include "../request/request.h"
#include "../table/gsi.h"
#include "api.h"

#define BATCH_WRITE_MAX 25
#define BATCH_GET_MAX 100

/* One write of a BatchWriteItem, checked before any is applied. */
typedef struct BatchWrite
{
	TableDef   *def;
	Jsonb	   *request;		/* the WriteRequest, as given */
	Jsonb	   *item;			/* put; NULL for a delete */
	Datum		pk;
	Datum		sk;
	bool		unprocessed;	/* refused by throttling */
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
 * Pushes UnprocessedItems' map: by table, in the request's order, the
 * WriteRequests throttling refused, as they were given ({} when none).
 */
static void
push_unprocessed_writes(JsonbParseState **state, BatchWrite *writes, int n)
{
	JsonbValue	v;

	pushJsonbValue(state, WJB_BEGIN_OBJECT, NULL);
	/* the writes of a table are together in the request: one run per table */
	for (int i = 0, end; i < n; i = end)
	{
		bool		any = false;

		for (end = i; end < n && writes[end].def == writes[i].def; end++)
			any |= writes[end].unprocessed;
		if (!any)
			continue;
		ddb_push_key(state, writes[i].def->name);
		pushJsonbValue(state, WJB_BEGIN_ARRAY, NULL);
		for (int j = i; j < end; j++)
			if (writes[j].unprocessed)
			{
				ddb_binary_value(writes[j].request, &v);
				pushJsonbValue(state, WJB_ELEM, &v);
			}
		pushJsonbValue(state, WJB_END_ARRAY, NULL);
	}
	pushJsonbValue(state, WJB_END_OBJECT, NULL);
}

/*
 * BatchWriteItem: up to 25 puts and deletes, all applied or none.  Checked
 * before any is applied, in DynamoDB's order: table by table, the table,
 * then write by write its values, its key, a put's index keys and whether an
 * earlier write has the same key (the first error met is the one reported).
 * Applied by table, then key; the puts to a table that no delete separates
 * are written by one statement (store_puts_write), each checked as it comes.
 * With throttling on, the writes it refuses are left out and come back in
 * UnprocessedItems.
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
	int			nunprocessed = 0;
	StorePuts	puts;

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
			writes[n].request = wrapper;
			writes[n].unprocessed = false;
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
	store_puts_init(&puts, n);
	for (int i = 0; i < n; i++)
	{
		/* admitted while its table and indexes hold capacity, counting the writes before it */
		if (!api_throttle_admit(order[i]->def, NULL, THROTTLE_WRITE, false))
		{
			order[i]->unprocessed = true;
			nunprocessed++;
			continue;
		}
		if (order[i]->item)
		{
			/* a run of puts to one table is written by one statement, when it ends */
			store_puts_add(&puts, order[i]->def, order[i]->item, order[i]->pk, order[i]->sk);
			if (api_throttle_counts_index_writes(order[i]->def))
				store_puts_write(&puts);
		}
		else
		{
			store_puts_write(&puts);
			store_delete(order[i]->def, order[i]->pk, order[i]->sk, NULL, NULL);
		}
		/* a deleted item is not read back: one unit, DynamoDB's least */
		api_capacity_write_item(order[i]->def->name, order[i]->item, NULL);
	}
	store_puts_write(&puts);
	if (nunprocessed == n)
		api_throttle_admit(order[0]->def, NULL, THROTTLE_WRITE, true);
	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	ddb_push_key(&state, "UnprocessedItems");
	push_unprocessed_writes(&state, writes, n);
	if (metrics)
	{
		TableDef  **defs = palloc(sizeof(TableDef *) * n);
		Datum	   *pks = palloc(sizeof(Datum) * n);
		int			written = 0;

		for (int i = 0; i < n; i++)
			if (!writes[i].unprocessed)
			{
				defs[written] = writes[i].def;
				pks[written++] = writes[i].pk;
			}
		api_push_collection_metrics_map(&state, defs, pks, written);
	}
	return JsonbValueToJsonb(pushJsonbValue(&state, WJB_END_OBJECT, NULL));
}

/* The keys of one table of a BatchGetItem that throttling refused. */
typedef struct UnprocessedKeys
{
	char	   *table;
	Jsonb	   *given;			/* its KeysAndAttributes, as given */
	int			nkeys;
	JsonbValue	keys[FLEXIBLE_ARRAY_MEMBER];
} UnprocessedKeys;

/*
 * Pushes UnprocessedKeys' map: by table, its KeysAndAttributes as given
 * with only the keys throttling refused ({} when none).
 */
static void
push_unprocessed_keys(JsonbParseState **state, List *unprocessed)
{
	ListCell   *lc;

	pushJsonbValue(state, WJB_BEGIN_OBJECT, NULL);
	foreach(lc, unprocessed)
	{
		UnprocessedKeys *u = (UnprocessedKeys *) lfirst(lc);
		JsonbIterator *it = JsonbIteratorInit(&u->given->root);
		JsonbIteratorToken tok;
		JsonbValue	v;

		ddb_push_key(state, u->table);
		pushJsonbValue(state, WJB_BEGIN_OBJECT, NULL);
		while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
			if (tok == WJB_KEY)
			{
				JsonbValue	key = v;

				JsonbIteratorNext(&it, &v, true);
				if (key.val.string.len == 4 && memcmp(key.val.string.val, "Keys", 4) == 0)
					continue;
				pushJsonbValue(state, WJB_KEY, &key);
				pushJsonbValue(state, WJB_VALUE, &v);
			}
		ddb_push_key(state, "Keys");
		pushJsonbValue(state, WJB_BEGIN_ARRAY, NULL);
		for (int i = 0; i < u->nkeys; i++)
			pushJsonbValue(state, WJB_ELEM, &u->keys[i]);
		pushJsonbValue(state, WJB_END_ARRAY, NULL);
		pushJsonbValue(state, WJB_END_OBJECT, NULL);
	}
	pushJsonbValue(state, WJB_END_OBJECT, NULL);
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
	JsonbValue	keyvals[BATCH_GET_MAX];
	Jsonb	   *items[BATCH_GET_MAX];
	int			nkeys;
	Placeholders ph;
	ProjectionNode *projection;
	List	   *unprocessed = NIL;
	int			served = 0;
	TableDef   *refused = NULL;

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
		bool		fetched = false;
		bool		consistent;
		UnprocessedKeys *refused_keys = NULL;

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
		/* a strongly consistent read costs twice an eventually consistent one */
		consistent = api_bool(spec, "ConsistentRead", false);
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
			keyvals[nkeys] = key;
			/* keys already asked for in this table */
			for (int i = 0; i < nkeys; i++)
				if (api_same_key(pks[i], sks[i], pks[nkeys], sks[nkeys]))
					ddb_validation_error("Provided list of item keys contains duplicates");
			nkeys++;
		}
		for (int i = 0; i < nkeys; i++)
		{
			Jsonb	   *item;

			/* admitted while the table holds read capacity, counting the keys before it */
			if (!api_throttle_admit(def, NULL, THROTTLE_READ, false))
			{
				if (refused_keys == NULL)
				{
					refused_keys = palloc(offsetof(UnprocessedKeys, keys) + sizeof(JsonbValue) * nkeys);
					refused_keys->table = name;
					refused_keys->given = JsonbValueToJsonb(&v);
					refused_keys->nkeys = 0;
					unprocessed = lappend(unprocessed, refused_keys);
					refused = refused ? refused : def;
				}
				refused_keys->keys[refused_keys->nkeys++] = keyvals[i];
				continue;
			}
			/* one statement for the table's keys, not one per key */
			if (!fetched)
				store_get_many(def, nkeys, pks, sks, items);
			fetched = true;
			served++;
			item = items[i];
			api_capacity_read_item(def->name, item, consistent);
			if (item && projection)
				item = itemexpr_project(projection, item);
			if (item)
				item_push_dynamodb(&state, &item->root);
		}
		pushJsonbValue(&state, WJB_END_ARRAY, NULL);
	}
	if (served == 0 && refused)
		api_throttle_admit(refused, NULL, THROTTLE_READ, true);
	pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	ddb_push_key(&state, "UnprocessedKeys");
	push_unprocessed_keys(&state, unprocessed);
	return JsonbValueToJsonb(pushJsonbValue(&state, WJB_END_OBJECT, NULL));
}
