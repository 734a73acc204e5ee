/*
 * pool.c — a fixed pool of libpq connections: a stack of idle slots under a
 * mutex, and a condition variable for the threads that wait.  A slot holds
 * a connection or NULL: it is connected when taken, so that the gateway can
 * start (and keep running) while the database is down, answering 503 until
 * it is back.
 */
#include "pool.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ConnPool
{
	pthread_mutex_t lock;
	pthread_cond_t available;
	char	   *dsn;
	char	   *endpoint_address;	/* what each connection sets ddb.endpoint_address to */
	PGconn	  **idle;			/* the slots not in use (a NULL slot is not connected) */
	int			nidle;
	PGconn	  **all;			/* every open connection, for pool_close */
	int			size;
	int			waiting;
	int			reachable;		/* the last connection attempt succeeded */
};

/* A pool of size connections to dsn, none open yet; NULL when out of memory. */
ConnPool *
pool_open(const char *dsn, int size, const char *endpoint_address)
{
	ConnPool   *pool = calloc(1, sizeof(ConnPool));

	if (pool == NULL)
		return NULL;
	pool->dsn = strdup(dsn);
	pool->endpoint_address = strdup(endpoint_address);
	pool->idle = calloc(size, sizeof(PGconn *));
	pool->all = calloc(size, sizeof(PGconn *));
	if (pool->dsn == NULL || pool->endpoint_address == NULL || pool->idle == NULL || pool->all == NULL)
		return NULL;
	pthread_mutex_init(&pool->lock, NULL);
	pthread_cond_init(&pool->available, NULL);
	pool->size = size;
	pool->nidle = size;
	pool->reachable = 1;
	return pool;
}

/* Remembers conn as open (or, NULL, old as closed) in the list pool_close walks. */
static void
track(ConnPool *pool, PGconn *old, PGconn *conn)
{
	pthread_mutex_lock(&pool->lock);
	for (int i = 0; i < pool->size; i++)
		if (pool->all[i] == old)
		{
			pool->all[i] = conn;
			break;
		}
	pthread_mutex_unlock(&pool->lock);
}

/* A notice processor that drops notices: the gateway shows no one its connections' notices. */
static void
ignore_notice(void *arg, const char *message)
{
}

/* Sets the session's ddb.endpoint_address: the address DescribeEndpoints answers (docs/gateway.md). */
static void
set_endpoint_address(ConnPool *pool, PGconn *conn)
{
	const char *params[1] = {pool->endpoint_address};

	PQclear(PQexecParams(conn, "SELECT pg_catalog.set_config('ddb.endpoint_address', $1, false)",
						 1, NULL, params, NULL, NULL, 0));
}

/* Takes a connection, connecting its slot when needed; NULL when the database cannot be reached. */
PGconn *
pool_take(ConnPool *pool)
{
	PGconn	   *conn;

	pthread_mutex_lock(&pool->lock);
	pool->waiting++;
	while (pool->nidle == 0)
		pthread_cond_wait(&pool->available, &pool->lock);
	pool->waiting--;
	conn = pool->idle[--pool->nidle];
	pthread_mutex_unlock(&pool->lock);
	if (conn != NULL)
		return conn;
	conn = PQconnectdb(pool->dsn);
	if (PQstatus(conn) != CONNECTION_OK)
	{
		/* said once when the database goes away, not on every request */
		if (__atomic_exchange_n(&pool->reachable, 0, __ATOMIC_RELAXED))
			fprintf(stderr, "ddb-gateway: cannot connect to the database (requests get 503 until it is back): %s",
					PQerrorMessage(conn));
		PQfinish(conn);
		pool_give(pool, NULL);
		return NULL;
	}
	/* a notice has no reader here (PL/Proxy's "dropping stale conn" on a router, say): not stderr's */
	PQsetNoticeProcessor(conn, ignore_notice, NULL);
	set_endpoint_address(pool, conn);
	if (!__atomic_exchange_n(&pool->reachable, 1, __ATOMIC_RELAXED))
		fprintf(stderr, "ddb-gateway: connected to the database again\n");
	track(pool, NULL, conn);
	return conn;
}

/* Gives a connection back: a broken one is closed, and its slot connected again when taken. */
void
pool_give(ConnPool *pool, PGconn *conn)
{
	if (conn != NULL && PQstatus(conn) != CONNECTION_OK)
	{
		track(pool, conn, NULL);
		PQfinish(conn);
		conn = NULL;
	}
	pthread_mutex_lock(&pool->lock);
	pool->idle[pool->nidle++] = conn;
	pthread_cond_signal(&pool->available);
	pthread_mutex_unlock(&pool->lock);
}

/*
 * Runs a statement by name, preparing it when the connection does not know
 * it (SQLSTATE 26000: the first time on a connection).  Saves the parse and
 * plan of every request.
 */
PGresult *
pool_exec(PGconn *conn, const char *name, const char *sql, int nparams, const char *const *params)
{
	PGresult   *res = PQexecPrepared(conn, name, nparams, params, NULL, NULL, 0);
	const char *sqlstate = PQresultErrorField(res, PG_DIAG_SQLSTATE);
	PGresult   *prepared;

	if (sqlstate == NULL || strcmp(sqlstate, "26000") != 0)
		return res;
	PQclear(res);
	prepared = PQprepare(conn, name, sql, nparams, NULL);
	if (PQresultStatus(prepared) != PGRES_COMMAND_OK)
		return prepared;
	PQclear(prepared);
	return PQexecPrepared(conn, name, nparams, params, NULL, NULL, 0);
}

/* What the pool is doing now. */
PoolUse
pool_use(ConnPool *pool)
{
	PoolUse		use;

	pthread_mutex_lock(&pool->lock);
	use.size = pool->size;
	use.in_use = pool->size - pool->nidle;
	use.waiting = pool->waiting;
	pthread_mutex_unlock(&pool->lock);
	return use;
}

/* Closes every connection. */
void
pool_close(ConnPool *pool)
{
	for (int i = 0; i < pool->size; i++)
		if (pool->all[i])
			PQfinish(pool->all[i]);
	free(pool->idle);
	free(pool->all);
	free(pool->dsn);
	free(pool->endpoint_address);
	free(pool);
}
