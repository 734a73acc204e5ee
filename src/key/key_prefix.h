/*
 * key_prefix.h — range bounds shared by the prefix operators and the planner
 * support function.
 */
#ifndef DDB_KEY_PREFIX_H
#define DDB_KEY_PREFIX_H

#include "ddb_key.h"

/* Exclusive upper bound of the index range scanned for a prefix. */
extern struct varlena *ddb_key_range_upper(struct varlena *prefix, bool segments);

#endif							/* DDB_KEY_PREFIX_H */
