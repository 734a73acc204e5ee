/*
 * router_cache.c — the caches of what a backend read from the router's own
 * tables (router.h: placements.c, table_lists.c): each in a memory context
 * of its own, a child of CacheMemoryContext emptied when it is read again,
 * and forgotten only when its own table changed (the relcache invalidation
 * of that table's OID, looked up at each read: a table dropped with the
 * extension sends its own, and the next read finds the new one) or, for
 * the cache of the tables' unique indexes, when an index came or went
 * (pg_index's syscache).
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/syscache.h"

#include "router.h"

/* Forgets a cache: it is read again when next used. */
static void
forget(RouterCache *cache)
{
	cache->valid = false;
	cache->invalidations++;
}

/* A relcache invalidation: forgets a cache of the table it is about (of every table: InvalidOid). */
static void
table_changed(Datum arg, Oid relid)
{
	RouterCache *cache = (RouterCache *) DatumGetPointer(arg);

	if (!OidIsValid(relid) || relid == cache->relid)
		forget(cache);
}

/* A change of pg_index (an index made or dropped): forgets a cache of the tables' indexes. */
static void
index_changed(Datum arg, int cacheid, uint32 hashvalue)
{
	forget((RouterCache *) DatumGetPointer(arg));
}

/* Empties a cache to read it again; see router.h. */
MemoryContext
router_cache_begin_read(RouterCache *cache)
{
	if (cache->context == NULL)
	{
		cache->context = AllocSetContextCreate(CacheMemoryContext, "ddb_router cache", ALLOCSET_SMALL_SIZES);
		MemoryContextSetIdentifier(cache->context, cache->name);
		if (cache->table)
			CacheRegisterRelcacheCallback(table_changed, PointerGetDatum(cache));
		else
			CacheRegisterSyscacheCallback(INDEXRELID, index_changed, PointerGetDatum(cache));
	}
	MemoryContextReset(cache->context);
	cache->valid = false;
	if (cache->table)
	{
		Oid			schema = get_namespace_oid("ddb_router", true);

		cache->relid = OidIsValid(schema) ? get_relname_relid(cache->table, schema) : InvalidOid;
	}
	cache->invalidations_at_read = cache->invalidations;
	return cache->context;
}

/* Marks a cache read; see router.h. */
void
router_cache_end_read(RouterCache *cache)
{
	cache->valid = cache->invalidations == cache->invalidations_at_read;
}
