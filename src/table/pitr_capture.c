/*
 * pitr_capture.c — ddb.pitr_capture, the trigger ddb_pitr of a table with
 * point-in-time recovery (sql/pitr.sql, docs/pitr.md).
 *
 * Every committed change of an item becomes a version in the table's
 * history relation ("<relation>$pitr"): its key, the new item (NULL for a
 * delete), the time of its transaction and its order within it.  The
 * trigger only collects a transaction's changes (commit_queue.c); when the
 * transaction commits (XACT_EVENT_PRE_COMMIT, or PRE_PREPARE for a
 * prepared one), after every deferred trigger has fired, one time is read
 * for the whole transaction and
 * its versions go straight into the history's heap (and its BRIN index on
 * changed_at: a btree would cost more than the rest of the capture), as
 * GSI entries and stream records do (direct_insert.c).
 *
 * Why that time orders the versions of one item as their transactions
 * committed: two transactions that change the same item cannot both hold
 * it.  The second waits on the first's row lock (or, for a new key, on the
 * primary key's uniqueness check) until the first has committed; so the
 * second reaches its commit, and reads its time, after the first's commit,
 * which came after the first read its time.  One time per transaction
 * keeps a transaction whole: a restore to any moment sees all of its
 * changes or none.  The time is read at commit, not when a change is
 * collected, so that the time is the commit's whatever the statement that
 * made the change.  (It is the system clock: a clock stepped back
 * by more than the time between two commits of one item would misorder
 * them.)
 *
 * Before it reads the time, a committing writer takes the table's PITR lock
 * shared until its commit is over (DDB_LOCK_PITR, src/ddb_locks.h: no SQL
 * takes it); a restore waits for its holders (ddb.pitr_settle) before it
 * reads, so every version with a time up to the restore's moment has
 * committed by then and is seen.
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "parser/parse_func.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/fmgrprotos.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/resowner.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "../ddb_locks.h"
#include "../key/ddb_key.h"
#include "commit_queue.h"
#include "direct_insert.h"
#include "trigger_guard.h"

PG_FUNCTION_INFO_V1(ddb_pitr_capture);

/* The columns of a collected change. */
enum
{
	CHANGE_SUBXACT,				/* the subtransaction that made it (commit_queue.c) */
	CHANGE_HISTORY,				/* the history relation's OID */
	CHANGE_PK,
	CHANGE_SK,					/* NULL for a table without a sort key */
	CHANGE_ITEM,				/* NULL for a delete */
	CHANGE_SIZE,
	CHANGE_COLUMNS
};

static TupleDesc describe_change(void);
static void write_collected(CommitQueue *queue);

/* The transaction's changes; its keys are the PITR lock keys of the tables changed. */
static CommitQueue changes = {.describe = describe_change,.flush = write_collected};

/* The columns of a collected change (in the transaction's context). */
static TupleDesc
describe_change(void)
{
	TupleDesc	desc = CreateTemplateTupleDesc(CHANGE_COLUMNS);

	TupleDescInitEntry(desc, CHANGE_SUBXACT + 1, "subxact", INT4OID, -1, 0);
	TupleDescInitEntry(desc, CHANGE_HISTORY + 1, "history", OIDOID, -1, 0);
	TupleDescInitEntry(desc, CHANGE_PK + 1, "pk", ddb_key_type_oid(), -1, 0);
	TupleDescInitEntry(desc, CHANGE_SK + 1, "sk", ddb_key_type_oid(), -1, 0);
	TupleDescInitEntry(desc, CHANGE_ITEM + 1, "item", JSONBOID, -1, 0);
	TupleDescInitEntry(desc, CHANGE_SIZE + 1, "item_size", INT4OID, -1, 0);
	return desc;
}

/* A column of a row, with a value stored out of line fetched (it is read again at commit); 0: none. */
static Datum
column(HeapTuple row, TupleDesc desc, AttrNumber attnum, bool *isnull)
{
	Datum		value;

	*isnull = true;
	if (attnum <= 0)
		return (Datum) 0;
	value = heap_getattr(row, attnum, desc, isnull);
	if (!*isnull && TupleDescAttr(desc, attnum - 1)->attlen == -1 && VARATT_IS_EXTERNAL(DatumGetPointer(value)))
		value = PointerGetDatum(detoast_external_attr((struct varlena *) DatumGetPointer(value)));
	return value;
}

