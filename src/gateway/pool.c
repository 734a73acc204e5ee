/*
 * pool.c — a fixed pool of libpq connections: a stack of idle connections
 * under a mutex, and a condition variable for the threads that wait.
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
	PGconn	  **idle;			/* the connections not in use */
	int			nidle;
	PGconn	  **all;
	int			size;
};

/* Opens size connections to dsn; NULL (with the reason on stderr) when one fails. */
ConnPool *
pool_open(const char *dsn, int size)
{
	ConnPool   *pool = calloc(1, sizeof(ConnPool));

	if (pool == NULL)
		return NULL;
	pool->idle = calloc(size, sizeof(PGconn *));
	pool->all = calloc(size, sizeof(PGconn *));
	if (pool->idle == NULL || pool->all == NULL)
		return NULL;
	pthread_mutex_init(&pool->lock, NULL);
	pthread_cond_init(&pool->available, NULL);
	for (int i = 0; i < size; i++)
	{
		PGconn	   *conn = PQconnectdb(dsn);

		if (PQstatus(conn) != CONNECTION_OK)
		{
			fprintf(stderr, "ddb-gateway: cannot connect: %s", PQerrorMessage(conn));
			PQfinish(conn);
			pool->size = i;
			pool_close(pool);
			return NULL;
		}
		pool->all[i] = conn;
		pool->idle[i] = conn;
	}
	pool->size = size;
	pool->nidle = size;
	return pool;
}

/* Takes a connection, waiting while all are in use. */
PGconn *
pool_take(ConnPool *pool)
{
	PGconn	   *conn;

	pthread_mutex_lock(&pool->lock);
	while (pool->nidle == 0)
		pthread_cond_wait(&pool->available, &pool->lock);
	conn = pool->idle[--pool->nidle];
	pthread_mutex_unlock(&pool->lock);
	return conn;
}

/* Gives a connection back (reset first when it broke). */
void
pool_give(ConnPool *pool, PGconn *conn)
{
	if (PQstatus(conn) != CONNECTION_OK)
		PQreset(conn);
	pthread_mutex_lock(&pool->lock);
	pool->idle[pool->nidle++] = conn;
	pthread_cond_signal(&pool->available);
	pthread_mutex_unlock(&pool->lock);
}

/*
 * Runs a statement by name, preparing it when the connection does not know
 * it (SQLSTATE 26000): the first time, and after PQreset, which forgets
 * prepared statements.  Saves the parse and plan of every request.
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

/* Closes every connection. */
void
pool_close(ConnPool *pool)
{
	for (int i = 0; i < pool->size; i++)
		PQfinish(pool->all[i]);
	free(pool->idle);
	free(pool->all);
	free(pool);
}
