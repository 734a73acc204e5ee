/*
 * item_store_plans.h — what the item writes (item_store.c) and the reads in
 * key order (item_read.c) share: the plan slots of a relation, the TTL
 * visibility condition, and the helpers that build and keep their plans.
 */
#ifndef DDB_ITEM_STORE_PLANS_H
#define DDB_ITEM_STORE_PLANS_H

#include "postgres.h"

#include "executor/spi.h"

#include "table_def.h"

/* Plan slots of a relation (TABLE_MAX_PLANS in all). */
#define PLAN_PUT 0
#define PLAN_LOCK_OLD 1
#define PLAN_DELETE 2
#define PLAN_GET 3
#define PLAN_INSERT_NEW 4
#define PLAN_GET_MANY 5
#define PLAN_PUT_MANY 6
#define PLAN_READ_FIRST 16		/* + read shape, see item_read.c */

/* The visibility condition of TTL, for now = $n (operators qualified: no search_path). */
#define TTL_VISIBLE(n) \
	"(expires_at IS NULL OR expires_at OPERATOR(pg_catalog.>) $" n \
	" OR expires_at OPERATOR(pg_catalog.<=) ($" n " OPERATOR(pg_catalog.-) 157680000::pg_catalog.int8))"

/*
 * The plan of a slot; its SQL is built (by the caller's expression) only
 * when the slot is empty.  A plan that an invalidation made stale is kept
 * (an outer call may be running it, when a trigger writes to the same
 * table): SPI re-plans it on its next execution.
 */
#define SLOT_PLAN(slot, sql, nargs, argtypes) \
	(*(slot) ? *(slot) : store_prepare_plan((slot), (sql), (nargs), (argtypes)))

extern int64 store_now(void);
extern char *store_qualified(TableDef *def, const char *relation);
extern SPIPlanPtr store_prepare_plan(SPIPlanPtr *slot, const char *sql, int nargs, Oid *argtypes);

#endif							/* DDB_ITEM_STORE_PLANS_H */
