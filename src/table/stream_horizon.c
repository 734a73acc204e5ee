/*
 * stream_horizon.c — ddb.stream_horizon, how far a reader of a stream may
 * read (GetRecords, docs/streams.md "What is recorded, and in which order").
 *
 * Writers number a stream's records and insert them one writer at a time,
 * releasing the stream's order lock once they are in and before their
 * commit (src/table/stream_capture.c): whenever a record is in the index,
 * so is every record numbered before it.  A record's writer ends after its
 * records are in, so a reader's snapshot that sees the end of one writer
 * (committed or rolled back) comes after every lower number is in: walking
 * the index from its iterator, the reader meets each of them, and stops at
 * the first record of a writer its snapshot still sees running (committing,
 * prepared, or having committed since a REPEATABLE READ snapshot was
 * taken).  Below where it stops, nothing can appear later.  It waits for no
 * writer and takes no lock but the relations' own.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "executor/tuptable.h"
#include "storage/bufmgr.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/rel.h"
#include "utils/relcache.h"
#include "utils/snapmgr.h"

#include "table_access.h"

PG_FUNCTION_INFO_V1(ddb_stream_horizon);

/* What a reader's snapshot makes of a record. */
typedef enum RecordState
{
	RECORD_SEEN,				/* committed before the snapshot: read it */
	RECORD_GONE,				/* rolled back, or deleted, before the snapshot: pass it */
	RECORD_PENDING				/* its writer is running for the snapshot: stop before it */
} RecordState;

/* The state of the record in a slot of ddb.stream_records (its buffer pinned by the scan). */
static RecordState
record_state(TupleTableSlot *slot, Snapshot snapshot)
{
	BufferHeapTupleTableSlot *bslot = (BufferHeapTupleTableSlot *) slot;
	HeapTuple	tuple = bslot->base.tuple;
	RecordState state;

	LockBuffer(bslot->buffer, BUFFER_LOCK_SHARE);
	if (HeapTupleSatisfiesVisibility(tuple, snapshot, bslot->buffer))
		state = RECORD_SEEN;
	else if (!HeapTupleHeaderXminFrozen(tuple->t_data) &&
			 XidInMVCCSnapshot(HeapTupleHeaderGetRawXmin(tuple->t_data), snapshot))
		state = RECORD_PENDING; /* even if it has ended since: it may have committed */
	else
		state = RECORD_GONE;
	LockBuffer(bslot->buffer, BUFFER_LOCK_UNLOCK);
	return state;
}

/* Sets a scan key on a column of the primary key of ddb.stream_records, in the index's collation. */
static void
key_init(ScanKey key, Relation index, AttrNumber column, StrategyNumber strategy, RegProcedure proc,
		 Datum value)
{
	ScanKeyInit(key, column, strategy, proc, value);
	key->sk_collation = index->rd_indcollation[column - 1];
}

/*
 * ddb.stream_horizon(table_name, label, after, page): the sequence number up
 * to which the caller's snapshot may read the stream after the number
 * after, reading page records at most: the last record before the first
 * one still being committed, or after if that is the next one; for a role
 * that may read the table.  Every record up to it is either seen by the
 * snapshot or will never be (rolled back, or deleted).
 */
Datum
ddb_stream_horizon(PG_FUNCTION_ARGS)
{
	text	   *table_name = PG_GETARG_TEXT_PP(0);
	text	   *label = PG_GETARG_TEXT_PP(1);
	int64		after = PG_GETARG_INT64(2);
	int32		page = PG_GETARG_INT32(3);
	Snapshot	snapshot = GetActiveSnapshot();
	Relation	heap;
	Relation	index;
	ScanKeyData keys[3];
	IndexScanDesc scan;
	TupleTableSlot *slot;
	AttrNumber	sequence_column;
	int64		horizon = after;
	int			seen = 0;

	table_access_check_operation(text_to_cstring(table_name), "GetRecords", "read");
	if (page < 1)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("ddb.stream_horizon: page must be positive")));
	heap = table_open(ddb_relation_oid("stream_records"), AccessShareLock);
	index = index_open(RelationGetPrimaryKeyIndex(heap), AccessShareLock);
	/* the primary key is (table_name, stream_label, sequence_number) */
	sequence_column = index->rd_index->indkey.values[2];
	key_init(&keys[0], index, 1, BTEqualStrategyNumber, F_TEXTEQ, PointerGetDatum(table_name));
	key_init(&keys[1], index, 2, BTEqualStrategyNumber, F_TEXTEQ, PointerGetDatum(label));
	key_init(&keys[2], index, 3, BTGreaterStrategyNumber, F_INT8GT, Int64GetDatum(after));
	slot = table_slot_create(heap, NULL);
	/* every version in the index, rolled back, running or deleted: record_state judges each */
	scan = index_beginscan(heap, index, SnapshotAny, 3, 0);
	index_rescan(scan, keys, 3, NULL, 0);
	while (seen < page && index_getnext_slot(scan, ForwardScanDirection, slot))
	{
		RecordState state = record_state(slot, snapshot);
		bool		isnull;

		if (state == RECORD_PENDING)
			break;
		horizon = DatumGetInt64(slot_getattr(slot, sequence_column, &isnull));
		if (state == RECORD_SEEN)
			seen++;
	}
	index_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	index_close(index, AccessShareLock);
	table_close(heap, AccessShareLock);
	PG_RETURN_INT64(horizon);
}
