/*
 * placements.c — partition keys placed on the node of another: a model
 * whose node-side trigger writes, with an item of one partition key, an
 * item of another (underwriting's W17: every change of a RULEBOOK item
 * writes a RULEBOOKCONFIGUPDATE audit item in the same transaction) keeps
 * both on one node when the second routes as the first
 * (ddb_router.placements).  Cached per backend until the placements
 * change (their trigger sends a relcache invalidation of the table: the
 * cache listens to that table's alone, router_cache.c).
 */
#include "postgres.h"

#include "commands/trigger.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/rel.h"

#include "../key/key_codec.h"
#include "model_imports.h"
#include "router.h"

PG_FUNCTION_INFO_V1(ddb_router_tables_changed);
PG_FUNCTION_INFO_V1(ddb_router_route_hash);

/* A placement: items of the tables matching pattern whose partition key is key route as placed_with. */
typedef struct Placement
{
	char	   *pattern;		/* a table name, * for any characters */
	uint8_t	   *key;			/* encoded S keys */
	size_t		key_len;
	uint32		hash;			/* the routing hash of placed_with */
} Placement;

/* The placements (in the cache's memory context), valid until ddb_router.placements changes. */
static RouterCache placements_cache = {.name = "ddb_router placements", .table = "placements"};
static List *placements = NIL;

/* Reads ddb_router.placements. */
static void
load_placements(void)
{
	MemoryContext cxt = router_cache_begin_read(&placements_cache);

	placements = NIL;
	SPI_connect();
	if (SPI_execute("SELECT table_pattern, partition_key, placed_with FROM ddb_router.placements", true, 0) != SPI_OK_SELECT)
		elog(ERROR, "ddb_router: reading ddb_router.placements failed");
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		HeapTuple	row = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		char	   *pattern = SPI_getvalue(row, desc, 1);
		char	   *key = SPI_getvalue(row, desc, 2);
		char	   *with = SPI_getvalue(row, desc, 3);
		uint8_t		key_enc[KEY_MAX_ENCODED];
		uint8_t		with_enc[KEY_MAX_ENCODED];
		size_t		key_len;
		size_t		with_len;
		Placement  *p;
		MemoryContext old;

		if (key_encode_string(key, strlen(key), key_enc, &key_len) != KEY_OK ||
			key_encode_string(with, strlen(with), with_enc, &with_len) != KEY_OK)
			continue;			/* the table's CHECK keeps them valid S keys */
		old = MemoryContextSwitchTo(cxt);
		p = palloc(sizeof(Placement));
		p->pattern = pstrdup(pattern);
		p->key = memcpy(palloc(key_len), key_enc, key_len);
		p->key_len = key_len;
		p->hash = ddb_model.ddb_key_route_hash_encoded(with_enc, with_len);
		placements = lappend(placements, p);
		MemoryContextSwitchTo(old);
	}
	SPI_finish();
	router_cache_end_read(&placements_cache);
}

/* True when a table name matches a pattern in which * stands for any characters. */
static bool
pattern_matches(const char *pattern, const char *name)
{
	if (*pattern == '\0')
		return *name == '\0';
	if (*pattern == '*')
		return pattern_matches(pattern + 1, name) || (*name != '\0' && pattern_matches(pattern, name + 1));
	return *pattern == *name && pattern_matches(pattern + 1, name + 1);
}

/* The routing hash of a table's encoded partition key: its own, or that of the key it is placed with. */
uint32
router_route_hash(const char *table_name, const uint8_t *enc, size_t len)
{
	ListCell   *lc;

	if (!placements_cache.valid)
		load_placements();
	foreach(lc, placements)
	{
		Placement  *p = lfirst(lc);

		if (p->key_len == len && memcmp(p->key, enc, len) == 0 && pattern_matches(p->pattern, table_name))
			return p->hash;
	}
	return ddb_model.ddb_key_route_hash_encoded(enc, len);
}

/* The trigger on ddb_router.placements and reference_tables: every backend's caches are read again once the change commits. */
Datum
ddb_router_tables_changed(PG_FUNCTION_ARGS)
{
	TriggerData *trigger = (TriggerData *) fcinfo->context;

	if (!CALLED_AS_TRIGGER(fcinfo))
		elog(ERROR, "ddb_router: tables_changed must be called as a trigger");
	CacheInvalidateRelcacheByRelid(RelationGetRelid(trigger->tg_relation));
	return PointerGetDatum(NULL);
}

/* ddb_router.route_hash(table_name, key): router_route_hash for SQL (a key's node, placements included). */
Datum
ddb_router_route_hash(PG_FUNCTION_ARGS)
{
	char	   *table_name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	struct varlena *key = PG_GETARG_DDB_KEY_PP(1);

	PG_RETURN_INT32((int32) router_route_hash(table_name, DDB_KEY_DATA(key), DDB_KEY_LEN(key)));
}
