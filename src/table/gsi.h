/*
 * gsi.h — what a global secondary index holds for an item, shared by the
 * maintenance trigger and the consistency check.
 */
#ifndef DDB_GSI_H
#define DDB_GSI_H

#include "postgres.h"

#include "utils/jsonb.h"

#include "table_def.h"

/* One row of a GSI table; gsk and sk are 0 when the index or table has no sort key. */
typedef struct GsiEntry
{
	Datum		gpk;
	Datum		gsk;
	Datum		pk;
	Datum		sk;
	Jsonb	   *item;			/* projected item; unused by deletes */
	bool		expires_null;
	int64		expires_at;
	int32		item_size;
} GsiEntry;

/*
 * Told of each index entry a row change writes, while set (ddb.execute sets
 * it to count ConsumedCapacity): the projected sizes of the old and new
 * entries (-1 when the item is not in the index on that side), whether the
 * index key changed, and whether the entry stayed exactly as it was.
 */
typedef void (*GsiWriteObserver) (TableDef *def, IndexDef *index, int64 old_size, int64 new_size,
								  bool key_changed, bool unchanged);
extern GsiWriteObserver gsi_write_observer;

/* True when an index projects an attribute (every attribute, for ALL). */
extern bool gsi_projects(TableDef *def, IndexDef *index, const char *name);

/* Checks an item about to be put against the indexes (key types, local entry sizes), before its condition. */
extern void gsi_check_item(TableDef *def, Jsonb *item);

/* Inserts an entry into the GSI table (gsi_store.c). */
extern void gsi_insert_entry(IndexDef *index, const GsiEntry *entry);

/* Deletes the entry with the entry's keys, if there is one (gsi_store.c). */
extern void gsi_delete_entry(IndexDef *index, const GsiEntry *entry);

#endif							/* DDB_GSI_H */
