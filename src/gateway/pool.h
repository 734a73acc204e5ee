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
 * Sets the longest one attempt to connect takes, over all the hosts of a
 * dsn, and the longest one statement's round trip takes (after which its
 * connection is broken off and counts as failed), in seconds; called
 * before any connection is made.
 */
extern void pool_set_timeouts(int connect_seconds, int request_seconds);

/*
 * Connects to dsn within the connect timeout (and with TCP keepalives that
 * find out a server gone within it), what the dsn sets winning; every
 * connection of the gateway is made so.
 */
extern PGconn *pool_connect(const char *dsn);

/*
 * True when a statement's failure means its connection must not serve
 * again: the server went away or is going, or it is a standby now (a
 * refused write, 25006).
 */
extern int	pool_connection_failed(PGconn *conn, const PGresult *res);

/*
 * Takes a connection, waiting while all are in use, and connecting it when
 * it is not; NULL when the database cannot be reached (said on stderr when
 * it could be reached before).
 */
extern PGconn *pool_take(ConnPool *pool);

/* Gives a connection back (closed, to be opened again, when it broke). */
extern void pool_give(ConnPool *pool, PGconn *conn);

/* Closes a connection that failed; its slot connects again (the dsn's writable host) when taken. */
extern void pool_discard(ConnPool *pool, PGconn *conn);

/*
 * Runs a statement by name with text parameters, preparing it on the
 * connection the first time, within the request timeout.
 */
extern PGresult *pool_exec(PGconn *conn, const char *name, const char *sql, int nparams, const char *const *params);

/* Runs a statement without parameters within the request timeout. */
extern PGresult *pool_query(PGconn *conn, const char *sql);

/* What the pool is doing now. */
extern PoolUse pool_use(ConnPool *pool);

/* Closes every connection. */
extern void pool_close(ConnPool *pool);

#endif
