/*
 * pool.h — a fixed pool of libpq connections shared by the gateway's
 * request threads.
 */
#ifndef DDB_GATEWAY_POOL_H
#define DDB_GATEWAY_POOL_H

#include <libpq-fe.h>

typedef struct ConnPool ConnPool;

/* Opens size connections to dsn; NULL (with the reason on stderr) when one fails. */
extern ConnPool *pool_open(const char *dsn, int size);

/* Takes a connection, waiting while all are in use. */
extern PGconn *pool_take(ConnPool *pool);

/* Gives a connection back (reset first when it broke). */
extern void pool_give(ConnPool *pool, PGconn *conn);

/*
 * Runs a statement by name with text parameters, preparing it on the
 * connection the first time (and again after a reset lost it).
 */
extern PGresult *pool_exec(PGconn *conn, const char *name, const char *sql, int nparams, const char *const *params);

/* Closes every connection. */
extern void pool_close(ConnPool *pool);

#endif
