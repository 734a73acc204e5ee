/*
 * table_lists.c — the tables the router treats apart, cached per backend
 * until a relcache invalidation (an index or a table came or went, or a
 * list changed: their triggers send one): the tables with an attribute kept
 * unique across the nodes (ddb_router.unique_attributes, sql/router/unique.sql)
 * and the reference tables, whose items every node holds
 * (ddb_router.reference_tables, sql/router/reference.sql).
 */
#include "postgres.h"

#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/memutils.h"

#include "router.h"

/* The query of each list. */
static const char *const list_queries[ROUTER_TABLE_LISTS] = {
	"SELECT DISTINCT table_name FROM ddb_router.unique_attributes",
	"SELECT table_name FROM ddb_router.reference_tables",
};

/* The lists (char *, in TopMemoryContext), valid until a relcache invalidation. */
static List *lists[ROUTER_TABLE_LISTS];
static bool lists_valid = false;
static bool lists_callback = false;

/* Forgets the lists. */
static void
lists_invalidate(Datum arg, Oid relid)
{
	lists_valid = false;
}

/* Reads every list. */
static void
load_lists(void)
{
	if (!lists_callback)
	{
		CacheRegisterRelcacheCallback(lists_invalidate, (Datum) 0);
		lists_callback = true;
	}
	SPI_connect();
	for (int i = 0; i < ROUTER_TABLE_LISTS; i++)
	{
		MemoryContext old;

		list_free_deep(lists[i]);
		lists[i] = NIL;
		if (SPI_execute(list_queries[i], true, 0) != SPI_OK_SELECT)
			elog(ERROR, "ddb_router: %s failed", list_queries[i]);
		old = MemoryContextSwitchTo(TopMemoryContext);
		for (uint64 r = 0; r < SPI_processed; r++)
			lists[i] = lappend(lists[i], SPI_getvalue(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, 1));
		MemoryContextSwitchTo(old);
	}
	SPI_finish();
	lists_valid = true;
}

/* True when a table is in a list. */
bool
router_table_listed(RouterTableList list, const char *table_name)
{
	ListCell   *lc;

	if (!lists_valid)
		load_lists();
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

	if (!lists_valid)
		load_lists();
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
