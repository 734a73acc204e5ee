/*
 * table_lists.c — the tables the router treats apart, each list cached per
 * backend (router_cache.c): the tables with an attribute kept unique across
 * the nodes (ddb_router.unique_attributes, sql/router/unique.sql: a view of
 * the tables' unique indexes, read again once an index came or went) and
 * the reference tables, whose items every node holds
 * (ddb_router.reference_tables, sql/router/reference.sql: read again once
 * its trigger says it changed).
 */
#include "postgres.h"

#include "executor/spi.h"
#include "utils/builtins.h"

#include "router.h"

/* The query of each list. */
static const char *const list_queries[ROUTER_TABLE_LISTS] = {
	"SELECT DISTINCT table_name FROM ddb_router.unique_attributes",
	"SELECT table_name FROM ddb_router.reference_tables",
};

/* The cache of each list: what it follows. */
static RouterCache list_caches[ROUTER_TABLE_LISTS] = {
	{.name = "ddb_router tables with unique attributes", .table = NULL},
	{.name = "ddb_router reference tables", .table = "reference_tables"},
};

/* The lists (char *, in their caches' memory contexts). */
static List *lists[ROUTER_TABLE_LISTS];

/* Reads a list. */
static void
load_list(RouterTableList list)
{
	MemoryContext cxt = router_cache_begin_read(&list_caches[list]);

	lists[list] = NIL;
	SPI_connect();
	if (SPI_execute(list_queries[list], true, 0) != SPI_OK_SELECT)
		elog(ERROR, "ddb_router: %s failed", list_queries[list]);
	for (uint64 r = 0; r < SPI_processed; r++)
	{
		char	   *name = SPI_getvalue(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, 1);
		MemoryContext old = MemoryContextSwitchTo(cxt);

		lists[list] = lappend(lists[list], pstrdup(name));
		MemoryContextSwitchTo(old);
	}
	SPI_finish();
	router_cache_end_read(&list_caches[list]);
}

/* True when a table is in a list. */
bool
router_table_listed(RouterTableList list, const char *table_name)
{
	ListCell   *lc;

	if (!list_caches[list].valid)
		load_list(list);
	foreach(lc, lists[list])
		if (strcmp(table_name, (char *) lfirst(lc)) == 0)
			return true;
	return false;
}

/*
 * True when a request may concern a table of a list: its TableName is one,
 * or, for a request without one (a batch, a transaction, a PartiQL
 * statement), it names one anywhere in its text.  Erring on the side of
 * asking is cheap: the SQL it leads to reads the request.
 */
bool
router_request_names_listed(RouterTableList list, Jsonb *request)
{
	char	   *text = NULL;
	ListCell   *lc;
	JsonbValue *name;

	if (!list_caches[list].valid)
		load_list(list);
	if (lists[list] == NIL)
		return false;
	name = getKeyJsonValueFromContainer(&request->root, "TableName", 9, NULL);
	if (name != NULL && name->type == jbvString)
		return router_table_listed(list, pnstrdup(name->val.string.val, name->val.string.len));
	foreach(lc, lists[list])
	{
		if (text == NULL)
			text = JsonbToCString(NULL, &request->root, VARSIZE(request));
		if (strstr(text, (char *) lfirst(lc)) != NULL)
			return true;
	}
	return false;
}
