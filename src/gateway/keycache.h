/*
 * keycache.h — the gateway's cache of access keys (secret and role by key
 * id), so that a signed request costs one round trip to PostgreSQL, not
 * two.  ddb.access_keys notifies the channel ddb_access_keys on every
 * change; a listener connection empties the cache when it hears it, and
 * while it is not listening the cache is not used.
 */
#ifndef DDB_GATEWAY_KEYCACHE_H
#define DDB_GATEWAY_KEYCACHE_H

#include <stddef.h>

/* Sizes of what the cache keeps of a key. */
#define KEYCACHE_SECRET_MAX 129
#define KEYCACHE_ROLE_MAX 64

/* Starts the listener thread on its own connection to dsn; 0 on success. */
extern int	keycache_start(const char *dsn);

/* Empties the cache (SIGHUP): every key is read from the database again. */
extern void keycache_flush(void);

/*
 * Looks a key id up: 1 (secret and role copied out) when cached, else 0.
 * *generation receives the cache's generation, to hand to keycache_put.
 */
extern int	keycache_get(const char *key_id, char *secret, char *role, unsigned long *generation);

/*
 * Caches what the database said of a key, unless the cache was emptied
 * since keycache_get gave generation (the key may have changed meanwhile).
 */
extern void keycache_put(const char *key_id, const char *secret, const char *role, unsigned long generation);

#endif
