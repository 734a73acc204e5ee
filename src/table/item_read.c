/*
 * item_read.c — Query and Scan of a table or index in key order: the SQL
 * of each read shape (sort key condition, direction, start key, segment),
 * kept as one plan per shape in the relation's plan slots, run through a
 * cursor a batch at a time, hiding items whose TTL has passed.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "nodes/pg_list.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"

#include "../ddb_errors.h"
#include "../key/ddb_key.h"
#include "item_store.h"
#include "item_store_plans.h"
#include "table_access.h"

/* Parameters of read statements. */
#define READ_NARGS 10

/* The SQL condition of a sort key operator on column c, over $2 (and $3). */
static const char *
sort_condition(SortOp op, const char *c)
{
	switch (op)
	{
		case SORT_NONE:
			return "";
		case SORT_EQ:
			return psprintf(" AND %s OPERATOR(pg_catalog.=) $2", c);
		case SORT_LT:
			return psprintf(" AND %s OPERATOR(pg_catalog.<) $2", c);
		case SORT_LE:
			return psprintf(" AND %s OPERATOR(pg_catalog.<=) $2", c);
		case SORT_GT:
			return psprintf(" AND %s OPERATOR(pg_catalog.>) $2", c);
		case SORT_GE:
			return psprintf(" AND %s OPERATOR(pg_catalog.>=) $2", c);
		case SORT_BETWEEN:
			return psprintf(" AND %s OPERATOR(pg_catalog.>=) $2 AND %s OPERATOR(pg_catalog.<=) $3", c, c);
		case SORT_BEGINS_WITH:
			return psprintf(" AND %s OPERATOR(pg_catalog.^@) $2", c);
		case SORT_UNDER:
			return psprintf(" AND %s OPERATOR(pg_catalog.<@) $2", c);
		case SORT_RANGE:
			return psprintf(" AND %s OPERATOR(pg_catalog.>=) $2 AND %s OPERATOR(pg_catalog.<) $3", c, c);
	}
	return "";
}

/*
 * The key columns of the relation a read scans, in key order: its ORDER BY,
 * all ascending (ScanIndexForward true) or all descending, ties included.
 * So a Query of an index reads by the index sort key (a multi-attribute one
 * element by element), and rows of equal index sort key, or all rows of an
 * index without one, by the table's partition key, then its sort key: the
 * order of the index relation's primary key (gpk, gsk, pk, sk), in ddb_key
 * order (numbers by value, strings and binaries by their bytes).  A router
 * merging its shards' pages of a GSI Query (ddb.execute_for_merge) relies
 * on this order.
 */
static List *
order_columns(ReadRequest *req)
{
	List	   *cols = NIL;

	if (req->index)
	{
		if (req->scan)
			cols = lappend(cols, "gpk");
		if (req->index->keys.range_key)
			cols = lappend(cols, "gsk");
	}
	if (req->scan || req->index)
		cols = lappend(cols, "pk");
	if (req->def->keys.range_key)
		cols = lappend(cols, "sk");
	return cols;
}

/* Builds the SQL of a read shape. */
static char *
read_sql(ReadRequest *req)
{
	List	   *cols = order_columns(req);
	StringInfoData sql;
	StringInfoData start_cols;
	StringInfoData start_params;
	StringInfoData order;
	const char *rel = store_qualified(req->def, req->index ? req->index->relation_name
								: req->def->relation_name);
	int			n = 0;
	ListCell   *lc;

	initStringInfo(&start_cols);
	initStringInfo(&start_params);
	initStringInfo(&order);
	foreach(lc, cols)
	{
		const char *c = (const char *) lfirst(lc);

		appendStringInfo(&start_cols, "%s%s", n ? ", " : "", c);
		appendStringInfo(&start_params, "%s$%d", n ? ", " : "", 4 + n);
		appendStringInfo(&order, "%s%s %s", n ? ", " : "", c, req->forward ? "ASC" : "DESC");
		n++;
	}

	initStringInfo(&sql);
	appendStringInfo(&sql, "SELECT item, item_size, pk, %s, %s, %s FROM %s WHERE " TTL_VISIBLE("8"),
					 req->def->keys.range_key ? "sk" : "NULL::ddb.ddb_key",
					 req->index ? "gpk" : "NULL::ddb.ddb_key",
					 req->index && req->index->keys.range_key ? "gsk" : "NULL::ddb.ddb_key",
					 rel);
	if (!req->scan)
		appendStringInfo(&sql, " AND %s OPERATOR(pg_catalog.=) $1%s",
						 req->index ? "gpk" : "pk",
						 sort_condition(req->op, req->index ? "gsk" : "sk"));
	else if (req->total_segments > 0)
		appendStringInfo(&sql, " AND ((ddb.ddb_key_hash(%s)::pg_catalog.int8 OPERATOR(pg_catalog.&) 2147483647::pg_catalog.int8)"
						 " OPERATOR(pg_catalog.%%) $10::pg_catalog.int8) OPERATOR(pg_catalog.=) $9::pg_catalog.int8",
						 req->index ? "gpk" : "pk");
	if (req->has_start && n > 0)
		appendStringInfo(&sql, " AND (%s) %s (%s)", start_cols.data,
						 req->forward ? "OPERATOR(pg_catalog.>)" : "OPERATOR(pg_catalog.<)",
						 start_params.data);
	if (n > 0)
		appendStringInfo(&sql, " ORDER BY %s", order.data);
	return sql.data;
}