/* Collects a version of the item of a row's key: the row's item, or a delete. */
static void
collect(const char *table_name, Oid history, TupleDesc desc, const ItemColumns *columns,
		HeapTuple row, bool deleted)
{
	Datum		values[CHANGE_COLUMNS];
	bool		nulls[CHANGE_COLUMNS] = {0};

	values[CHANGE_HISTORY] = ObjectIdGetDatum(history);
	(void) trigger_guard_column(row, desc, columns->pk);
	values[CHANGE_PK] = column(row, desc, columns->pk, &nulls[CHANGE_PK]);
	values[CHANGE_SK] = column(row, desc, columns->sk, &nulls[CHANGE_SK]);
	values[CHANGE_ITEM] = deleted ? (Datum) 0 : column(row, desc, columns->item, &nulls[CHANGE_ITEM]);
	values[CHANGE_SIZE] = deleted ? (Datum) 0 : column(row, desc, columns->item_size, &nulls[CHANGE_SIZE]);
	nulls[CHANGE_ITEM] |= deleted;
	nulls[CHANGE_SIZE] |= deleted;
	commit_queue_put(&changes, values, nulls);
	/* the key of the table's PITR lock, which ddb.pitr_settle waits for (table_locks.c) */
	commit_queue_add_key(&changes, (int) ddb_lock_name_key(table_name));
}

/* True when two rows have the same value of a column (0: none, which counts as the same). */
static bool
same_column(HeapTuple a, HeapTuple b, TupleDesc desc, AttrNumber attnum)
{
	Form_pg_attribute att;
	bool		a_null;
	bool		b_null;
	Datum		a_value;
	Datum		b_value;

	if (attnum <= 0)
		return true;
	att = TupleDescAttr(desc, attnum - 1);
	a_value = heap_getattr(a, attnum, desc, &a_null);
	b_value = heap_getattr(b, attnum, desc, &b_null);
	if (a_null || b_null)
		return a_null == b_null;
	return datum_image_eq(a_value, b_value, att->attbyval, att->attlen);
}

/* The name of a table's history relation (ddb.pitr_history_name), computed once per definition. */
static const char *
history_name(TableDef *def)
{
	Oid			argtypes[1] = {NAMEOID};
	Oid			fn;

	if (def->pitr_history_name == NULL)
	{
		fn = LookupFuncName(list_make2(makeString("ddb"), makeString("pitr_history_name")), 1, argtypes, false);
		def->pitr_history_name =
			MemoryContextStrdup(def->cxt,
								NameStr(*DatumGetName(OidFunctionCall1(fn, DirectFunctionCall1(namein,
																								CStringGetDatum(def->relation_name))))));
	}
	return def->pitr_history_name;
}

/* The history relation of a table, or InvalidOid when point-in-time recovery was disabled since. */
static Oid
history_of(TableDef *def, const char *argument)
{
	const char *name = history_name(def);

	/* the argument only says which it is: a trigger cannot name another table's history */
	if (strcmp(name, argument) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("ddb.pitr_capture for table %s must name its history relation %s, not %s",
						def->name, quote_identifier(name), quote_identifier(argument))));
	return get_relname_relid(name, get_namespace_oid(def->schema_name, false));
}

/* ddb.pitr_capture(table_name, history_relation): collects one change of an item. */
Datum
ddb_pitr_capture(PG_FUNCTION_ARGS)
{
	TriggerData *td = (TriggerData *) fcinfo->context;
	TupleDesc	desc;
	HeapTuple	old_row;
	HeapTuple	new_row;
	Oid			history;
	TableDef   *def;
	const ItemColumns *columns;

	/* fires on the table it names, of the extension's shape, or raises */
	def = trigger_guard_row(fcinfo, "ddb.pitr_capture", 2, &columns);
	history = history_of(def, td->tg_trigger->tgargs[1]);
	if (!OidIsValid(history))
		PG_RETURN_POINTER(NULL);	/* point-in-time recovery was disabled before this change fired */
	desc = RelationGetDescr(td->tg_relation);
	old_row = TRIGGER_FIRED_BY_INSERT(td->tg_event) ? NULL : td->tg_trigtuple;
	new_row = TRIGGER_FIRED_BY_INSERT(td->tg_event) ? td->tg_trigtuple :
		TRIGGER_FIRED_BY_UPDATE(td->tg_event) ? td->tg_newtuple : NULL;
	if (old_row && new_row)
	{
		bool		same_key = same_column(old_row, new_row, desc, columns->pk) &&
			same_column(old_row, new_row, desc, columns->sk);

		/* a write that leaves the item as it was is no new version */
		if (same_key && same_column(old_row, new_row, desc, columns->item))
			PG_RETURN_POINTER(NULL);
		/* a key changed by plain SQL: the old key's item is gone */
		if (!same_key)
			collect(def->name, history, desc, columns, old_row, true);
	}
	collect(def->name, history, desc, columns, new_row ? new_row : old_row, new_row == NULL);
	PG_RETURN_POINTER(NULL);
}

