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
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "../ddb_errors.h"
#include "table_access.h"
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
static uint64 invalidation_count = 0;	/* bumped by every relcache callback */
static const char *restoring_table = NULL;	/* the table this backend restores (table_def_set_restoring) */

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

/*
 * Relcache callback: marks the definitions that use relid stale and takes
 * them out of the cache (retired, freed at transaction end), so that the
 * definitions and kept plans of dropped tables do not pile up in a backend:
 * every later invalidation would walk them, and PostgreSQL's plan cache their
 * plans.
 */
static void
table_cache_invalidate(Datum arg, Oid relid)
{
	HASH_SEQ_STATUS status;
	TableCacheEntry *entry;

	invalidation_count++;
	hash_seq_init(&status, table_cache);
	while ((entry = hash_seq_search(&status)) != NULL)
		if (relid == InvalidOid || def_uses_relation(entry->def, relid))
		{
			MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

			entry->def->valid = false;
			retired_defs = lappend(retired_defs, entry->def);
			MemoryContextSwitchTo(old);
			/* (dynahash allows removing the entry a scan is on) */
			hash_search(table_cache, entry->name, HASH_REMOVE, NULL);
		}
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

/*
 * Raises DDB_ERROR_RESOURCE_NOT_FOUND for a table an item operation
 * names: DynamoDB's message does not name the table (DescribeTable's and
 * DeleteTable's do), so the HINT does.
 */
static pg_attribute_noreturn() void
table_def_report_missing(const char *table_name)
{
	ereport(ERROR,
			(errcode(ERRCODE_DDB_RESOURCE_NOT_FOUND),
			 errmsg("Requested resource not found"),
			 errhint("There is no DynamoDB table %s (SELECT table_name FROM ddb.tables lists them).", table_name)));
}

/* Raises DDB_ERROR_RESOURCE_NOT_FOUND for an item operation on a table being restored, as DynamoDB does. */
static pg_attribute_noreturn() void
table_def_report_creating(const char *table_name)
{
	ereport(ERROR,
			(errcode(ERRCODE_DDB_RESOURCE_NOT_FOUND),
			 errmsg("Requested resource not found"),
			 errhint("Table %s is being restored (CREATING); it takes requests once DescribeTable says ACTIVE.",
					 table_name)));
}

/* Column n (1-based) of SPI row r as a string copied into cxt, or NULL. */
static char *
spi_string(int r, int n, MemoryContext cxt)
{
	char	   *v = SPI_getvalue(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, n);

	return v ? MemoryContextStrdup(cxt, v) : NULL;
}

/* The type letter of a key attribute (column n of row r); raises if the catalog lacks it. */
static char
spi_key_type(int r, int n, MemoryContext cxt)
{
	char	   *type = spi_string(r, n, cxt);

	if (type == NULL || strlen(type) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("ddb.tables.attribute_types lacks the type of a key attribute"),
				 errhint("Each key attribute of the table and its indexes needs \"S\", \"N\" or \"B\" there.")));
	return type[0];
}

/*
 * The SQL of the attributes of one side of an index's key, in order: their
 * names joined with chr(1), which no name contains, and their types'
 * letters.  extra is the column of the attributes after the first: a
 * database still at 0.1 (its .so already updated) has none, and NULL stands in.
 */
static char *
key_attributes_sql(const char *side, const char *extra)
{
	return psprintf("pg_catalog.array_to_string(ARRAY[i.%s_key] OPERATOR(pg_catalog.||) %s, pg_catalog.chr(1)), "
					"(SELECT pg_catalog.string_agg(t.attribute_types OPERATOR(pg_catalog.->>) k, '' ORDER BY o) "
					"FROM pg_catalog.unnest(ARRAY[i.%s_key] OPERATOR(pg_catalog.||) %s) WITH ORDINALITY u(k, o))",
					side, extra, side, extra);
}

/* True when ddb.indexes has a column (the catalog of an older version may lack it). */
static bool
indexes_have_column(const char *column)
{
	Oid			relid = get_relname_relid("indexes", get_namespace_oid("ddb", false));

	return OidIsValid(relid) && get_attnum(relid, column) != InvalidAttrNumber;
}

