/*
 * restore_items.c — ddb.restore_items(target, items_function, argument):
 * the items a function returns written into a table being restored, as
 * ddb.put_item writes them (indexes are filled by their trigger as items
 * arrive).  The restore job calls it (sql/restore.sql); while it runs,
 * this backend may write the table although it is CREATING.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "../table/table_def.h"

PG_FUNCTION_INFO_V1(ddb_restore_items);

/* ddb.restore_items(target_table, items_function, items_argument): the number of items written. */
Datum
ddb_restore_items(PG_FUNCTION_ARGS)
{
	char	   *target;
	Oid			function;
	Oid			argtypes[2] = {TEXTOID, JSONBOID};
	Datum		args[2];
	char	   *sql;
	const char *outer;
	volatile int64 items = 0;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("the table, items function and argument of ddb.restore_items must not be null")));
	target = text_to_cstring(PG_GETARG_TEXT_PP(0));
	function = PG_GETARG_OID(1);
	args[0] = PG_GETARG_DATUM(0);
	args[1] = PG_GETARG_DATUM(2);
	if (get_func_name(function) == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FUNCTION),
				 errmsg("the items function %u of a restore does not exist", function)));
	sql = psprintf("SELECT pg_catalog.count(*) FROM (SELECT ddb.put_item($1, t.item) FROM %s($2) AS t(item)) written",
				   quote_qualified_identifier(get_namespace_name(get_func_namespace(function)), get_func_name(function)));
	outer = table_def_set_restoring(target);
	PG_TRY();
	{
		bool		isnull;

		SPI_connect();
		if (SPI_execute_with_args(sql, 2, argtypes, args, NULL, false, 1) != SPI_OK_SELECT)
			elog(ERROR, "ddb_model: the restore of %s could not read its items", target);
		items = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
		SPI_finish();
	}
	PG_FINALLY();
	{
		table_def_set_restoring(outer);
	}
	PG_END_TRY();
	PG_RETURN_INT64(items);
}
