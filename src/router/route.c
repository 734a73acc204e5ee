/*
 * route.c — where a request goes: the routing hash of its partition key
 * (ddb.ddb_key_route_hash of the key's encoding), read from the request
 * without raising (a Query's and a PartiQL statement's by their own checks,
 * in a subtransaction).  A request whose key cannot be read is invalid; the
 * router then lets a node raise DynamoDB's error for it
 * (ddb.execute_rolled_back), so that errors come in the order a node's
 * own checks give them.
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/htup_details.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/resowner.h"

#include "../key/key_attribute.h"
#include "model_imports.h"
#include "router.h"

PG_FUNCTION_INFO_V1(ddb_router_route_of);
PG_FUNCTION_INFO_V1(ddb_router_statement_route);

/* The routing hash of a table's partition key attribute's DynamoDB value in map; false when it is no valid key of type. */
bool
route_key_value(const char *table_name, JsonbContainer *map, const char *attribute, char type, uint32 *hash)
{
	uint8_t		enc[KEY_MAX_ENCODED];
	size_t		enclen;

	if (!key_attribute_encode(getKeyJsonValueFromContainer(map, attribute, strlen(attribute), NULL), type, enc, &enclen))
		return false;
	*hash = router_route_hash(table_name, enc, enclen);
	return true;
}

/* A member of a request (an object) that is not JSON null, or NULL. */
static JsonbValue *
request_member(Jsonb *request, const char *name)
{
	JsonbValue *v = getKeyJsonValueFromContainer(&request->root, name, (int) strlen(name), NULL);

	return v != NULL && v->type != jbvNull ? v : NULL;
}

/* The table a request names, or NULL when it names none that exists. */
static TableDef *
request_table(Jsonb *request)
{
	JsonbValue *name = request_member(request, "TableName");

	if (name == NULL || name->type != jbvString)
		return NULL;
	return ddb_model.table_def_find(pnstrdup(name->val.string.val, name->val.string.len));
}

/* The routing hash of an item operation by the partition key in its member ("Key", "Item"); false when the request is invalid. */
bool
route_item(Jsonb *request, const char *member, uint32 *hash)
{
	TableDef   *def;
	JsonbValue *map;

	if (!JsonContainerIsObject(&request->root) || (def = request_table(request)) == NULL ||
		(map = request_member(request, member)) == NULL || map->type != jbvBinary ||
		!JsonContainerIsObject(map->val.binary.data))
		return false;
	return route_key_value(def->name, map->val.binary.data, def->keys.hash_key, def->keys.hash_type, hash);
}

/* Where a read request goes: the result of one of the routing questions below. */
typedef enum Destination
{
	DESTINATION_INVALID,		/* the request is invalid: a node raises its error */
	DESTINATION_NODE,			/* the node of a routing hash */
	DESTINATION_EVERY_NODE		/* every node holds a part of what it reads */
} Destination;

/* A Query's destination: the node of its partition key, or every node for a global index. */
static Destination
query_destination(Jsonb *request, uint32 *hash)
{
	Datum		pk = ddb_model.api_query_partition_key(request);
	struct varlena *key;
	JsonbValue *name;

	if (pk == (Datum) 0)
		return DESTINATION_EVERY_NODE;
	key = PG_DETOAST_DATUM_PACKED(pk);
	/* the Query was read: its TableName names a table */
	name = request_member(request, "TableName");
	*hash = router_route_hash(pnstrdup(name->val.string.val, name->val.string.len), DDB_KEY_DATA(key), DDB_KEY_LEN(key));
	return DESTINATION_NODE;
}

/* The operation of the statement statement_destination last read, and its request. */
static const char *statement_operation = NULL;
static Jsonb *statement_request = NULL;

/* A PartiQL statement's destination: that of the operation it stands for. */
static Destination
statement_destination(Jsonb *element, uint32 *hash)
{
	Jsonb	   *request;
	const char *operation = ddb_model.api_statement_operation(element, &request);

	statement_operation = operation;
	statement_request = request;
	if (strcmp(operation, "Query") == 0)
		return query_destination(request, hash);
	if (strcmp(operation, "Scan") == 0)
		return DESTINATION_EVERY_NODE;
	return route_item(request, strcmp(operation, "PutItem") == 0 ? "Item" : "Key", hash) ?
		DESTINATION_NODE : DESTINATION_INVALID;
}

/*
 * Asks a routing question that runs a request's own checks (which raise
 * for an invalid request), in a subtransaction whose error is dropped: the
 * node the request then goes to raises it.
 */
static Destination
ask_destination(Destination (*question) (Jsonb *, uint32 *), Jsonb *request, uint32 *hash)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	volatile Destination destination = DESTINATION_INVALID;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		destination = question(request, hash);
		ReleaseCurrentSubTransaction();
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(cxt);
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		destination = DESTINATION_INVALID;
	}
	PG_END_TRY();
	MemoryContextSwitchTo(cxt);
	CurrentResourceOwner = owner;
	return destination;
}

/*
 * The routing hash of a Query of a table or local index (global: it reads a
 * global index, which every node holds a part of); false when the request
 * is invalid.
 */
bool
route_query(Jsonb *request, uint32 *hash, bool *global)
{
	Destination destination = ask_destination(query_destination, request, hash);

	*global = destination == DESTINATION_EVERY_NODE;
	return destination != DESTINATION_INVALID;
}

/*
 * ddb_router.statement_route(element, OUT route, OUT spans, OUT operation):
 * where a PartiQL statement ({"Statement", "Parameters"}) goes: the routing
 * hash of the item or partition it addresses, or spans when it reads every
 * node (a Scan, a global index); null and false for an invalid statement;
 * and the operation it stands for (GetItem, PutItem, Query, ...) with its
 * request.
 */
Datum
ddb_router_statement_route(PG_FUNCTION_ARGS)
{
	TupleDesc	desc;
	Datum		values[4];
	bool		nulls[4] = {false, false, false, false};
	uint32		hash = 0;
	Destination destination;

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "ddb_router: statement_route must return a row");
	statement_operation = NULL;
	statement_request = NULL;
	destination = ask_destination(statement_destination, PG_GETARG_JSONB_P(0), &hash);
	values[0] = Int32GetDatum((int32) hash);
	values[2] = statement_operation ? CStringGetTextDatum(statement_operation) : (Datum) 0;
	nulls[2] = statement_operation == NULL || destination == DESTINATION_INVALID;
	values[3] = statement_request ? JsonbPGetDatum(statement_request) : (Datum) 0;
	nulls[3] = nulls[2];
	nulls[0] = destination != DESTINATION_NODE;
	values[1] = BoolGetDatum(destination == DESTINATION_EVERY_NODE);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(desc), values, nulls)));
}

/*
 * ddb_router.route_of(table_name, key): the routing hash of the partition
 * key in a Key or Item map (DynamoDB JSON) of a table, or null when the
 * table does not exist or the map holds no valid partition key.
 */
Datum
ddb_router_route_of(PG_FUNCTION_ARGS)
{
	TableDef   *def = ddb_model.table_def_find(text_to_cstring(PG_GETARG_TEXT_PP(0)));
	Jsonb	   *key = PG_GETARG_JSONB_P(1);
	uint32		hash;

	if (def == NULL || !JsonContainerIsObject(&key->root) ||
		!route_key_value(def->name, &key->root, def->keys.hash_key, def->keys.hash_type, &hash))
		PG_RETURN_NULL();
	PG_RETURN_INT32((int32) hash);
}
