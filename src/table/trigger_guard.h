/*
 * trigger_guard.h — the checks every trigger function of the extension
 * makes before it writes anything as an owner (docs/security.md): that it
 * fires on the table its argument names (or a partition of it), by OID,
 * and that the columns it reads have the types the extension gave them.
 */
#ifndef DDB_TRIGGER_GUARD_H
#define DDB_TRIGGER_GUARD_H

#include "postgres.h"

#include "access/htup.h"
#include "access/tupdesc.h"
#include "commands/trigger.h"

#include "table_def.h"

/* Where the item columns are in one relation of a table (the table or a partition of it). */
typedef struct ItemColumns
{
	Oid			relid;
	AttrNumber	pk;
	AttrNumber	sk;				/* 0 for a table without a sort key */
	AttrNumber	item;
	AttrNumber	expires_at;
	AttrNumber	item_size;
} ItemColumns;

/*
 * The definition of the table a row trigger of the extension serves, and
 * where its columns are in the relation it fired on: the trigger must run
 * AFTER ... FOR EACH ROW with nargs arguments, the first the table's
 * DynamoDB name, on that table's relation or a partition of it.  Raises
 * otherwise (function names the trigger function in the message).
 */
extern TableDef *trigger_guard_row(FunctionCallInfo fcinfo, const char *function, int nargs,
								   const ItemColumns **columns);

/* A column of a row that must not be NULL (a key, the item or its size): raises for NULL. */
extern Datum trigger_guard_column(HeapTuple tuple, TupleDesc desc, AttrNumber att);

#endif							/* DDB_TRIGGER_GUARD_H */