/* The plan slot of a read shape. */
static int
read_shape(ReadRequest *req)
{
	int			op = req->scan ? (req->total_segments > 0 ? 1 : 0) : 2 + (int) req->op;

	StaticAssertStmt(PLAN_READ_FIRST + (2 + SORT_OP_COUNT) * 4 <= TABLE_MAX_PLANS,
					 "read shapes fit the plan slots");
	return PLAN_READ_FIRST + op * 4 + (req->forward ? 2 : 0) + (req->has_start ? 1 : 0);
}

/* Runs a Query or Scan in key order, calling cb per visible row. */
void
store_read(ReadRequest *req, RowCallback cb, void *arg)
{
	Oid			keytype = ddb_key_type_oid();
	Oid			argtypes[READ_NARGS] = {keytype, keytype, keytype, keytype, keytype, keytype,
	keytype, INT8OID, INT4OID, INT4OID};
	Datum		args[READ_NARGS];
	char		nulls[READ_NARGS];
	SPIPlanPtr *slots = req->index ? req->index->plans : req->def->plans;
	List	   *cols = order_columns(req);
	Datum		start[4] = {req->start.gpk, req->start.gsk, req->start.pk, req->start.sk};
	int			n = 0;
	ListCell   *lc;
	SPIPlanPtr	plan;
	Portal		portal;
	bool		more = true;
	MemoryContext row_cxt;

	table_access_check(req->def, req->index, TABLE_READ);
	/* leading keys are the table's partition keys; a Scan or an index read is filtered by row-level security */
	if (!req->scan && req->index == NULL)
		table_access_check_key(req->def, req->pk);
	/* a Query of a partition-key-only table holds one item: nothing follows it */
	if (req->has_start && cols == NIL)
		return;
	memset(nulls, 'n', sizeof(nulls));
	memset(args, 0, sizeof(args));
	args[0] = req->pk;
	args[1] = req->sk1;
	args[2] = req->sk2;
	args[7] = Int64GetDatum(store_now());
	args[8] = Int32GetDatum(req->segment);
	args[9] = Int32GetDatum(req->total_segments);
	nulls[0] = req->scan ? 'n' : ' ';
	nulls[1] = req->sk1 ? ' ' : 'n';
	nulls[2] = req->sk2 ? ' ' : 'n';
	nulls[7] = nulls[8] = nulls[9] = ' ';
	/* the start key's values in the order of the ORDER BY columns */
	foreach(lc, cols)
	{
		const char *c = (const char *) lfirst(lc);
		Datum		v = strcmp(c, "gpk") == 0 ? start[0] : strcmp(c, "gsk") == 0 ? start[1] :
			strcmp(c, "pk") == 0 ? start[2] : start[3];

		args[3 + n] = v;
		nulls[3 + n] = (req->has_start && v) ? ' ' : 'n';
		n++;
	}
	if (req->has_start)
		for (int i = 0; i < n; i++)
			if (nulls[3 + i] == 'n')
				ddb_validation_error("The provided starting key is invalid: The provided key element does not match the schema");

	SPI_connect();
	/* each row's detoasted item and the callback's work are freed before the next row */
	row_cxt = AllocSetContextCreate(CurrentMemoryContext, "ddb read row", ALLOCSET_DEFAULT_SIZES);
	plan = SLOT_PLAN(&slots[read_shape(req)], read_sql(req), READ_NARGS, argtypes);
	portal = SPI_cursor_open(NULL, plan, args, nulls, true);
	while (more)
	{
		SPI_cursor_fetch(portal, true, req->batch_size > 0 ? req->batch_size : 256);
		if (SPI_processed == 0)
			break;
		for (uint64 r = 0; r < SPI_processed && more; r++)
		{
			HeapTuple	row = SPI_tuptable->vals[r];
			TupleDesc	desc = SPI_tuptable->tupdesc;
			bool		isnull;
			RowKeys		keys;
			MemoryContext old = MemoryContextSwitchTo(row_cxt);
			Jsonb	   *item = DatumGetJsonbP(SPI_getbinval(row, desc, 1, &isnull));
			int32		size = DatumGetInt32(SPI_getbinval(row, desc, 2, &isnull));

			keys.pk = SPI_getbinval(row, desc, 3, &isnull);
			keys.sk = SPI_getbinval(row, desc, 4, &isnull);
			if (isnull)
				keys.sk = (Datum) 0;
			keys.gpk = SPI_getbinval(row, desc, 5, &isnull);
			if (isnull)
				keys.gpk = (Datum) 0;
			keys.gsk = SPI_getbinval(row, desc, 6, &isnull);
			if (isnull)
				keys.gsk = (Datum) 0;
			more = cb(arg, item, size, &keys);
			MemoryContextSwitchTo(old);
			MemoryContextReset(row_cxt);
		}
		SPI_freetuptable(SPI_tuptable);
	}
	SPI_cursor_close(portal);
	SPI_finish();
}
