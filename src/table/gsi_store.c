/*
 * gsi_store.c — writes GSI entries straight into the index's heap and
 * btree, without SQL: the GSI trigger runs once per item write, and going
 * through SPI (plan lookup, executor start and end per entry) cost more than
 * the write itself.
 *
 * A GSI table has no triggers, rules or constraints besides its primary
 * key (ddb.create_index makes it so), which is what makes this safe.  The
 * entry of an item is only ever written under the lock on the item's row,
 * so no two transactions touch one entry at once.  Hash-partitioned GSI
 * tables are routed here with PostgreSQL's own partition hash.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/heapam.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "catalog/pg_class.h"
#include "executor/executor.h"
#include "partitioning/partbounds.h"
#include "partitioning/partdesc.h"
#include "utils/lsyscache.h"
#include "utils/partcache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "direct_insert.h"
#include "gsi.h"

/* The relation that holds entries with this index partition key. */
static Relation
open_target(IndexDef *index, Datum gpk, LOCKMODE lock)
{
	Relation	rel = table_open(index->relid, lock);
	PartitionKey partkey;
	PartitionDesc partdesc;
	bool		isnull = false;
	uint64		hash;
	int			part;
	Oid			partoid;

	if (rel->rd_rel->relkind != RELKIND_PARTITIONED_TABLE)
		return rel;
	partkey = RelationGetPartitionKey(rel);
	partdesc = RelationGetPartitionDesc(rel, true);
	hash = compute_partition_hash_value(partkey->partnatts, partkey->partsupfunc,
										partkey->partcollation, &gpk, &isnull);
	part = partdesc->boundinfo ? partdesc->boundinfo->indexes[hash % partdesc->boundinfo->nindexes] : -1;
	if (part < 0)
		ereport(ERROR,
				(errcode(ERRCODE_CHECK_VIOLATION),
				 errmsg("no partition of \"%s\" holds this index key", RelationGetRelationName(rel)),
				 errhint("The hash partitions of a GSI table must cover every remainder.")));
	partoid = partdesc->oids[part];
	table_close(rel, NoLock);
	return table_open(partoid, lock);
}

/* The key columns of an entry, in table order: gpk, [gsk,] pk, [sk]; returns how many. */
static int
entry_keys(const GsiEntry *entry, Datum *keys)
{
	int			n = 0;

	keys[n++] = entry->gpk;
	if (entry->gsk)
		keys[n++] = entry->gsk;
	keys[n++] = entry->pk;
	if (entry->sk)
		keys[n++] = entry->sk;
	return n;
}

/* The row of an entry: its keys, then item, expires_at, item_size. */
static void
entry_values(TupleDesc desc, const GsiEntry *entry, Datum *values, bool *nulls)
{
	int			n;

	memset(nulls, false, sizeof(bool) * desc->natts);
	n = entry_keys(entry, values);
	values[n] = entry->item ? JsonbPGetDatum(entry->item) : (Datum) 0;
	nulls[n++] = entry->item == NULL;
	values[n] = Int64GetDatum(entry->expires_at);
	nulls[n++] = entry->expires_null;
	values[n++] = Int32GetDatum(entry->item_size);
	if (n != desc->natts)
		elog(ERROR, "ddb_model: GSI table has %d columns, expected %d", desc->natts, n);
}

/* Inserts an entry into its heap and indexes. */
void
gsi_insert_entry(IndexDef *index, const GsiEntry *entry)
{
	Relation	rel = open_target(index, entry->gpk, RowExclusiveLock);
	TupleDesc	desc = RelationGetDescr(rel);
	Datum	   *values = palloc(sizeof(Datum) * desc->natts);
	bool	   *nulls = palloc(sizeof(bool) * desc->natts);

	entry_values(desc, entry, values, nulls);
	direct_insert(rel, values, nulls);
	table_close(rel, NoLock);
}

/* Deletes the entry with these keys, if there is one. */
void
gsi_delete_entry(IndexDef *index, const GsiEntry *entry)
{
	Relation	rel = open_target(index, entry->gpk, RowExclusiveLock);
	Relation	pkindex = index_open(RelationGetPrimaryKeyIndex(rel), RowExclusiveLock);
	Datum		keys[4];
	int			nkeys = entry_keys(entry, keys);
	ScanKeyData scankeys[4];
	IndexScanDesc scan;
	TupleTableSlot *slot = table_slot_create(rel, NULL);
	/* every key column is a ddb_key in the same operator family */
	Oid			eqproc = get_opcode(get_opfamily_member(pkindex->rd_opfamily[0], pkindex->rd_opcintype[0],
														pkindex->rd_opcintype[0], BTEqualStrategyNumber));

	for (int i = 0; i < nkeys; i++)
		ScanKeyInit(&scankeys[i], (AttrNumber) (i + 1), BTEqualStrategyNumber, eqproc, keys[i]);

	/*
	 * SnapshotSelf: the entry may have been written by a transaction that
	 * committed after this statement's snapshot (READ COMMITTED re-checking
	 * the item's row), and it is the one live version to delete.
	 */
	scan = index_beginscan(rel, pkindex, SnapshotSelf, nkeys, 0);
	index_rescan(scan, scankeys, nkeys, NULL, 0);
	if (index_getnext_slot(scan, ForwardScanDirection, slot))
		simple_heap_delete(rel, &slot->tts_tid);
	index_endscan(scan);

	ExecDropSingleTupleTableSlot(slot);
	index_close(pkindex, NoLock);
	table_close(rel, NoLock);
}
