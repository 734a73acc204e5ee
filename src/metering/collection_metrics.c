/*
 * collection_metrics.c — ReturnItemCollectionMetrics: for a write to a
 * table with local secondary indexes, the size of each item collection (the
 * items under one partition key) it wrote to, as DynamoDB estimates it.
 */
#include "postgres.h"

#include <math.h>

#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/jsonb.h"

#include "../item/item_codec.h"
#include "../key/ddb_key.h"
#include "../request/request.h"
#include "metering.h"

/* ReturnItemCollectionMetrics: true for SIZE (the value was checked up front, api_check_request_members). */
bool
api_collection_metrics_wanted(Jsonb *request)
{
	char	   *mode = api_string(request, "ReturnItemCollectionMetrics");

	return mode != NULL && strcmp(mode, "SIZE") == 0;
}

/* True when the table has a local secondary index: only then does DynamoDB report item collections. */
static bool
has_local_index(TableDef *def)
{
	for (int i = 0; i < def->nindexes; i++)
		if (def->indexes[i].local)
			return true;
	return false;
}

/*
 * Pushes one item collection's metrics as DynamoDB reports them: the
 * collection's hash key and its size in GB as a range [whole GB, next GB],
 * from the items stored under that hash key.
 */
static void
push_collection_metrics(JsonbParseState **state, TableDef *def, Datum pk)
{
	Oid			argtypes[1] = {ddb_key_type_oid()};
	Datum		args[1] = {pk};
	bool		isnull;
	double		gb;
	JsonbValue	v;

	SPI_connect();
	if (SPI_execute_with_args(psprintf("SELECT COALESCE(pg_catalog.sum(item_size), 0)::pg_catalog.float8 FROM %s "
									   "WHERE pk OPERATOR(pg_catalog.=) $1",
									   quote_qualified_identifier(def->schema_name, def->relation_name)),
							  1, argtypes, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "ddb_model: could not size an item collection");
	gb = floor(DatumGetFloat8(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)) / 1073741824.0);
	SPI_finish();

	pushJsonbValue(state, WJB_BEGIN_OBJECT, NULL);
	ddb_push_key(state, "ItemCollectionKey");
	pushJsonbValue(state, WJB_BEGIN_OBJECT, NULL);
	ddb_push_key(state, def->keys.hash_key);
	item_key_to_value(pk, &v);
	item_push_dynamodb_value(state, &v);
	pushJsonbValue(state, WJB_END_OBJECT, NULL);
	ddb_push_key(state, "SizeEstimateRangeGB");
	pushJsonbValue(state, WJB_BEGIN_ARRAY, NULL);
	v.type = jbvNumeric;
	v.val.numeric = DatumGetNumeric(DirectFunctionCall1(float8_numeric, Float8GetDatum(gb)));
	pushJsonbValue(state, WJB_ELEM, &v);
	v.val.numeric = DatumGetNumeric(DirectFunctionCall1(float8_numeric, Float8GetDatum(gb + 1.0)));
	pushJsonbValue(state, WJB_ELEM, &v);
	pushJsonbValue(state, WJB_END_ARRAY, NULL);
	pushJsonbValue(state, WJB_END_OBJECT, NULL);
}

/* The response with ItemCollectionMetrics added when the table has local secondary indexes. */
Jsonb *
api_with_collection_metrics(TableDef *def, Datum pk, Jsonb *response)
{
	JsonbParseState *state = NULL;

	if (!has_local_index(def))
		return response;
	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	ddb_push_key(&state, "ItemCollectionMetrics");
	push_collection_metrics(&state, def, pk);
	return DatumGetJsonbP(DirectFunctionCall2(jsonb_concat, JsonbPGetDatum(response),
											  JsonbPGetDatum(JsonbValueToJsonb(pushJsonbValue(&state, WJB_END_OBJECT, NULL)))));
}

/*
 * The ItemCollectionMetrics of a batch or transaction: per table with local
 * secondary indexes, one entry for each item collection written to.
 */
void
api_push_collection_metrics_map(JsonbParseState **state, TableDef **defs, Datum *pks, int n)
{
	bool		opened = false;

	for (int i = 0; i < n; i++)
	{
		bool		first_of_table = true;

		for (int j = 0; j < i; j++)
			first_of_table &= defs[j] != defs[i];
		if (!first_of_table || !has_local_index(defs[i]))
			continue;
		if (!opened)
		{
			ddb_push_key(state, "ItemCollectionMetrics");
			pushJsonbValue(state, WJB_BEGIN_OBJECT, NULL);
			opened = true;
		}
		ddb_push_key(state, defs[i]->name);
		pushJsonbValue(state, WJB_BEGIN_ARRAY, NULL);
		for (int k = i; k < n; k++)
		{
			bool		first_of_collection = defs[k] == defs[i];

			for (int j = i; j < k && first_of_collection; j++)
				first_of_collection = defs[j] != defs[k] || !api_same_key(pks[j], (Datum) 0, pks[k], (Datum) 0);
			if (first_of_collection)
				push_collection_metrics(state, defs[k], pks[k]);
		}
		pushJsonbValue(state, WJB_END_ARRAY, NULL);
	}
	if (opened)
		pushJsonbValue(state, WJB_END_OBJECT, NULL);
}
