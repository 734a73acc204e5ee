/*
 * stream_capture.c — ddb.stream_capture, the trigger ddb_stream of a table
 * with a DynamoDB stream (sql/streams.sql, docs/streams.md).
 *
 * It turns each change of an item into a stream record: INSERT, MODIFY
 * (only when the item changed) or REMOVE, with the key and the images the
 * stream's view type asks for, in DynamoDB JSON, and collects it
 * (commit_queue.c).  When the transaction commits, its records go into
 * ddb.stream_records, numbered and inserted one writer of a stream at a
 * time (its order lock, released as soon as they are in), so that a record
 * is in the index before any record numbered after it: a reader that stops
 * at the first record still being committed never passes one that is yet
 * to come (stream_horizon.c).  Writers do not wait for each other's commit.
 * They go straight into the heap and the primary key
 * of ddb.stream_records, as GSI entries do (direct_insert.c): through SPI,
 * the executor's start and end for one row cost a fifth of a streamed
 * write.  ddb.stream_records has no triggers, rules or checks.
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
#include "commit_queue.h"
#include "direct_insert.h"
#include "table_access.h"
#include "table_def.h"
#include "trigger_guard.h"

PG_FUNCTION_INFO_V1(ddb_stream_capture);

/* The item and item_size of a row (where the guard found them), or false for no row. */
static bool
row_item(HeapTuple tuple, TupleDesc desc, const ItemColumns *columns, Jsonb **item, int32 *size)
{
	if (tuple == NULL)
		return false;
	*item = DatumGetJsonbP(trigger_guard_column(tuple, desc, columns->item));
	*size = DatumGetInt32(trigger_guard_column(tuple, desc, columns->item_size));
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

/* A stream record as collected: its columns (the first the queue's), and as named in ddb.stream_records. */
enum
{
	RECORD_SUBXACT,
	RECORD_TABLE_NAME,
	RECORD_STREAM_LABEL,
	RECORD_EVENT_NAME,
	RECORD_KEYS,
	RECORD_NEW_IMAGE,
	RECORD_OLD_IMAGE,
	RECORD_SIZE_BYTES,
	RECORD_CREATED_AT,
	RECORD_SEQUENCE_NUMBER,		/* not collected: numbered at commit */
	RECORD_COLUMNS
};

static const char *const record_columns[RECORD_COLUMNS] = {
	NULL, "table_name", "stream_label", "event_name", "keys", "new_image", "old_image", "size_bytes",
	"created_at", "sequence_number"
};

static TupleDesc describe_record(void);
static void write_records(CommitQueue *queue);

/* The transaction's records; its keys are the stream lock keys of the tables changed. */
static CommitQueue records = {.describe = describe_record,.flush = write_records};

/* The columns of a collected record (in the transaction's context). */
static TupleDesc
describe_record(void)
{
	TupleDesc	desc = CreateTemplateTupleDesc(RECORD_SEQUENCE_NUMBER);
	Oid			types[RECORD_SEQUENCE_NUMBER] = {INT4OID, TEXTOID, TEXTOID, TEXTOID, JSONBOID, JSONBOID, JSONBOID,
	INT4OID, TIMESTAMPTZOID};

	TupleDescInitEntry(desc, 1, "subxact", INT4OID, -1, 0);
	for (int i = 1; i < RECORD_SEQUENCE_NUMBER; i++)
		TupleDescInitEntry(desc, i + 1, record_columns[i], types[i], -1, 0);
	return desc;
}

/* Where each record column is in ddb.stream_records (rel), checked once per commit. */
static void
record_attnums(Relation rel, AttrNumber *attnums)
{
	TupleDesc	desc = RelationGetDescr(rel);

	for (int c = 1; c < RECORD_COLUMNS; c++)
	{
		attnums[c] = SPI_fnumber(desc, record_columns[c]);
		if (attnums[c] <= 0)
			elog(ERROR, "ddb_model: ddb.stream_records lacks the column %s", record_columns[c]);
	}
}

/*
 * Writes a committing transaction's records: takes the streams' locks of
 * its tables shared until the commit ends (GetShardIterator LATEST waits
 * for them), and their order locks (in one order, so that two committing
 * writers do not deadlock) while it numbers each record and inserts it as
 * the owner of ddb.stream_records.
 */
static void
write_records(CommitQueue *queue)
{
	TupleTableSlot *slot = MakeSingleTupleTableSlot(queue->desc, &TTSOpsMinimalTuple);
	List	   *keys = list_copy(queue->keys);
	Oid			relid = ddb_relation_oid("stream_records");
	Oid			sequence = ddb_relation_oid("stream_sequence");
	AttrNumber	attnums[RECORD_COLUMNS];
	OwnerContext saved;
	Relation	rel;
	ListCell   *lc;
	Datum	   *values;
	bool	   *nulls;

	list_sort(keys, list_int_cmp);
	/* taken before numbering: no SQL takes these (src/ddb_locks.h) */
	foreach(lc, keys)
	{
		/* shared until the commit ends: ddb.await_stream_writers waits for it, no writer does */
		ddb_lock_xact(DDB_LOCK_STREAM, (uint32) lfirst_int(lc), RowExclusiveLock);
		/* one writer numbering at a time, until its records are in */
		ddb_lock_xact(DDB_LOCK_STREAM_ORDER, (uint32) lfirst_int(lc), ExclusiveLock);
	}
	/* stream records are the owner's: whoever may write the table makes them, nobody writes them directly */
	owner_context_enter(relid, &saved);
	rel = table_open(relid, RowExclusiveLock);
	record_attnums(rel, attnums);
	values = palloc0(sizeof(Datum) * RelationGetDescr(rel)->natts);
	nulls = palloc(sizeof(bool) * RelationGetDescr(rel)->natts);
	while (commit_queue_next(queue, slot))
	{
		memset(nulls, true, sizeof(bool) * RelationGetDescr(rel)->natts);
		for (int c = 1; c < RECORD_SEQUENCE_NUMBER; c++)
		{
			values[attnums[c] - 1] = slot->tts_values[c];
			nulls[attnums[c] - 1] = slot->tts_isnull[c];
		}
		/* numbered under the order lock, so that every lower number is in the index already */
		values[attnums[RECORD_SEQUENCE_NUMBER] - 1] = Int64GetDatum(nextval_internal(sequence, true));
		nulls[attnums[RECORD_SEQUENCE_NUMBER] - 1] = false;
		direct_insert(rel, values, nulls);
	}
	table_close(rel, NoLock);
	owner_context_exit(&saved);
	/* the records are in: the next writer may number, before this commit ends */
	foreach(lc, keys)
		ddb_lock_release(DDB_LOCK_STREAM_ORDER, (uint32) lfirst_int(lc), ExclusiveLock);
	ExecDropSingleTupleTableSlot(slot);
}

/* ddb.stream_capture(): collects one change of an item as a stream record (argument: the table's DynamoDB name). */
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
	const ItemColumns *columns;
	Datum		values[RECORD_SEQUENCE_NUMBER];
	bool		nulls[RECORD_SEQUENCE_NUMBER] = {0};

	/* fires on the table it names, of the extension's shape, or raises */
	def = trigger_guard_row(fcinfo, "ddb.stream_capture", 1, &columns);
	view = def->stream_view_type;
	if (view == NULL)
		PG_RETURN_POINTER(NULL);	/* the stream is disabled */
	desc = RelationGetDescr(td->tg_relation);
	has_old = row_item(TRIGGER_FIRED_BY_INSERT(td->tg_event) ? NULL : td->tg_trigtuple, desc, columns,
					   &old_item, &old_size);
	has_new = row_item(TRIGGER_FIRED_BY_INSERT(td->tg_event) ? td->tg_trigtuple :
					   TRIGGER_FIRED_BY_UPDATE(td->tg_event) ? td->tg_newtuple : NULL, desc, columns,
					   &new_item, &new_size);
	/* a write that leaves the item as it was is no change */
	if (has_old && has_new &&
		DatumGetBool(DirectFunctionCall2(jsonb_eq, JsonbPGetDatum(old_item), JsonbPGetDatum(new_item))))
		PG_RETURN_POINTER(NULL);

	values[RECORD_TABLE_NAME] = CStringGetTextDatum(def->name);
	values[RECORD_STREAM_LABEL] = CStringGetTextDatum(def->stream_label);
	values[RECORD_EVENT_NAME] = CStringGetTextDatum(!has_old ? "INSERT" : has_new ? "MODIFY" : "REMOVE");
	values[RECORD_KEYS] = dynamodb_json(def, has_new ? new_item : old_item, true);
	if (has_new && (strcmp(view, "NEW_IMAGE") == 0 || strcmp(view, "NEW_AND_OLD_IMAGES") == 0))
		values[RECORD_NEW_IMAGE] = dynamodb_json(def, new_item, false);
	else
		nulls[RECORD_NEW_IMAGE] = true;
	if (has_old && (strcmp(view, "OLD_IMAGE") == 0 || strcmp(view, "NEW_AND_OLD_IMAGES") == 0))
		values[RECORD_OLD_IMAGE] = dynamodb_json(def, old_item, false);
	else
		nulls[RECORD_OLD_IMAGE] = true;
	values[RECORD_SIZE_BYTES] = Int32GetDatum(old_size + new_size);
	values[RECORD_CREATED_AT] = TimestampTzGetDatum(GetCurrentTransactionStartTimestamp());
	commit_queue_put(&records, values, nulls);
	commit_queue_add_key(&records, (int) ddb_lock_name_key(def->name));
	PG_RETURN_POINTER(NULL);
}