/* A history relation open for writing, and where its columns are. */
typedef struct History
{
	Oid			relid;
	Relation	rel;			/* NULL when it is gone (point-in-time recovery was disabled since) */
	int			natts;
	int			pk;				/* attribute numbers, 0 for none */
	int			sk;
	int			changed_at;
	int			change_order;
	int			item;
	int			item_size;
} History;

/* Opens a history relation (closing the one open before). */
static void
open_history(History *h, Oid relid)
{
	TupleDesc	desc;

	if (h->rel)
		table_close(h->rel, NoLock);
	h->relid = relid;
	h->rel = try_table_open(relid, RowExclusiveLock);
	if (h->rel == NULL)
		return;
	desc = RelationGetDescr(h->rel);
	h->natts = desc->natts;
	h->pk = SPI_fnumber(desc, "pk");
	h->sk = Max(SPI_fnumber(desc, "sk"), 0);
	h->changed_at = SPI_fnumber(desc, "changed_at");
	h->change_order = SPI_fnumber(desc, "change_order");
	h->item = SPI_fnumber(desc, "item");
	h->item_size = SPI_fnumber(desc, "item_size");
	if (h->pk <= 0 || h->changed_at <= 0 || h->change_order <= 0 || h->item <= 0 || h->item_size <= 0)
		elog(ERROR, "ddb_model: %s is not a point-in-time recovery history", RelationGetRelationName(h->rel));
}

/* Writes one collected change (slot) as a version of the time at and the order given. */
static void
write_version(History *h, TupleTableSlot *slot, TimestampTz at, int32 order)
{
	Datum	   *values = palloc0(sizeof(Datum) * h->natts);
	bool	   *nulls = palloc(sizeof(bool) * h->natts);

	memset(nulls, true, sizeof(bool) * h->natts);
	values[h->pk - 1] = slot->tts_values[CHANGE_PK];
	nulls[h->pk - 1] = false;
	if (h->sk > 0)
	{
		values[h->sk - 1] = slot->tts_values[CHANGE_SK];
		nulls[h->sk - 1] = slot->tts_isnull[CHANGE_SK];
	}
	values[h->changed_at - 1] = TimestampTzGetDatum(at);
	nulls[h->changed_at - 1] = false;
	values[h->change_order - 1] = Int32GetDatum(order);
	nulls[h->change_order - 1] = false;
	values[h->item - 1] = slot->tts_values[CHANGE_ITEM];
	nulls[h->item - 1] = slot->tts_isnull[CHANGE_ITEM];
	values[h->item_size - 1] = slot->tts_values[CHANGE_SIZE];
	nulls[h->item_size - 1] = slot->tts_isnull[CHANGE_SIZE];
	direct_insert(h->rel, values, nulls);
}

/* Writes what a committing transaction collected: its versions, all of one time. */
static void
write_collected(CommitQueue *queue)
{
	MemoryContext per_version = AllocSetContextCreate(CurrentMemoryContext, "ddb pitr version",
													  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old;
	TupleTableSlot *slot = MakeSingleTupleTableSlot(queue->desc, &TTSOpsMinimalTuple);
	History		h = {0};
	ListCell   *lc;
	TimestampTz at;
	int32		order = 0;

	foreach(lc, queue->keys)
		ddb_lock_xact(DDB_LOCK_PITR, (uint32) lfirst_int(lc), ShareLock);
	/* read after the locks are held: see the head comment */
	at = GetCurrentTimestamp();
	while (commit_queue_next(queue, slot))
	{
		Oid			relid = DatumGetObjectId(slot->tts_values[CHANGE_HISTORY]);

		order++;
		if (relid != h.relid)
			open_history(&h, relid);
		if (h.rel == NULL)
			continue;
		old = MemoryContextSwitchTo(per_version);
		write_version(&h, slot, at, order);
		MemoryContextSwitchTo(old);
		MemoryContextReset(per_version);
	}
	if (h.rel)
		table_close(h.rel, NoLock);
	ExecDropSingleTupleTableSlot(slot);
	MemoryContextDelete(per_version);
}