/* True when the catalog has a relation ddb.<name> (that of an older version may lack it). */
static bool
catalog_has_relation(const char *name)
{
	return OidIsValid(get_relname_relid(name, get_namespace_oid("ddb", false)));
}

/* Fills the attribute arrays of a key schema of at most one attribute per side. */
static void
key_schema_single(KeySchema *keys)
{
	keys->nhash = 1;
	keys->hash_keys[0] = keys->hash_key;
	keys->hash_types[0] = keys->hash_type;
	keys->nrange = keys->range_key ? 1 : 0;
	keys->range_keys[0] = keys->range_key;
	keys->range_types[0] = keys->range_type;
}

/* Reads the attributes of one side of an index key (columns n and n + 1 of row r). */
static void
key_schema_attributes(int r, int n, char **names, char *types, int *count, MemoryContext cxt)
{
	char	   *joined = spi_string(r, n, cxt);
	char	   *letters = spi_string(r, n + 1, cxt);
	int			k = 0;

	for (char *tok = joined ? strtok(joined, "\1") : NULL; tok; tok = strtok(NULL, "\1"))
	{
		if (k >= KEY_SCHEMA_MAX_ATTRIBUTES || letters == NULL || (int) strlen(letters) <= k)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("ddb.indexes names more than four attributes of a key side, or one without a type"),
					 errhint("Each key attribute of an index needs \"S\", \"N\" or \"B\" in ddb.tables.attribute_types.")));
		names[k] = tok;
		types[k] = letters[k];
		k++;
	}
	*count = k;
}

/*
 * Runs a catalog query under the latest snapshot: the caller's snapshot may
 * predate a committed create_index or update_time_to_live that the lock it
 * just took made visible.
 */
