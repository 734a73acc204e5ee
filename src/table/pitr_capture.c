/*
 * pitr_capture.c — ddb.pitr_capture, the constraint trigger ddb_pitr of a
 * table with point-in-time recovery (sql/pitr.sql, docs/pitr.md).
 *
 * Every committed change of an item becomes a version in the table's
 * history relation ("<relation>$pitr"): its key, the new item (NULL for a
 * delete), the time of its transaction and its order within it.  The
 * trigger only collects a transaction's changes (in a tuplestore, which
 * spills to disk for a large transaction); when the transaction commits
 * (XACT_EVENT_PRE_COMMIT, or PRE_PREPARE for a prepared one), after every
 * deferred trigger has fired, one time is read for the whole transaction and
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
 * collected, so that this holds also when SET CONSTRAINTS ... IMMEDIATE
 * fires the trigger early.  (It is the system clock: a clock stepped back
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
#include "direct_insert.h"

PG_FUNCTION_INFO_V1(ddb_pitr_capture);

/* The columns of a collected change. */
enum
{
	CHANGE_HISTORY,				/* the history relation's OID */
	CHANGE_SUBXACT,				/* the subtransaction that made it */
	CHANGE_PK,
	CHANGE_SK,					/* NULL for a table without a sort key */
	CHANGE_ITEM,				/* NULL for a delete */
	CHANGE_SIZE,
	CHANGE_COLUMNS
};

/* What the current transaction collected, in TopTransactionContext. */
typedef struct Collected
{
	Tuplestorestate *changes;
	TupleDesc	desc;
	List	   *locks;			/* int list: the lock keys of the tables changed */
	List	   *aborted;		/* int list: subtransactions rolled back */
	List	   *parents;		/* int list: pairs of a committed subtransaction and its parent */
} Collected;

/* NULL while the transaction has collected nothing. */
static Collected *collected = NULL;
static bool callbacks_registered = false;

static void pitr_xact_callback(XactEvent event, void *arg);
static void pitr_subxact_callback(SubXactEvent event, SubTransactionId subxact, SubTransactionId parent, void *arg);

/* The transaction's collection, begun on its first change (key_type: the keys' type). */
static Collected *
collection(Oid key_type)
{
	MemoryContext old;
	ResourceOwner owner = CurrentResourceOwner;

	if (collected)
		return collected;
	if (!callbacks_registered)
	{
		RegisterXactCallback(pitr_xact_callback, NULL);
		RegisterSubXactCallback(pitr_subxact_callback, NULL);
		callbacks_registered = true;
	}
	old = MemoryContextSwitchTo(TopTransactionContext);
	collected = palloc0(sizeof(Collected));
	collected->desc = CreateTemplateTupleDesc(CHANGE_COLUMNS);
	TupleDescInitEntry(collected->desc, CHANGE_HISTORY + 1, "history", OIDOID, -1, 0);
	TupleDescInitEntry(collected->desc, CHANGE_SUBXACT + 1, "subxact", INT4OID, -1, 0);
	TupleDescInitEntry(collected->desc, CHANGE_PK + 1, "pk", key_type, -1, 0);
	TupleDescInitEntry(collected->desc, CHANGE_SK + 1, "sk", key_type, -1, 0);
	TupleDescInitEntry(collected->desc, CHANGE_ITEM + 1, "item", JSONBOID, -1, 0);
	TupleDescInitEntry(collected->desc, CHANGE_SIZE + 1, "item_size", INT4OID, -1, 0);
	/* its spill file belongs to the transaction, not to the statement or subtransaction collecting */
	CurrentResourceOwner = TopTransactionResourceOwner;
	collected->changes = tuplestore_begin_heap(false, false, work_mem);
	CurrentResourceOwner = owner;
	MemoryContextSwitchTo(old);
	return collected;
}

