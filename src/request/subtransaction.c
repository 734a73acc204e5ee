/*
 * subtransaction.c — running part of a request in a subtransaction of its
 * own, so that its failure can be reported (a transaction's cancellation
 * reason, a batch statement's Error, an import's failed batch; a job's
 * failure function too) while the rest goes on.  The caller's
 * memory context and resource owner are current again whatever happened, as
 * PL/pgSQL's exception blocks leave them.
 */
#include "postgres.h"

#include "access/xact.h"
#include "utils/memutils.h"
#include "utils/resowner.h"

#include "subtransaction.h"

/* Starts a subtransaction, staying in the caller's memory context. */
void
api_subtransaction_begin(Subtransaction *sub)
{
	sub->cxt = CurrentMemoryContext;
	sub->owner = CurrentResourceOwner;
	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(sub->cxt);
}

/* Commits the subtransaction and returns to the caller's context and resource owner. */
void
api_subtransaction_commit(Subtransaction *sub)
{
	ReleaseCurrentSubTransaction();
	MemoryContextSwitchTo(sub->cxt);
	CurrentResourceOwner = sub->owner;
}

/* Rolls the subtransaction back and returns to the caller's context and resource owner. */
void
api_subtransaction_rollback(Subtransaction *sub)
{
	RollbackAndReleaseCurrentSubTransaction();
	MemoryContextSwitchTo(sub->cxt);
	CurrentResourceOwner = sub->owner;
}

/*
 * Runs fn(arg) in a subtransaction: committed when fn returns, rolled back
 * when it raises.  Returns NULL, or the error it raised (in the caller's
 * context, the error state flushed) for the caller to report, or to raise
 * again with ReThrowError.
 */
ErrorData *
api_subtransaction_run(void (*fn) (void *arg), void *arg)
{
	Subtransaction sub;
	ErrorData  *volatile error = NULL;

	api_subtransaction_begin(&sub);
	PG_TRY();
	{
		fn(arg);
		api_subtransaction_commit(&sub);
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(sub.cxt);
		error = CopyErrorData();
		FlushErrorState();
		api_subtransaction_rollback(&sub);
	}
	PG_END_TRY();
	return error;
}
