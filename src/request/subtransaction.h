/*
 * subtransaction.h — running part of a request, or of a job, in a
 * subtransaction of its own (subtransaction.c): transactions, batches,
 * PartiQL's batches, ddb.execute_rolled_back, the import job's batches and
 * the jobs' failure functions.
 */
#ifndef DDB_SUBTRANSACTION_H
#define DDB_SUBTRANSACTION_H

#include "postgres.h"

#include "utils/resowner.h"

/* A subtransaction and what its caller had current. */
typedef struct Subtransaction
{
	MemoryContext cxt;
	ResourceOwner owner;
} Subtransaction;

/* Starts a subtransaction, staying in the caller's memory context. */
extern void api_subtransaction_begin(Subtransaction *sub);

/* Commits, or rolls back, the subtransaction; the caller's context and resource owner are current again. */
extern void api_subtransaction_commit(Subtransaction *sub);
extern void api_subtransaction_rollback(Subtransaction *sub);

/* Runs fn(arg) in a subtransaction of its own: NULL, or the error it raised (rolled back, the error state flushed). */
extern ErrorData *api_subtransaction_run(void (*fn) (void *arg), void *arg);

#endif							/* DDB_SUBTRANSACTION_H */