/* A column of a row, with a value stored out of line fetched (it is read again at commit). */
static Datum
column(HeapTuple row, TupleDesc desc, const char *name, bool *isnull)
{
	int			attnum = SPI_fnumber(desc, name);
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
collect(const char *table_name, Oid history, TupleDesc desc, HeapTuple row, bool deleted)
{
	Datum		values[CHANGE_COLUMNS];
	bool		nulls[CHANGE_COLUMNS] = {0};
	Collected  *c = collection(TupleDescAttr(desc, SPI_fnumber(desc, "pk") - 1)->atttypid);
	ResourceOwner owner = CurrentResourceOwner;
	MemoryContext old;
	int			lock;

	values[CHANGE_HISTORY] = ObjectIdGetDatum(history);
	values[CHANGE_SUBXACT] = Int32GetDatum((int32) GetCurrentSubTransactionId());
	values[CHANGE_PK] = column(row, desc, "pk", &nulls[CHANGE_PK]);
	values[CHANGE_SK] = column(row, desc, "sk", &nulls[CHANGE_SK]);
	values[CHANGE_ITEM] = deleted ? (Datum) 0 : column(row, desc, "item", &nulls[CHANGE_ITEM]);
	values[CHANGE_SIZE] = deleted ? (Datum) 0 : column(row, desc, "item_size", &nulls[CHANGE_SIZE]);
	nulls[CHANGE_ITEM] |= deleted;
	nulls[CHANGE_SIZE] |= deleted;
	CurrentResourceOwner = TopTransactionResourceOwner;
	tuplestore_putvalues(c->changes, c->desc, values, nulls);
	CurrentResourceOwner = owner;

	/* the key of the table's PITR lock, which ddb.pitr_settle waits for (table_locks.c) */
	lock = (int) ddb_lock_name_key(table_name);
	old = MemoryContextSwitchTo(TopTransactionContext);
	c->locks = list_append_unique_int(c->locks, lock);
	MemoryContextSwitchTo(old);
}

/* True when two rows have the same value of a column (both without it counts as the same). */
static bool
same_column(HeapTuple a, HeapTuple b, TupleDesc desc, const char *name)
{
	int			attnum = SPI_fnumber(desc, name);
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

/* ddb.pitr_capture(table_name, history_relation): collects one change of an item. */
Datum
ddb_pitr_capture(PG_FUNCTION_ARGS)
{
	TriggerData *td = (TriggerData *) fcinfo->context;
	TupleDesc	desc;
	HeapTuple	old_row;
	HeapTuple	new_row;
	Oid			history;
	const char *table_name;

	if (!CALLED_AS_TRIGGER(fcinfo) || !TRIGGER_FIRED_AFTER(td->tg_event) ||
		!TRIGGER_FIRED_FOR_ROW(td->tg_event) || td->tg_trigger->tgnargs != 2)
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("ddb.pitr_capture must run AFTER ... FOR EACH ROW with the table name and its history relation as arguments")));
	table_name = td->tg_trigger->tgargs[0];
	/* the history is beside the table (a partition is in its table's schema) */
	history = get_relname_relid(td->tg_trigger->tgargs[1], RelationGetNamespace(td->tg_relation));
	if (!OidIsValid(history))
		PG_RETURN_POINTER(NULL);	/* point-in-time recovery was disabled before this change fired */
	desc = RelationGetDescr(td->tg_relation);
	old_row = TRIGGER_FIRED_BY_INSERT(td->tg_event) ? NULL : td->tg_trigtuple;
	new_row = TRIGGER_FIRED_BY_INSERT(td->tg_event) ? td->tg_trigtuple :
		TRIGGER_FIRED_BY_UPDATE(td->tg_event) ? td->tg_newtuple : NULL;
	if (old_row && new_row)
	{
		bool		same_key = same_column(old_row, new_row, desc, "pk") && same_column(old_row, new_row, desc, "sk");

		/* a write that leaves the item as it was is no new version */
		if (same_key && same_column(old_row, new_row, desc, "item"))
			PG_RETURN_POINTER(NULL);
		/* a key changed by plain SQL: the old key's item is gone */
		if (!same_key)
			collect(table_name, history, desc, old_row, true);
	}
	collect(table_name, history, desc, new_row ? new_row : old_row, new_row == NULL);
	PG_RETURN_POINTER(NULL);
}

/* True unless a change was made in a subtransaction that was rolled back (or inside one). */
static bool
survives(Collected *c, SubTransactionId subxact)
{
	while (c->aborted != NIL && subxact != TopSubTransactionId)
	{
		ListCell   *lc;
		SubTransactionId parent = InvalidSubTransactionId;

		if (list_member_int(c->aborted, (int) subxact))
			return false;
		for (lc = list_head(c->parents); lc != NULL; lc = lnext(c->parents, lnext(c->parents, lc)))
			if ((SubTransactionId) lfirst_int(lc) == subxact)
				parent = (SubTransactionId) lfirst_int(lnext(c->parents, lc));
		if (parent == InvalidSubTransactionId)
			break;
		subxact = parent;
	}
	return true;
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
write_collected(Collected *c)
{
	MemoryContext per_version = AllocSetContextCreate(CurrentMemoryContext, "ddb pitr version",
													  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old;
	TupleTableSlot *slot = MakeSingleTupleTableSlot(c->desc, &TTSOpsMinimalTuple);
	History		h = {0};
	ListCell   *lc;
	TimestampTz at;
	int32		order = 0;

	foreach(lc, c->locks)
		ddb_lock_xact(DDB_LOCK_PITR, (uint32) lfirst_int(lc), ShareLock);
	/* read after the locks are held: see the head comment */
	at = GetCurrentTimestamp();
	while (tuplestore_gettupleslot(c->changes, true, false, slot))
	{
		Oid			relid;

		slot_getallattrs(slot);
		order++;
		if (!survives(c, (SubTransactionId) DatumGetInt32(slot->tts_values[CHANGE_SUBXACT])))
			continue;
		relid = DatumGetObjectId(slot->tts_values[CHANGE_HISTORY]);
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
	tuplestore_end(c->changes);
	MemoryContextDelete(per_version);
}

/* At commit (or PREPARE TRANSACTION) writes the collected versions; at the end forgets them. */
static void
pitr_xact_callback(XactEvent event, void *arg)
{
	Collected  *c = collected;

	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
		case XACT_EVENT_PRE_PREPARE:
			collected = NULL;
			if (c)
				write_collected(c);
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_PREPARE:
			collected = NULL;	/* its memory and spill file went with the transaction */
			break;
		default:
			break;
	}
}

/* Notes which subtransactions ended how, for the changes collected in them. */
static void
pitr_subxact_callback(SubXactEvent event, SubTransactionId subxact, SubTransactionId parent, void *arg)
{
	MemoryContext old;

	if (collected == NULL)
		return;
	old = MemoryContextSwitchTo(TopTransactionContext);
	if (event == SUBXACT_EVENT_ABORT_SUB)
		collected->aborted = lappend_int(collected->aborted, (int) subxact);
	else if (event == SUBXACT_EVENT_COMMIT_SUB)
		collected->parents = lappend_int(lappend_int(collected->parents, (int) subxact), (int) parent);
	MemoryContextSwitchTo(old);
}
