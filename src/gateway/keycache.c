/*
 * keycache.c — the gateway's cache of access keys (keycache.h).
 *
 * A chained hash table under a mutex, filled by the request threads from
 * what ddb.access_keys answered, and emptied by the listener thread when
 * the channel ddb_access_keys is notified (a trigger on the table notifies
 * it in the transaction that inserts, revokes or deletes a key, so the
 * cache is emptied once that transaction commits).  A generation counter,
 * bumped at each emptying, keeps a lookup that raced with a change from
 * caching what it read before.  While the listener has no connection (at
 * start, or after losing it, until it reconnects) the cache is off: every
 * lookup goes to the database.
 */
#include "keycache.h"

#include <libpq-fe.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "connect.h"
#include "string_hash.h"

#define KEYCACHE_BUCKETS 1024
#define KEYCACHE_MAX_ENTRIES 100000	/* past this the cache is emptied: key ids are the client's to choose */
#define KEYCACHE_CHANNEL "ddb_access_keys"
/* The listening connection's application_name (pg_stat_activity) */
#define KEYCACHE_LISTENER_NAME "ddb-gateway key listener"

typedef struct KeyEntry
{
	struct KeyEntry *next;
	char	   *key_id;
	char		secret[KEYCACHE_SECRET_MAX];
	char		role[KEYCACHE_ROLE_MAX];
} KeyEntry;

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static KeyEntry *buckets[KEYCACHE_BUCKETS];
static int	nentries;
static unsigned long generation;
static int	listening;			/* the cache is in use only while the listener listens */
static char *listener_dsn;

/* The bucket of a key id. */
static unsigned
bucket_of(const char *key_id)
{
	return string_hash(key_id) % KEYCACHE_BUCKETS;
}

/* Empties the cache and starts a new generation; the caller holds cache_lock. */
static void
empty_locked(void)
{
	for (int i = 0; i < KEYCACHE_BUCKETS; i++)
	{
		while (buckets[i])
		{
			KeyEntry   *e = buckets[i];

			buckets[i] = e->next;
			free(e->key_id);
			free(e);
		}
	}
	nentries = 0;
	generation++;
}

/* Sets whether the cache is in use, emptying it either way. */
static void
set_listening(int on)
{
	pthread_mutex_lock(&cache_lock);
	empty_locked();
	listening = on;
	pthread_mutex_unlock(&cache_lock);
}

/*
 * True while the listening connection still reaches the primary: asked
 * when it has been quiet for a while, since a server that hangs (or a
 * machine gone, over a unix socket) would otherwise keep it waiting for
 * notifications forever, and after a failover the other node is primary.
 */
static int
still_primary(PGconn *conn)
{
	PGresult   *res = db_query(conn, "SELECT pg_catalog.pg_is_in_recovery()");
	int			primary = PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1 &&
		strcmp(PQgetvalue(res, 0, 0), "f") == 0;

	PQclear(res);
	return primary;
}

/* How long the listening connection may stay quiet before still_primary asks, in milliseconds. */
#define LISTENER_PROBE_MS 5000

/*
 * The listener thread: listens, empties the cache on each notification,
 * and when the connection is lost or no longer reaches the primary turns
 * the cache off and reconnects (every second at first, backing off to 30).
 */
static void *
listener_main(void *arg)
{
	int			wait_seconds = 1;

	(void) arg;
	for (;;)
	{
		/* named, so that an operator (and the tests) can tell it from the event threads' connections */
		PGconn	   *conn = db_listen(listener_dsn, "SET application_name = '" KEYCACHE_LISTENER_NAME "'; LISTEN " KEYCACHE_CHANNEL,
									 "key cache off", "listen");

		if (conn == NULL)
		{
			sleep(wait_seconds);
			wait_seconds = wait_seconds < 30 ? wait_seconds * 2 : 30;
			continue;
		}
		wait_seconds = 1;
		/* listening from here on: what was cached before may be stale */
		set_listening(1);
		for (;;)
		{
			struct pollfd pfd = {PQsocket(conn), POLLIN, 0};
			PGnotify   *notify;
			int			heard = 0;
			int			ready = poll(&pfd, 1, LISTENER_PROBE_MS);

			if (ready < 0)
				continue;
			if (ready == 0 ? !still_primary(conn) : !PQconsumeInput(conn))
				break;
			while ((notify = PQnotifies(conn)) != NULL)
			{
				heard = 1;
				PQfreemem(notify);
			}
			if (heard)
				set_listening(1);
		}
		fprintf(stderr, "ddb-gateway: key cache off, lost the listening connection: %s",
				PQstatus(conn) == CONNECTION_OK ? "it no longer reaches the primary\n" : PQerrorMessage(conn));
		set_listening(0);
		PQfinish(conn);
	}
	return NULL;
}

/* Starts the listener thread on its own connection to dsn; 0 on success. */
int
keycache_start(const char *dsn)
{
	pthread_t	thread;

	listener_dsn = strdup(dsn);
	if (listener_dsn == NULL || pthread_create(&thread, NULL, listener_main, NULL) != 0)
		return -1;
	pthread_detach(thread);
	return 0;
}

/* Empties the cache (SIGHUP): every key is read from the database again. */
void
keycache_flush(void)
{
	pthread_mutex_lock(&cache_lock);
	empty_locked();
	pthread_mutex_unlock(&cache_lock);
}

/* Looks a key id up: 1 when cached (secret and role copied out), else 0; *gen gets the generation. */
int
keycache_get(const char *key_id, char *secret, char *role, unsigned long *gen)
{
	int			found = 0;

	pthread_mutex_lock(&cache_lock);
	*gen = generation;
	if (listening)
	{
		for (KeyEntry *e = buckets[bucket_of(key_id)]; e; e = e->next)
		{
			if (strcmp(e->key_id, key_id) == 0)
			{
				memcpy(secret, e->secret, KEYCACHE_SECRET_MAX);
				memcpy(role, e->role, KEYCACHE_ROLE_MAX);
				found = 1;
				break;
			}
		}
	}
	pthread_mutex_unlock(&cache_lock);
	return found;
}

/* Caches a key the database answered, unless the cache changed since generation gen. */
void
keycache_put(const char *key_id, const char *secret, const char *role, unsigned long gen)
{
	KeyEntry   *e;
	unsigned	b;

	if (strlen(secret) >= KEYCACHE_SECRET_MAX || strlen(role) >= KEYCACHE_ROLE_MAX)
		return;
	e = calloc(1, sizeof(KeyEntry));
	if (e == NULL || (e->key_id = strdup(key_id)) == NULL)
	{
		free(e);
		return;
	}
	strcpy(e->secret, secret);
	strcpy(e->role, role);
	b = bucket_of(key_id);
	pthread_mutex_lock(&cache_lock);
	if (listening && gen == generation)
	{
		for (KeyEntry *old = buckets[b]; old; old = old->next)
		{
			if (strcmp(old->key_id, key_id) == 0)
			{
				/* another thread cached it meanwhile */
				pthread_mutex_unlock(&cache_lock);
				free(e->key_id);
				free(e);
				return;
			}
		}
		if (nentries >= KEYCACHE_MAX_ENTRIES)
			empty_locked();
		e->next = buckets[b];
		buckets[b] = e;
		nentries++;
		e = NULL;
	}
	pthread_mutex_unlock(&cache_lock);
	if (e)
	{
		free(e->key_id);
		free(e);
	}
}
