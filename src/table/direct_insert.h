/*
 * direct_insert.h — a row written straight into a heap and its indexes,
 * without the executor, for the tables the extension alone writes (GSI
 * tables, ddb.stream_records): no triggers, rules or checks on them.
 */
#ifndef DDB_TABLE_DIRECT_INSERT_H
#define DDB_TABLE_DIRECT_INSERT_H

#include "postgres.h"

#include "utils/rel.h"

/* Forms a row of values and nulls (in the relation's column order) and inserts it into rel's heap and indexes. */
extern void direct_insert(Relation rel, Datum *values, bool *nulls);

#endif
