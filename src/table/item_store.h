/*
 * item_store.h — reading and writing the items of a DynamoDB table.
 */
#ifndef DDB_ITEM_STORE_H
#define DDB_ITEM_STORE_H

#include "postgres.h"

#include "storage/lock.h"
#include "utils/jsonb.h"

#include "table_def.h"

/* A sort key condition of Query. */
typedef enum SortOp
{
	SORT_NONE,
	SORT_EQ,
	SORT_LT,
	SORT_LE,
	SORT_GT,
	SORT_GE,
	SORT_BETWEEN,
	SORT_BEGINS_WITH,
	SORT_UNDER,					/* the segment-aware prefix, <@ */
	SORT_RANGE					/* sk1 <= key < sk2: a multi-attribute sort key's conditions */
} SortOp;

#define SORT_OP_COUNT 10

/* The key columns of one row: table keys, and an index's keys when read from one. */
typedef struct RowKeys
{
	Datum		pk;
	Datum		sk;				/* 0 when the table has no sort key */
	Datum		gpk;			/* 0 unless read from an index */
	Datum		gsk;
} RowKeys;

/* A Query or Scan. */
typedef struct ReadRequest
{
	TableDef   *def;
	IndexDef   *index;			/* NULL: the table itself */
	bool		scan;			/* Scan: no partition key */
	Datum		pk;				/* Query: the partition key value */
	SortOp		op;
	Datum		sk1;
	Datum		sk2;			/* BETWEEN's upper bound, SORT_RANGE's exclusive one */
	bool		forward;
	bool		has_start;		/* ExclusiveStartKey */
	RowKeys		start;
	int			segment;		/* Scan's Segment / TotalSegments; 0/0 for all */
	int			total_segments;
	int			batch_size;		/* rows fetched at a time; 0 for the default */
} ReadRequest;

/*
 * Receives one row; returns false to stop.  It runs in a per-row memory
 * context reset after it returns: data and allocations last for the call only.
 */
typedef bool (*RowCallback) (void *arg, Jsonb *item, int32 item_size, RowKeys *keys);

/* Runs a Query or Scan in key order, calling cb per visible (unexpired) row. */
extern void store_read(ReadRequest *req, RowCallback cb, void *arg);

/* The visible item with this key, or NULL (copied into the current context). */
extern Jsonb *store_get(TableDef *def, Datum pk, Datum sk);

/*
 * The visible items with n keys (sks ignored without a sort key), into
 * items in the keys' order, NULL where there is none: BatchGetItem's read
 * of one table in one statement.  The keys must differ.
 */
extern void store_get_many(TableDef *def, int n, const Datum *pks, const Datum *sks, Jsonb **items);

/* A condition a write checks against the current item, under the item's row lock. */
typedef struct WriteCondition
{
	bool		(*holds) (void *arg, Jsonb *current);	/* current: the visible item, or NULL */
	void	   *arg;
} WriteCondition;

/*
 * Writes a canonical natural item.  Returns false, writing nothing, when
 * cond (if any) does not hold; *old (if asked) receives the visible item
 * that was replaced, or that failed the condition.
 */
extern bool store_put(TableDef *def, Jsonb *item, const WriteCondition *cond, Jsonb **old);

/*
 * Puts of one table held to be written by one statement (BatchWriteItem's):
 * each is checked when added, as store_put checks it before writing; the
 * statement writes them row by row in the order added, as that many
 * store_put calls would (triggers fire for each row), under one executor.
 */
typedef struct StorePuts
{
	TableDef   *def;			/* the table, read again under its lock; NULL while none is held */
	int			n;
	int			max;
	Datum	   *pks;
	Datum	   *sks;
	Datum	   *items;			/* canonical natural items */
	Datum	   *expiries;
	bool	   *no_expiry;
	Datum	   *sizes;
} StorePuts;

/* Makes room for up to max puts, none held. */
extern void store_puts_init(StorePuts *puts, int max);

/*
 * Holds a put of an item whose keys store_item_keys gave and whose index
 * keys gsi_check_item checked: raises what store_put would before writing
 * (AccessDeniedException, TransactionConflictException, an item over 400
 * KB).  The puts held of another table (or max of them) are written first.
 * The keys of the puts held must differ.
 */
extern void store_puts_add(StorePuts *puts, TableDef *def, Jsonb *item, Datum pk, Datum sk);

/* Writes the puts held, if any, by one INSERT ... ON CONFLICT DO UPDATE, and holds none. */
extern void store_puts_write(StorePuts *puts);

/* How an update makes the new item from the current one (NULL when absent). */
typedef struct WriteChange
{
	Jsonb	   *(*apply) (void *arg, Jsonb *current);
	void	   *arg;
} WriteChange;

/*
 * Updates an item under its row lock: false, writing nothing, when cond
 * does not hold; *old and *written (if asked) receive the item before and
 * after.
 */
extern bool store_update(TableDef *def, Datum pk, Datum sk, const WriteCondition *cond,
						 const WriteChange *change, Jsonb **old, Jsonb **written);

/* Checks cond against an item under its row lock, writing nothing (ConditionCheck). */
extern bool store_check(TableDef *def, Datum pk, Datum sk, const WriteCondition *cond, Jsonb **current);

/* Deletes an item, like store_put: false when cond does not hold. */
extern bool store_delete(TableDef *def, Datum pk, Datum sk, const WriteCondition *cond,
						 Jsonb **old);

/* Extracts and checks the table keys of a canonical natural item. */
extern void store_item_keys(TableDef *def, Jsonb *item, Datum *pk, Datum *sk);

/* True when a key datum has the declared key type ('S', 'N' or 'B'). */
extern bool store_key_has_type(Datum key, char type);

/*
 * Claims an item for a TransactWriteItems until the transaction ends,
 * trying for 10 ms at most: false when another transaction holds it, or a
 * single write to it is under way.
 */
extern bool store_claim_item(TableDef *def, Datum pk, Datum sk);

/*
 * The lock that stands for an item while a TransactWriteItems holds it
 * (DDB_LOCK_ITEM, src/ddb_locks.h), which no SQL can take: a router's
 * claims on a node go through ddb.try_claim_items.
 */
extern void store_item_lock_tag(TableDef *def, Datum pk, Datum sk, LOCKTAG *tag);

/* The TTL epoch seconds of an item under the table's TTL setting, or -1. */
extern int64 store_item_expiry(TableDef *def, JsonbContainer *item);

#endif							/* DDB_ITEM_STORE_H */
