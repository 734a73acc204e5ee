/*
 * connect.h — how the gateway connects to PostgreSQL (every connection
 * attempt bounded in time, with TCP keepalives), runs a statement within
 * the request timeout on a connection of a thread that may block (the
 * key-cache listener, the standbys' watcher, the start-up check), and
 * tells a connection that must not serve again.
 */
#ifndef DDB_GATEWAY_CONNECT_H
#define DDB_GATEWAY_CONNECT_H

#include <libpq-fe.h>

/*
 * Sets the longest one attempt to connect takes, over all the hosts of a
 * dsn, and the longest one statement's round trip takes (after which its
 * connection is broken off and counts as failed), in seconds; called
 * before any connection is made.
 */
extern void db_set_timeouts(int connect_seconds, int request_seconds);

/* The request timeout, in milliseconds. */
extern long db_request_timeout_ms(void);

/*
 * Connects to dsn within the connect timeout (and with TCP keepalives that
 * find out a server gone within it), what the dsn sets winning; every
 * connection of the gateway is made so.
 */
extern PGconn *db_connect(const char *dsn);

/*
 * True when a statement's failure means its connection must not serve
 * again: the server went away or is going, or it is a standby now (a
 * refused write, 25006).
 */
extern int	db_connection_failed(PGconn *conn, const PGresult *res);

/*
 * Runs a statement by name with text parameters, preparing it on the
 * connection the first time, within the request timeout (blocking).
 */
extern PGresult *db_exec(PGconn *conn, const char *name, const char *sql, int nparams, const char *const *params);

/* Runs a statement without parameters within the request timeout (blocking). */
extern PGresult *db_query(PGconn *conn, const char *sql);

/* A listener thread's connection to dsn, setup run on it (LISTEN); NULL, the reason on stderr, when it cannot. */
extern PGconn *db_listen(const char *dsn, const char *setup, const char *consequence, const char *purpose);

/* Milliseconds on the monotonic clock. */
extern long db_now_ms(void);

#endif
