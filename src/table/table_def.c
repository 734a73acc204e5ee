/*
 * table_def.c — loads table definitions from ddb.tables and ddb.indexes and
 * caches them per backend.
 *
 * A relcache invalidation of a cached table's relations, or of everything
 * (which the catalog tables' trigger ddb.catalog_changed sends), marks its
 * definition stale; the next lookup reloads it.  A stale definition may
 * still be in use further up the stack, so it is freed only when the
 * transaction ends.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "../ddb_errors.h"
#include "table_def.h"

PG_FUNCTION_INFO_V1(ddb_catalog_changed);

#define TABLE_NAME_MAX 256

typedef struct TableCacheEntry
{
	char		name[TABLE_NAME_MAX];
	TableDef   *def;
} TableCacheEntry;

static HTAB *table_cache = NULL;
static List *retired_defs = NIL;	/* stale definitions, freed at transaction end */

/* Frees kept plans. */
static void
free_plans(SPIPlanPtr *plans)
{
	for (int i = 0; i < TABLE_MAX_PLANS; i++)
		if (plans[i])
			SPI_freeplan(plans[i]);
}

/* Frees a definition and its kept plans. */
static void
free_def(TableDef *def)
{
	free_plans(def->plans);
	for (int i = 0; i < def->nindexes; i++)
		free_plans(def->indexes[i].plans);
	MemoryContextDelete(def->cxt);
}

/* Frees the stale definitions once no statement can be using them. */
static void
table_cache_xact_callback(XactEvent event, void *arg)
{
	if (event != XACT_EVENT_COMMIT && event != XACT_EVENT_ABORT &&
		event != XACT_EVENT_PARALLEL_COMMIT && event != XACT_EVENT_PARALLEL_ABORT)
		return;
	while (retired_defs != NIL)
	{
		TableDef   *def = (TableDef *) linitial(retired_defs);

		retired_defs = list_delete_first(retired_defs);
		free_def(def);
	}
}

/* True when relid is one of the definition's relations. */
static bool
def_uses_relation(TableDef *def, Oid relid)
{
	if (def->relid == relid)
		return true;
	for (int i = 0; i < def->nindexes; i++)
		if (def->indexes[i].relid == relid)
			return true;
	return false;
}

/* Relcache callback: marks the definitions that use relid stale. */
static void
table_cache_invalidate(Datum arg, Oid relid)
{
	HASH_SEQ_STATUS status;
	TableCacheEntry *entry;

	hash_seq_init(&status, table_cache);
	while ((entry = hash_seq_search(&status)) != NULL)
		if (entry->def->valid && (relid == InvalidOid || def_uses_relation(entry->def, relid)))
			entry->def->valid = false;
}

/* Creates the cache and registers its callbacks, once per backend. */
static void
table_cache_init(void)
{
	HASHCTL		ctl;

	ctl.keysize = TABLE_NAME_MAX;
	ctl.entrysize = sizeof(TableCacheEntry);
	ctl.hcxt = CacheMemoryContext;
	table_cache = hash_create("ddb_model table definitions", 32, &ctl,
							  HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);
	CacheRegisterRelcacheCallback(table_cache_invalidate, (Datum) 0);
	RegisterXactCallback(table_cache_xact_callback, NULL);
}

/* Raises DynamoDB's ResourceNotFoundException for a table. */
void
table_def_report_missing(const char *table_name)
{
	ereport(ERROR,
			(errcode(ERRCODE_DDB_RESOURCE_NOT_FOUND),
			 errmsg("Requested resource not found: Table: %s not found", table_name)));
}

/* Column n (1-based) of SPI row r as a string copied into cxt, or NULL. */
static char *
spi_string(int r, int n, MemoryContext cxt)
{
	char	   *v = SPI_getvalue(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, n);

	return v ? MemoryContextStrdup(cxt, v) : NULL;
}

/* The OID of schema.relation, or an error if the catalog points nowhere. */
static Oid
relation_oid(const char *schema, const char *relation)
{
	Oid			relid = get_relname_relid(relation, get_namespace_oid(schema, false));

	if (!OidIsValid(relid))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation %s.%s of a DynamoDB table is missing", schema, relation),
				 errhint("Recreate the table, or remove its row from ddb.tables.")));
	return relid;
}

