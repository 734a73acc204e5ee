/*
 * direct_insert.c — a row straight into a heap and its indexes.  Through
 * SPI, the executor's start and end for one row cost more than the write
 * itself (a GSI entry, a stream record); the tables written this way have
 * no triggers, rules or check constraints, which is what makes it safe.
 * Unique indexes are still checked.
 */
#include "postgres.h"

#include "access/heapam.h"
#include "executor/executor.h"

#include "direct_insert.h"

/* Inserts a row into rel's heap and indexes; see direct_insert.h. */
void
direct_insert(Relation rel, Datum *values, bool *nulls)
{
	TupleDesc	desc = RelationGetDescr(rel);
	EState	   *estate = CreateExecutorState();
	ResultRelInfo *rri = makeNode(ResultRelInfo);
	TupleTableSlot *slot = MakeSingleTupleTableSlot(desc, &TTSOpsHeapTuple);
	HeapTuple	tuple = heap_form_tuple(desc, values, nulls);

	simple_heap_insert(rel, tuple);
	InitResultRelInfo(rri, rel, 0, NULL, 0);
	ExecOpenIndices(rri, false);
	ExecStoreHeapTuple(tuple, slot, false);
	ExecInsertIndexTuples(rri, slot, estate, false, false, NULL, NIL);
	ExecCloseIndices(rri);
	ExecDropSingleTupleTableSlot(slot);
	FreeExecutorState(estate);
}
