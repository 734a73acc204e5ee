/*
 * commit_queue.h — rows a transaction collects as it writes and that are
 * written when it commits: the versions of point-in-time recovery
 * (pitr_capture.c) and the records of streams (stream_capture.c).
 *
 * Their triggers are plain AFTER ROW triggers that put rows here; at
 * XACT_EVENT_PRE_COMMIT (or PRE_PREPARE) each queue's flush writes the
 * rows that survived (not made in a subtransaction rolled back).  Not
 * deferred constraint triggers: a request that ddb.execute_as serves runs
 * as a security-restricted operation, which refuses deferred triggers
 * (src/execute/execute.c), and the extension's own deferred work must not
 * need them.
 */
#ifndef DDB_COMMIT_QUEUE_H
#define DDB_COMMIT_QUEUE_H

#include "postgres.h"

#include "access/tupdesc.h"
#include "executor/tuptable.h"
#include "nodes/pg_list.h"
#include "utils/tuplestore.h"

typedef struct CommitQueue CommitQueue;

struct CommitQueue
{
	/* the rows' columns: the first an int4 the queue fills (the subtransaction that put the row) */
	TupleDesc	(*describe) (void);
	/* writes the transaction's rows (commit_queue_next) at its commit */
	void		(*flush) (CommitQueue *queue);
	/* the current transaction's (TopTransactionContext); rows is NULL while it put none */
	TupleDesc	desc;
	Tuplestorestate *rows;
	List	   *keys;			/* int list: commit_queue_add_key's, unique, in order */
	List	   *aborted;		/* int list: subtransactions rolled back */
	List	   *parents;		/* int list: pairs of a committed subtransaction and its parent */
};

/* Puts a row (values[0] is filled here) into the current transaction's queue. */
extern void commit_queue_put(CommitQueue *queue, Datum *values, bool *nulls);

/* Notes a key the flush needs (a lock to take, say) once per transaction. */
extern void commit_queue_add_key(CommitQueue *queue, int key);

/* The next row that survived into slot (all attributes read), false after the last. */
extern bool commit_queue_next(CommitQueue *queue, TupleTableSlot *slot);

/* Flushes a queue's rows now (as SET CONSTRAINTS ... IMMEDIATE fires deferred triggers early). */
extern void commit_queue_flush(CommitQueue *queue);

#endif							/* DDB_COMMIT_QUEUE_H */