static void
catalog_query(const char *sql, Datum *args)
{
	Oid			argtypes[1] = {TEXTOID};
	SPIPlanPtr	plan = SPI_prepare(sql, 1, argtypes);

	if (plan == NULL ||
		SPI_execute_snapshot(plan, args, NULL, GetLatestSnapshot(), InvalidSnapshot,
							 true, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "ddb_model: could not read the catalog");
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
	Datum		args[1] = {CStringGetTextDatum(table_name)};
	MemoryContext caller = CurrentMemoryContext;
	MemoryContext cxt;
	TableDef   *def;
	bool		multi;
	bool		capacity;

	SPI_connect();
	catalog_query(psprintf("SELECT schema_name, relation_name, hash_key, range_key, "
						   "attribute_types OPERATOR(pg_catalog.->>) hash_key, "
						   "attribute_types OPERATOR(pg_catalog.->>) range_key, partitions, ttl_attribute, "
						   "stream_view_type, stream_label, "
						   "CASE WHEN billing_mode OPERATOR(pg_catalog.=) 'PROVISIONED' THEN read_capacity ELSE 0 END, "
						   "CASE WHEN billing_mode OPERATOR(pg_catalog.=) 'PROVISIONED' THEN write_capacity ELSE 0 END, %s "
						   "FROM ddb.tables WHERE table_name OPERATOR(pg_catalog.=) $1",
						   catalog_has_relation("table_restores") ?
						   "EXISTS (SELECT FROM ddb.table_restores r WHERE r.table_name OPERATOR(pg_catalog.=) $1 "
						   "AND r.in_progress)::pg_catalog.text" : "'false'"), args);
	if (SPI_processed == 0)
	{
		SPI_finish();
		return NULL;
	}
	/* under the caller's context until complete, so that an error leaks nothing */
	cxt = AllocSetContextCreate(caller, "ddb_model table definition", ALLOCSET_SMALL_SIZES);
	def = MemoryContextAllocZero(cxt, sizeof(TableDef));
	def->cxt = cxt;
	def->valid = true;
	def->name = MemoryContextStrdup(cxt, table_name);
	def->schema_name = spi_string(0, 1, cxt);
	def->relation_name = spi_string(0, 2, cxt);
	def->keys.hash_key = spi_string(0, 3, cxt);
	def->keys.range_key = spi_string(0, 4, cxt);
	def->keys.hash_type = spi_key_type(0, 5, cxt);
	def->keys.range_type = def->keys.range_key ? spi_key_type(0, 6, cxt) : 0;
	key_schema_single(&def->keys);
	def->partitions = atoi(spi_string(0, 7, cxt));
	def->ttl_attribute = spi_string(0, 8, cxt);
	def->stream_view_type = spi_string(0, 9, cxt);
	def->stream_label = spi_string(0, 10, cxt);
	def->read_capacity = atoi(spi_string(0, 11, cxt));
	def->write_capacity = atoi(spi_string(0, 12, cxt));
	def->creating = strcmp(spi_string(0, 13, cxt), "true") == 0;
	def->relid = relation_oid(def->schema_name, def->relation_name);

	multi = indexes_have_column("extra_hash_keys");
	/* (a global index's own throughput is 0.2's; an on-demand table's indexes have 0) */
	capacity = indexes_have_column("read_capacity") && def->read_capacity > 0;
	catalog_query(psprintf("SELECT i.index_name, i.relation_name, i.hash_key, i.range_key, "
						   "t.attribute_types OPERATOR(pg_catalog.->>) i.hash_key, "
						   "t.attribute_types OPERATOR(pg_catalog.->>) i.range_key, "
						   "i.projection_type, pg_catalog.array_to_string(i.non_key_attributes, pg_catalog.chr(1)), "
						   "i.local::pg_catalog.text, %s, %s, %s "
						   "FROM ddb.indexes i JOIN ddb.tables t USING (table_name) "
						   "WHERE i.table_name OPERATOR(pg_catalog.=) $1 ORDER BY i.index_name",
						   key_attributes_sql("hash", multi ? "i.extra_hash_keys" : "NULL::pg_catalog.text[]"),
						   key_attributes_sql("range", multi ? "i.extra_range_keys" : "NULL::pg_catalog.text[]"),
						   capacity ? "i.read_capacity, i.write_capacity" : "0, 0"),
				  args);
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
		index->keys.hash_type = spi_key_type(r, 5, cxt);
		index->keys.range_type = index->keys.range_key ? spi_key_type(r, 6, cxt) : 0;
		key_schema_single(&index->keys);
		key_schema_attributes(r, 10, index->keys.hash_keys, index->keys.hash_types, &index->keys.nhash, cxt);
		key_schema_attributes(r, 12, index->keys.range_keys, index->keys.range_types, &index->keys.nrange, cxt);
		index->projection = strcmp(projection, "ALL") == 0 ? PROJECT_ALL :
			strcmp(projection, "INCLUDE") == 0 ? PROJECT_INCLUDE : PROJECT_KEYS_ONLY;
		index->relid = relation_oid(def->schema_name, index->relation_name);
		index->local = strcmp(spi_string(r, 9, cxt), "true") == 0;
		index->read_capacity = atoi(spi_string(r, 14, cxt));
		index->write_capacity = atoi(spi_string(r, 15, cxt));
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
	MemoryContextSetParent(cxt, CacheMemoryContext);
	return def;
}

/* The definition of a table by its DynamoDB name, from the cache or the catalog; NULL when missing_ok and there is none. */
static TableDef *
cached_def(const char *table_name, bool missing_ok)
{
	TableCacheEntry *entry;
	bool		found;
	TableDef   *def;
	uint64		before;

	if (strlen(table_name) >= TABLE_NAME_MAX)
	{
		if (missing_ok)
			return NULL;
		table_def_report_missing(table_name);
	}
	if (table_cache == NULL)
		table_cache_init();
	entry = hash_search(table_cache, table_name, HASH_FIND, NULL);
	if (entry && entry->def->valid)
		return entry->def;

	before = invalidation_count;
	def = load_def(table_name);
	if (def == NULL && missing_ok)
		return NULL;
	if (def == NULL)
		table_def_report_missing(table_name);
	/* an invalidation that arrived while loading may concern what was read */
	if (invalidation_count != before)
		def->valid = false;
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

/*
 * The definition of a table by its DynamoDB name, its base relation locked
 * (AccessShareLock, until the transaction ends).  Taking the lock accepts
 * the invalidations that arrived meanwhile: a DeleteTable committed since
 * the lookup makes the definition stale, and the lookup is made again
 * (ResourceNotFoundException, rather than a plan on a dropped relation).
 */
TableDef *
table_def_get_any(const char *table_name)
{
	for (;;)
	{
		TableDef   *def = cached_def(table_name, false);

		LockRelationOid(def->relid, AccessShareLock);
		if (def->valid)
			return def;
	}
}

/* table_def_get_any, refusing a table being restored but by its restore; see table_def.h. */
TableDef *
table_def_get(const char *table_name)
{
	TableDef   *def = table_def_get_any(table_name);

	if (def->creating && (restoring_table == NULL || strcmp(restoring_table, table_name) != 0))
		table_def_report_creating(table_name);
	return def;
}

/* Names the table this backend restores; see table_def.h. */
const char *
table_def_set_restoring(const char *table_name)
{
	const char *previous = restoring_table;

	restoring_table = table_name;
	return previous;
}

/* table_def_get, or NULL when there is no such table. */
TableDef *
table_def_find(const char *table_name)
{
	for (;;)
	{
		TableDef   *def = cached_def(table_name, true);

		if (def == NULL)
			return NULL;
		LockRelationOid(def->relid, AccessShareLock);
		if (def->valid)
			return def;
	}
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

/* The base relation of a DynamoDB table, or InvalidOid when it is gone. */
static Oid
base_relation(const char *table_name)
{
	Datum		args[1] = {CStringGetTextDatum(table_name)};
	Oid			relid = InvalidOid;

	SPI_connect();
	catalog_query("SELECT schema_name, relation_name FROM ddb.tables "
				  "WHERE table_name OPERATOR(pg_catalog.=) $1", args);
	if (SPI_processed > 0)
	{
		char	   *schema = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
		char	   *relation = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2);
		Oid			nsp = get_namespace_oid(schema, true);

		relid = OidIsValid(nsp) ? get_relname_relid(relation, nsp) : InvalidOid;
	}
	SPI_finish();
	return relid;
}

/* The base relation a row of ddb.tables or ddb.indexes is about. */
static Oid
row_relation(Relation catalog, HeapTuple row)
{
	TupleDesc	desc = RelationGetDescr(catalog);
	char	   *table_name = SPI_getvalue(row, desc, SPI_fnumber(desc, "table_name"));
	int			schema_col = SPI_fnumber(desc, "schema_name");
	Oid			nsp;

	/* a ddb.indexes row names its table; the table's row is looked up */
	if (schema_col <= 0)
		return base_relation(table_name);
	nsp = get_namespace_oid(SPI_getvalue(row, desc, schema_col), true);
	return OidIsValid(nsp) ?
		get_relname_relid(SPI_getvalue(row, desc, SPI_fnumber(desc, "relation_name")), nsp) : InvalidOid;
}

/*
 * Trigger on ddb.tables, ddb.indexes and ddb.table_restores: every backend reloads the
 * definition of the table a changed row is about (all of them on TRUNCATE).
 */
Datum
ddb_catalog_changed(PG_FUNCTION_ARGS)
{
	TriggerData *td = (TriggerData *) fcinfo->context;

	if (!CALLED_AS_TRIGGER(fcinfo))
		elog(ERROR, "ddb_model: ddb.catalog_changed must be called as a trigger");
	/* its rows are read by column name: on any other relation it could read what is not there */
	if (RelationGetRelid(td->tg_relation) != ddb_relation_oid("tables") &&
		RelationGetRelid(td->tg_relation) != ddb_relation_oid("indexes") &&
		RelationGetRelid(td->tg_relation) != ddb_relation_oid("table_restores"))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("ddb.catalog_changed runs only on the catalog (ddb.tables, ddb.indexes, ddb.table_restores), not on \"%s\"",
						RelationGetRelationName(td->tg_relation))));
	if (TRIGGER_FIRED_BY_TRUNCATE(td->tg_event))
		CacheInvalidateRelcacheAll();
	else
	{
		HeapTuple	rows[2] = {td->tg_trigtuple,
		TRIGGER_FIRED_BY_UPDATE(td->tg_event) ? td->tg_newtuple : NULL};

		for (int i = 0; i < 2; i++)
		{
			Oid			relid = rows[i] ? row_relation(td->tg_relation, rows[i]) : InvalidOid;

			if (OidIsValid(relid))
				CacheInvalidateRelcacheByRelid(relid);
		}
	}
	PG_RETURN_POINTER(NULL);
}
