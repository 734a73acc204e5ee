/*
 * pool.h — a fixed pool of libpq connections shared by the gateway's
 * request threads, each connected when first needed and again after it
 * broke.
 */
#ifndef DDB_GATEWAY_POOL_H
#define DDB_GATEWAY_POOL_H

#include <libpq-fe.h>

typedef struct ConnPool ConnPool;

/* What the pool is doing now (GET /metrics). */
typedef struct PoolUse
{
	int			size;
	int			in_use;
	int			waiting;
} PoolUse;

/*
 * A pool of size connections to dsn, none open yet; NULL when out of
 * memory.  Each connection, once open, sets ddb.endpoint_address to
 * endpoint_address (DescribeEndpoints' answer).
 */
extern ConnPool *pool_open(const char *dsn, int size, const char *endpoint_address);

/*
 * Takes a connection, waiting while all are in use, and connecting it when
 * it is not; NULL when the database cannot be reached (said on stderr when
 * it could be reached before).
 */
extern PGconn *pool_take(ConnPool *pool);

/* Gives a connection back (closed, to be opened again, when it broke). */
extern void pool_give(ConnPool *pool, PGconn *conn);

/*
 * Runs a statement by name with text parameters, preparing it on the
 * connection the first time.
 */
extern PGresult *pool_exec(PGconn *conn, const char *name, const char *sql, int nparams, const char *const *params);

/* What the pool is doing now. */
extern PoolUse pool_use(ConnPool *pool);

/* Closes every connection. */
extern void pool_close(ConnPool *pool);

#endif
