/*
 * commit_queue.c — a transaction's rows to write at its commit; see
 * commit_queue.h.  The rows go into a tuplestore, which spills to disk
 * for a large transaction.
 */
#include "postgres.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "utils/memutils.h"
#include "utils/resowner.h"

#include "commit_queue.h"

#define COMMIT_QUEUES_MAX 4

/* The queues that have put rows in this backend, flushed in this order. */
static CommitQueue *queues[COMMIT_QUEUES_MAX];
static int	nqueues = 0;

static void commit_queue_xact_callback(XactEvent event, void *arg);
static void commit_queue_subxact_callback(SubXactEvent event, SubTransactionId subxact,
										  SubTransactionId parent, void *arg);

/* Forgets a queue's transaction state (its memory and spill file go with the transaction). */
static void
forget(CommitQueue *queue)
{
	queue->desc = NULL;
	queue->rows = NULL;
	queue->keys = NIL;
	queue->aborted = NIL;
	queue->parents = NIL;
}

/* Begins the transaction's rows of a queue, registering it on its first use. */
static void
begin_rows(CommitQueue *queue)
{
	MemoryContext old;
	ResourceOwner owner = CurrentResourceOwner;
	int			i;

	for (i = 0; i < nqueues && queues[i] != queue; i++)
		;
	if (i == nqueues)
	{
		if (nqueues == 0)
		{
			RegisterXactCallback(commit_queue_xact_callback, NULL);
			RegisterSubXactCallback(commit_queue_subxact_callback, NULL);
		}
		if (nqueues == COMMIT_QUEUES_MAX)
			elog(ERROR, "ddb_model: too many commit queues");
		queues[nqueues++] = queue;
	}
	old = MemoryContextSwitchTo(TopTransactionContext);
	queue->desc = queue->describe();
	/* its spill file belongs to the transaction, not to the statement or subtransaction putting */
	CurrentResourceOwner = TopTransactionResourceOwner;
	queue->rows = tuplestore_begin_heap(false, false, work_mem);
	CurrentResourceOwner = owner;
	MemoryContextSwitchTo(old);
}

/* See commit_queue.h. */
void
commit_queue_put(CommitQueue *queue, Datum *values, bool *nulls)
{
	ResourceOwner owner = CurrentResourceOwner;

	if (queue->rows == NULL)
		begin_rows(queue);
	values[0] = Int32GetDatum((int32) GetCurrentSubTransactionId());
	nulls[0] = false;
	CurrentResourceOwner = TopTransactionResourceOwner;
	tuplestore_putvalues(queue->rows, queue->desc, values, nulls);
	CurrentResourceOwner = owner;
}

/* See commit_queue.h. */
void
commit_queue_add_key(CommitQueue *queue, int key)
{
	MemoryContext old = MemoryContextSwitchTo(TopTransactionContext);

	queue->keys = list_append_unique_int(queue->keys, key);
	MemoryContextSwitchTo(old);
}

/* True unless a row was put in a subtransaction that was rolled back (or inside one). */
static bool
survives(CommitQueue *queue, SubTransactionId subxact)
{
	while (queue->aborted != NIL && subxact != TopSubTransactionId)
	{
		ListCell   *lc;
		SubTransactionId parent = InvalidSubTransactionId;

		if (list_member_int(queue->aborted, (int) subxact))
			return false;
		for (lc = list_head(queue->parents); lc != NULL; lc = lnext(queue->parents, lnext(queue->parents, lc)))
			if ((SubTransactionId) lfirst_int(lc) == subxact)
				parent = (SubTransactionId) lfirst_int(lnext(queue->parents, lc));
		if (parent == InvalidSubTransactionId)
			break;
		subxact = parent;
	}
	return true;
}

/* See commit_queue.h. */
bool
commit_queue_next(CommitQueue *queue, TupleTableSlot *slot)
{
	while (tuplestore_gettupleslot(queue->rows, true, false, slot))
	{
		slot_getallattrs(slot);
		if (survives(queue, (SubTransactionId) DatumGetInt32(slot->tts_values[0])))
			return true;
	}
	return false;
}

/* See commit_queue.h. */
void
commit_queue_flush(CommitQueue *queue)
{
	if (queue->rows == NULL)
		return;
	queue->flush(queue);
	tuplestore_end(queue->rows);
	forget(queue);
}

/* At commit (or PREPARE TRANSACTION) flushes every queue that has rows; at the end forgets them. */
static void
commit_queue_xact_callback(XactEvent event, void *arg)
{
	for (int i = 0; i < nqueues; i++)
	{
		CommitQueue *queue = queues[i];

		switch (event)
		{
			case XACT_EVENT_PRE_COMMIT:
			case XACT_EVENT_PRE_PREPARE:
				commit_queue_flush(queue);
				break;
			case XACT_EVENT_ABORT:
			case XACT_EVENT_PARALLEL_ABORT:
			case XACT_EVENT_COMMIT:
			case XACT_EVENT_PARALLEL_COMMIT:
			case XACT_EVENT_PREPARE:
				forget(queue);
				break;
			default:
				break;
		}
	}
}

/* Notes which subtransactions ended how, for the rows put in them. */
static void
commit_queue_subxact_callback(SubXactEvent event, SubTransactionId subxact, SubTransactionId parent, void *arg)
{
	for (int i = 0; i < nqueues; i++)
	{
		CommitQueue *queue = queues[i];
		MemoryContext old;

		if (queue->rows == NULL)
			continue;
		old = MemoryContextSwitchTo(TopTransactionContext);
		if (event == SUBXACT_EVENT_ABORT_SUB)
			queue->aborted = lappend_int(queue->aborted, (int) subxact);
		else if (event == SUBXACT_EVENT_COMMIT_SUB)
			queue->parents = lappend_int(lappend_int(queue->parents, (int) subxact), (int) parent);
		MemoryContextSwitchTo(old);
	}
}
