/*
 * stream_capture.c — ddb.stream_capture, the constraint trigger ddb_stream
 * of a table with a DynamoDB stream (sql/streams.sql, docs/streams.md).
 *
 * Deferred to commit, it turns each change of an item into a row of
 * ddb.stream_records: INSERT, MODIFY (only when the item changed) or
 * REMOVE, with the key and the images the stream's view type asks for, in
 * DynamoDB JSON.  The row is numbered under the stream's lock (DDB_LOCK_STREAM),
 * which the writer holds until its commit ends and readers wait for
 * (ddb.await_stream_writers, without taking it), so sequence numbers follow
 * commit order.  It goes straight into the heap and
 * the primary key of ddb.stream_records, as GSI entries do (direct_insert.c):
 * through SPI, the executor's start and end for one row cost a fifth of a
 * streamed write.  ddb.stream_records has no triggers, rules or checks.
 */
#include "postgres.h"

#include "access/table.h"
#include "access/xact.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_type.h"
#include "commands/sequence.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/jsonb.h"
#include "utils/rel.h"
#include "utils/timestamp.h"

#include "../ddb_locks.h"
#include "../item/item_codec.h"
#include "direct_insert.h"
#include "table_access.h"
#include "table_def.h"

PG_FUNCTION_INFO_V1(ddb_stream_capture);


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

/* A stream record's columns, by name (ddb.stream_records), for the row insert_record forms. */
typedef struct StreamRecord
{
	const char *names[9];
	Datum		values[9];
	bool		nulls[9];
} StreamRecord;

/*
 * Inserts a record into ddb.stream_records (relid), numbered from
 * ddb.stream_sequence and dated at the transaction's start (the table's
 * defaults), into its heap and primary key.
 */
static void
insert_record(Oid relid, StreamRecord *record)
{
	Relation	rel = table_open(relid, RowExclusiveLock);
	TupleDesc	desc = RelationGetDescr(rel);
	Datum	   *values = palloc0(sizeof(Datum) * desc->natts);
	bool	   *nulls = palloc(sizeof(bool) * desc->natts);
	int			filled = 0;

	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		nulls[i] = true;
		if (att->attisdropped)
			continue;
		for (size_t c = 0; c < lengthof(record->names); c++)
			if (strcmp(NameStr(att->attname), record->names[c]) == 0)
			{
				values[i] = record->values[c];
				nulls[i] = record->nulls[c];
				filled++;
				break;
			}
	}
	if (filled != (int) lengthof(record->names))
		elog(ERROR, "ddb_model: ddb.stream_records lacks a column of a stream record");
	direct_insert(rel, values, nulls);
	table_close(rel, NoLock);
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
	StreamRecord record = {
		.names = {"table_name", "stream_label", "sequence_number", "event_name", "keys", "new_image", "old_image",
		"size_bytes", "created_at"}
	};
	OwnerContext saved;
	Oid			records;

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

	record.values[0] = CStringGetTextDatum(def->name);
	record.values[1] = CStringGetTextDatum(def->stream_label);
	record.values[3] = CStringGetTextDatum(!has_old ? "INSERT" : has_new ? "MODIFY" : "REMOVE");
	record.values[4] = dynamodb_json(def, has_new ? new_item : old_item, true);
	if (has_new && (strcmp(view, "NEW_IMAGE") == 0 || strcmp(view, "NEW_AND_OLD_IMAGES") == 0))
		record.values[5] = dynamodb_json(def, new_item, false);
	else
		record.nulls[5] = true;
	if (has_old && (strcmp(view, "OLD_IMAGE") == 0 || strcmp(view, "NEW_AND_OLD_IMAGES") == 0))
		record.values[6] = dynamodb_json(def, old_item, false);
	else
		record.nulls[6] = true;
	record.values[7] = Int32GetDatum(old_size + new_size);
	record.values[8] = TimestampTzGetDatum(GetCurrentTransactionStartTimestamp());

	/* the stream's lock, exclusive until commit (ddb.await_stream_writers waits for it; no SQL takes it) */
	ddb_lock_xact(DDB_LOCK_STREAM, ddb_lock_name_key(def->name), ExclusiveLock);
	/* stream records are the owner's: whoever may write the table makes them, nobody writes them directly */
	records = ddb_relation_oid("stream_records");
	owner_context_enter(records, &saved);
	/* numbered under the lock, so that numbers follow commit order */
	record.values[2] = Int64GetDatum(nextval_internal(ddb_relation_oid("stream_sequence"), true));
	insert_record(records, &record);
	owner_context_exit(&saved);
	PG_RETURN_POINTER(NULL);
}