/* Loads a definition from the catalog, or returns NULL when there is none. */
static TableDef *
load_def(const char *table_name)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		args[1] = {CStringGetTextDatum(table_name)};
	MemoryContext cxt;
	TableDef   *def;

	SPI_connect();
	SPI_execute_with_args("SELECT schema_name, relation_name, hash_key, range_key, "
						  "attribute_types->>hash_key, attribute_types->>range_key, partitions, ttl_attribute "
						  "FROM ddb.tables WHERE table_name = $1",
						  1, argtypes, args, NULL, true, 1);
	if (SPI_processed == 0)
	{
		SPI_finish();
		return NULL;
	}
	cxt = AllocSetContextCreate(CacheMemoryContext, "ddb_model table definition",
								ALLOCSET_SMALL_SIZES);
	def = MemoryContextAllocZero(cxt, sizeof(TableDef));
	def->cxt = cxt;
	def->valid = true;
	def->name = MemoryContextStrdup(cxt, table_name);
	def->schema_name = spi_string(0, 1, cxt);
	def->relation_name = spi_string(0, 2, cxt);
	def->keys.hash_key = spi_string(0, 3, cxt);
	def->keys.range_key = spi_string(0, 4, cxt);
	def->keys.hash_type = spi_string(0, 5, cxt)[0];
	def->keys.range_type = def->keys.range_key ? spi_string(0, 6, cxt)[0] : 0;
	def->partitions = atoi(spi_string(0, 7, cxt));
	def->ttl_attribute = spi_string(0, 8, cxt);
	def->relid = relation_oid(def->schema_name, def->relation_name);

	SPI_execute_with_args("SELECT i.index_name, i.relation_name, i.hash_key, i.range_key, "
						  "t.attribute_types->>i.hash_key, t.attribute_types->>i.range_key, "
						  "i.projection_type, array_to_string(i.non_key_attributes, chr(1)) "
						  "FROM ddb.indexes i JOIN ddb.tables t USING (table_name) "
						  "WHERE i.table_name = $1 ORDER BY i.index_name",
						  1, argtypes, args, NULL, true, 0);
	def->nindexes = (int) SPI_processed;
	def->indexes = MemoryContextAllocZero(cxt, sizeof(IndexDef) * Max(1, def->nindexes));
	for (int r = 0; r < def->nindexes; r++)
	{
		IndexDef   *index = &def->indexes[r];
		char	   *projection = spi_string(r, 7, cxt);
		char	   *include = spi_string(r, 8, cxt);

		index->name = spi_string(r, 1, cxt);
		index->relation_name = spi_string(r, 2, cxt);
		index->keys.hash_key = spi_string(r, 3, cxt);
		index->keys.range_key = spi_string(r, 4, cxt);
		index->keys.hash_type = spi_string(r, 5, cxt)[0];
		index->keys.range_type = index->keys.range_key ? spi_string(r, 6, cxt)[0] : 0;
		index->projection = strcmp(projection, "ALL") == 0 ? PROJECT_ALL :
			strcmp(projection, "INCLUDE") == 0 ? PROJECT_INCLUDE : PROJECT_KEYS_ONLY;
		index->relid = relation_oid(def->schema_name, index->relation_name);
		if (include && include[0])
		{
			/* the names were joined with chr(1), which no name contains */
			int			n = 1;

			for (char *p = include; *p; p++)
				n += (*p == '\1');
			index->include = MemoryContextAlloc(cxt, sizeof(char *) * n);
			index->n_include = 0;
			for (char *tok = strtok(include, "\1"); tok; tok = strtok(NULL, "\1"))
				index->include[index->n_include++] = tok;
		}
	}
	SPI_finish();
	return def;
}

/* The definition of a table by its DynamoDB name. */
TableDef *
table_def_get(const char *table_name)
{
	TableCacheEntry *entry;
	bool		found;
	TableDef   *def;

	if (strlen(table_name) >= TABLE_NAME_MAX)
		table_def_report_missing(table_name);
	if (table_cache == NULL)
		table_cache_init();
	entry = hash_search(table_cache, table_name, HASH_FIND, NULL);
	if (entry && entry->def->valid)
		return entry->def;

	def = load_def(table_name);
	if (def == NULL)
		table_def_report_missing(table_name);
	entry = hash_search(table_cache, table_name, HASH_ENTER, &found);
	if (found)
	{
		MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

		retired_defs = lappend(retired_defs, entry->def);
		MemoryContextSwitchTo(old);
	}
	entry->def = def;
	return def;
}

/* The index of a table by name. */
IndexDef *
table_def_index(TableDef *def, const char *index_name)
{
	for (int i = 0; i < def->nindexes; i++)
		if (strcmp(def->indexes[i].name, index_name) == 0)
			return &def->indexes[i];
	ereport(ERROR,
			(errcode(ERRCODE_DDB_VALIDATION),
			 errmsg("The table does not have the specified index: %s", index_name)));
	return NULL;
}

/* Statement trigger on ddb.tables and ddb.indexes: every backend reloads. */
Datum
ddb_catalog_changed(PG_FUNCTION_ARGS)
{
	if (!CALLED_AS_TRIGGER(fcinfo))
		elog(ERROR, "ddb.catalog_changed must be called as a trigger");
	CacheInvalidateRelcacheAll();
	PG_RETURN_POINTER(NULL);
}
