/*
 * unique_guard.c — attributes a node keeps unique with a unique index
 * (user_service's S7: one user per email address) kept unique across the
 * nodes: a write through the router that may set such an attribute first
 * goes through ddb_router.guard_unique (sql/router/unique.sql), which locks
 * the value on the router and looks for it on every node.  Which tables have
 * one is cached per backend, until a relation's definition changes.
 */
#include "postgres.h"

#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/memutils.h"

#include "router.h"

/* The tables with a unique attribute (char *, in TopMemoryContext), valid until a relcache invalidation. */
static List *unique_tables = NIL;
static bool unique_tables_valid = false;
static bool unique_callback = false;

/* Forgets the tables: an index or a table may have come or gone. */
static void
unique_tables_invalidate(Datum arg, Oid relid)
{
	unique_tables_valid = false;
}

/* Reads the tables with a unique attribute from ddb_router.unique_attributes. */
static void
load_unique_tables(void)
{
	MemoryContext old;

	if (!unique_callback)
	{
		CacheRegisterRelcacheCallback(unique_tables_invalidate, (Datum) 0);
		unique_callback = true;
	}
	list_free_deep(unique_tables);
	unique_tables = NIL;
	SPI_connect();
	if (SPI_execute("SELECT DISTINCT table_name FROM ddb_router.unique_attributes", true, 0) != SPI_OK_SELECT)
		elog(ERROR, "ddb_router: reading ddb_router.unique_attributes failed");
	old = MemoryContextSwitchTo(TopMemoryContext);
	for (uint64 i = 0; i < SPI_processed; i++)
		unique_tables = lappend(unique_tables, SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1));
	MemoryContextSwitchTo(old);
	SPI_finish();
	unique_tables_valid = true;
}

/*
 * True when a write request may set a unique attribute: it names (anywhere
 * in its text: a batch, a transaction, a PartiQL statement) a table that has
 * one.  Erring on the side of asking is cheap: the guard reads the request.
 */
bool
router_may_write_unique(Jsonb *request)
{
	char	   *text = NULL;
	ListCell   *lc;

	if (!unique_tables_valid)
		load_unique_tables();
	foreach(lc, unique_tables)
	{
		if (text == NULL)
			text = JsonbToCString(NULL, &request->root, VARSIZE(request));
		if (strstr(text, (char *) lfirst(lc)) != NULL)
			return true;
	}
	return false;
}
