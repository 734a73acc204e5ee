/*
 * stream_capture.c — ddb.stream_capture, the constraint trigger ddb_stream
 * of a table with a DynamoDB stream (sql/streams.sql, docs/streams.md).
 *
 * Deferred to commit, it turns each change of an item into a row of
 * ddb.stream_records: INSERT, MODIFY (only when the item changed) or
 * REMOVE, with the key and the images the stream's view type asks for, in
 * DynamoDB JSON.  The row is numbered under the stream's advisory lock,
 * which the writer holds until its commit ends and readers take shared, so
 * sequence numbers follow commit order.
 */
#include "postgres.h"

#include "catalog/pg_collation.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/jsonb.h"
#include "utils/rel.h"

#include "../item/item_codec.h"
#include "table_access.h"
#include "table_def.h"

PG_FUNCTION_INFO_V1(ddb_stream_capture);

/* The first key of the streams' advisory locks (as ddb.lock_stream takes them). */
#define STREAM_LOCK_CLASS 1685283443

/* The kept INSERT into ddb.stream_records. */
static SPIPlanPtr insert_plan = NULL;

/* The item and item_size of a row, or false for no row. */
static bool
row_item(HeapTuple tuple, TupleDesc desc, Jsonb **item, int32 *size)
{
	bool		isnull;

	if (tuple == NULL)
		return false;
	*item = DatumGetJsonbP(heap_getattr(tuple, SPI_fnumber(desc, "item"), desc, &isnull));
	*size = DatumGetInt32(heap_getattr(tuple, SPI_fnumber(desc, "item_size"), desc, &isnull));
	return true;
}

/* Pushes one attribute of a natural item, as DynamoDB JSON, if the item has it. */
static void
push_attribute(JsonbParseState **state, Jsonb *item, const char *name)
{
	JsonbValue	key = {.type = jbvString};
	JsonbValue	value;

	if (name == NULL || !item_get_attribute(&item->root, name, &value))
		return;
	key.val.string.val = (char *) name;
	key.val.string.len = strlen(name);
	pushJsonbValue(state, WJB_KEY, &key);
	item_push_dynamodb_value(state, &value);
}

/* A natural item as DynamoDB JSON: all of it, or its key attributes alone. */
static Datum
dynamodb_json(TableDef *def, Jsonb *item, bool keys_only)
{
	JsonbParseState *state = NULL;
	JsonbValue *wrapper;

	/* pushed inside an array, so that the finished object is not dropped */
	pushJsonbValue(&state, WJB_BEGIN_ARRAY, NULL);
	if (keys_only)
	{
		pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
		push_attribute(&state, item, def->keys.hash_key);
		push_attribute(&state, item, def->keys.range_key);
		pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	}
	else
		item_push_dynamodb(&state, &item->root);
	wrapper = pushJsonbValue(&state, WJB_END_ARRAY, NULL);
	return JsonbPGetDatum(JsonbValueToJsonb(&wrapper->val.array.elems[0]));
}

/* The kept INSERT, prepared on first use and again after an invalidation. */
static SPIPlanPtr
stream_insert_plan(void)
{
	Oid			argtypes[7] = {TEXTOID, TEXTOID, TEXTOID, JSONBOID, JSONBOID, JSONBOID, INT4OID};

	if (insert_plan == NULL || !SPI_plan_is_valid(insert_plan))
	{
		if (insert_plan != NULL)
			SPI_freeplan(insert_plan);
		insert_plan = SPI_prepare("INSERT INTO ddb.stream_records (table_name, stream_label, sequence_number, event_name, "
								  "keys, new_image, old_image, size_bytes) VALUES ($1, $2, "
								  "pg_catalog.nextval('ddb.stream_sequence'::pg_catalog.regclass), $3, $4, $5, $6, $7)",
								  7, argtypes);
		if (insert_plan == NULL)
			elog(ERROR, "ddb_model: could not prepare the stream record insert");
		SPI_keepplan(insert_plan);
	}
	return insert_plan;
}

/* ddb.stream_capture(): records one committed change of an item (argument: the table's DynamoDB name). */
Datum
ddb_stream_capture(PG_FUNCTION_ARGS)
{
	TriggerData *td = (TriggerData *) fcinfo->context;
	TableDef   *def;
	TupleDesc	desc;
	Jsonb	   *old_item = NULL;
	Jsonb	   *new_item = NULL;
	int32		old_size = 0;
	int32		new_size = 0;
	bool		has_old;
	bool		has_new;
	const char *view;
	Datum		args[7];
	char		nulls[7] = {' ', ' ', ' ', ' ', ' ', ' ', ' '};
	OwnerContext saved;

	if (!CALLED_AS_TRIGGER(fcinfo) || !TRIGGER_FIRED_AFTER(td->tg_event) ||
		!TRIGGER_FIRED_FOR_ROW(td->tg_event) || td->tg_trigger->tgnargs != 1)
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("ddb.stream_capture must run AFTER ... FOR EACH ROW with the table name as argument")));
	def = table_def_get(td->tg_trigger->tgargs[0]);
	view = def->stream_view_type;
	if (view == NULL)
		PG_RETURN_POINTER(NULL);	/* the stream was disabled before this commit */
	desc = RelationGetDescr(td->tg_relation);
	has_old = row_item(TRIGGER_FIRED_BY_INSERT(td->tg_event) ? NULL : td->tg_trigtuple, desc, &old_item, &old_size);
	has_new = row_item(TRIGGER_FIRED_BY_INSERT(td->tg_event) ? td->tg_trigtuple :
					   TRIGGER_FIRED_BY_UPDATE(td->tg_event) ? td->tg_newtuple : NULL, desc, &new_item, &new_size);
	/* a write that leaves the item as it was is no change */
	if (has_old && has_new &&
		DatumGetBool(DirectFunctionCall2(jsonb_eq, JsonbPGetDatum(old_item), JsonbPGetDatum(new_item))))
		PG_RETURN_POINTER(NULL);

	args[0] = CStringGetTextDatum(def->name);
	args[1] = CStringGetTextDatum(def->stream_label);
	args[2] = CStringGetTextDatum(!has_old ? "INSERT" : has_new ? "MODIFY" : "REMOVE");
	args[3] = dynamodb_json(def, has_new ? new_item : old_item, true);
	if (has_new && (strcmp(view, "NEW_IMAGE") == 0 || strcmp(view, "NEW_AND_OLD_IMAGES") == 0))
		args[4] = dynamodb_json(def, new_item, false);
	else
		nulls[4] = 'n';
	if (has_old && (strcmp(view, "OLD_IMAGE") == 0 || strcmp(view, "NEW_AND_OLD_IMAGES") == 0))
		args[5] = dynamodb_json(def, old_item, false);
	else
		nulls[5] = 'n';
	args[6] = Int32GetDatum(old_size + new_size);

	/* the hash ddb.lock_stream_shared computes in SQL (the default collation; any deterministic one hashes bytes) */
	DirectFunctionCall2(pg_advisory_xact_lock_int4, Int32GetDatum(STREAM_LOCK_CLASS),
						DirectFunctionCall1Coll(hashtext, DEFAULT_COLLATION_OID, CStringGetTextDatum(def->name)));
	/* stream records are the owner's: whoever may write the table makes them, nobody writes them directly */
	owner_context_enter(ddb_relation_oid("stream_records"), &saved);
	SPI_connect();
	if (SPI_execute_plan(stream_insert_plan(), args, nulls, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "ddb_model: could not record a stream record");
	SPI_finish();
	owner_context_exit(&saved);
	PG_RETURN_POINTER(NULL);
}
