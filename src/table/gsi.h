/*
 * gsi.h — what a global secondary index holds for an item, shared by the
 * maintenance trigger and the consistency check.
 */
#ifndef DDB_GSI_H
#define DDB_GSI_H

#include "postgres.h"

#include "utils/jsonb.h"

#include "table_def.h"

/* The index keys of an item; false when the item is not in the index (sparse). */
extern bool gsi_item_keys(IndexDef *index, Jsonb *item, Datum *gpk, Datum *gsk);

/* The item as the index projects it. */
extern Jsonb *gsi_projected_item(TableDef *def, IndexDef *index, Jsonb *item);

#endif							/* DDB_GSI_H */
