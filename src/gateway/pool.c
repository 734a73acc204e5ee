/*
 * pool.c — a fixed pool of libpq connections: a stack of idle slots under a
 * mutex, and a condition variable for the threads that wait.  A slot holds
 * a connection or NULL: it is connected when taken, so that the gateway can
 * start (and keep running) while the database is down, answering 503 until
 * it is back.  A connection whose server went away, or that reached a node
 * that is (now) a standby, is discarded: its slot connects again with the
 * dsn, and libpq then picks the host that takes writes (a multi-host dsn
 * with target_session_attrs=read-write), so the gateway follows a failover.
 * Every connection attempt is bounded in time (pool_connect), and so is
 * every round trip (await_result).
 */
#include "pool.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

/* The longest one connection attempt takes, over all the hosts of a dsn (--connect-timeout). */
static int	connect_timeout = 10;

/* The longest one statement's round trip takes (--request-timeout). */
static int	request_timeout = 10;

struct ConnPool
{
	pthread_mutex_t lock;
	pthread_cond_t available;
	char	   *dsn;
	char	   *endpoint_address;	/* what each connection sets ddb.endpoint_address to */
	PGconn	  **idle;			/* the slots not in use (a NULL slot is not connected) */
	int			nidle;
	PGconn	  **all;			/* every open connection, for pool_close */
	char	   *stale;			/* all[i] is to be closed when given back (pool_reset) */
	int			nstale;
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
	pool->stale = calloc(size, 1);
	if (pool->dsn == NULL || pool->endpoint_address == NULL || pool->idle == NULL || pool->all == NULL ||
		pool->stale == NULL)
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
			pool->nstale -= pool->stale[i];
			pool->stale[i] = 0;
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

/* Sets the longest a connection attempt and a round trip take, in seconds (before any thread connects). */
void
pool_set_timeouts(int connect_seconds, int request_seconds)
{
	connect_timeout = connect_seconds;
	request_timeout = request_seconds;
}

/* The hosts a dsn names (its host or hostaddr lists, comma-separated), at least 1. */
static int
count_hosts(const char *dsn)
{
	PQconninfoOption *options = PQconninfoParse(dsn, NULL);
	int			hosts = 1;

	for (PQconninfoOption *o = options; o && o->keyword; o++)
		if (o->val && (strcmp(o->keyword, "host") == 0 || strcmp(o->keyword, "hostaddr") == 0))
		{
			int			n = 1;

			for (const char *c = o->val; *c; c++)
				n += *c == ',';
			hosts = n > hosts ? n : hosts;
		}
	PQconninfoFree(options);
	return hosts;
}

/*
 * Connects to dsn within the connect timeout: libpq's connect_timeout is
 * that share of it for each host (libpq's least is 2 s), so that a host that
 * does not answer (the failed primary's machine) leaves time for the next;
 * and over TCP a server whose machine or network goes away later is found
 * out within about twice it (TCP keepalives and tcp_user_timeout).  What
 * the dsn sets itself wins.
 */
PGconn *
pool_connect(const char *dsn)
{
	char		per_host[16];
	char		idle[16];
	char		interval[16];
	char		user_timeout[24];
	const char *keywords[] = {"connect_timeout", "keepalives_idle", "keepalives_interval", "keepalives_count",
	"tcp_user_timeout", "dbname", NULL};
	const char *values[] = {per_host, idle, interval, "3", user_timeout, dsn, NULL};
	int			share = connect_timeout / count_hosts(dsn);

	snprintf(per_host, sizeof(per_host), "%d", share > 2 ? share : 2);
	snprintf(idle, sizeof(idle), "%d", connect_timeout);
	snprintf(interval, sizeof(interval), "%d", connect_timeout / 3 > 1 ? connect_timeout / 3 : 1);
	snprintf(user_timeout, sizeof(user_timeout), "%d", connect_timeout * 1000);
	/* the dsn (expanded from dbname, after the defaults) overrides them */
	return PQconnectdbParams(keywords, values, 1);
}

/*
 * True when a connection must not serve again: it broke, libpq reports no
 * server error, the server is shutting down or cannot serve (SQLSTATE
 * class 57P, 08), or it is a standby now that refused a write (25006).
 */
int
pool_connection_failed(PGconn *conn, const PGresult *res)
{
	const char *sqlstate = PQresultErrorField(res, PG_DIAG_SQLSTATE);

	return PQstatus(conn) != CONNECTION_OK || sqlstate == NULL || strncmp(sqlstate, "57P", 3) == 0 ||
		strncmp(sqlstate, "08", 2) == 0 || strcmp(sqlstate, "25006") == 0;
}

/* True when conn was open when pool_reset ran (the caller holds the lock). */
static int
is_stale(ConnPool *pool, PGconn *conn)
{
	if (pool->nstale == 0)
		return 0;
	for (int i = 0; i < pool->size; i++)
		if (pool->all[i] == conn)
			return pool->stale[i];
	return 0;
}

/* Takes a connection, connecting its slot when needed; NULL when the database cannot be reached. */
PGconn *
pool_take(ConnPool *pool)
{
	PGconn	   *conn;
	int			stale;

	pthread_mutex_lock(&pool->lock);
	pool->waiting++;
	while (pool->nidle == 0)
		pthread_cond_wait(&pool->available, &pool->lock);
	pool->waiting--;
	conn = pool->idle[--pool->nidle];
	stale = conn != NULL && is_stale(pool, conn);
	pthread_mutex_unlock(&pool->lock);
	if (stale)
	{
		/* open when pool_reset ran: connected again, to the host the dsn asks for now */
		track(pool, conn, NULL);
		PQfinish(conn);
		conn = NULL;
	}
	if (conn != NULL)
		return conn;
	conn = pool_connect(pool->dsn);
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
 * Makes every connection open now connect again before it next serves
 * (pool_take closes it).  For a pool whose server changed role (a standby
 * promoted), so that libpq picks a host by the dsn's target_session_attrs
 * again.
 */
void
pool_reset(ConnPool *pool)
{
	pthread_mutex_lock(&pool->lock);
	for (int i = 0; i < pool->size; i++)
		if (pool->all[i] != NULL && !pool->stale[i])
		{
			pool->stale[i] = 1;
			pool->nstale++;
		}
	pthread_mutex_unlock(&pool->lock);
}

/* Closes a connection that failed (pool_connection_failed): its slot connects again when taken. */
void
pool_discard(ConnPool *pool, PGconn *conn)
{
	track(pool, conn, NULL);
	PQfinish(conn);
	pool_give(pool, NULL);
}

/* Milliseconds on the monotonic clock. */
static long
now_ms(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec * 1000L + now.tv_nsec / 1000000;
}

/* The last of the results still to be read (as PQexec answers), or a failure when there is none. */
static PGresult *
drain(PGconn *conn, PGresult *last)
{
	PGresult   *res;

	while ((res = PQgetResult(conn)) != NULL)
	{
		PQclear(last);
		last = res;
	}
	return last ? last : PQmakeEmptyPGresult(conn, PGRES_FATAL_ERROR);
}

/*
 * Waits for what was sent on conn until deadline (now_ms): its last result,
 * or a failure when the connection broke or the deadline passed.  Then the
 * connection is broken off (its socket shut down), so that it is discarded
 * and never reused with a statement still running.  Not canceled: a commit
 * whose wait for its synchronous standby is canceled is reported committed,
 * though it is on one node only.
 */
static PGresult *
await_result(PGconn *conn, long deadline)
{
	PGresult   *last = NULL;

	for (;;)
	{
		int			unsent = PQflush(conn);
		struct pollfd pfd = {PQsocket(conn), POLLIN, 0};
		long		remaining;

		if (unsent < 0 || !PQconsumeInput(conn))
			return drain(conn, last);
		while (!PQisBusy(conn))
		{
			PGresult   *res = PQgetResult(conn);

			if (res == NULL)
				return last ? last : PQmakeEmptyPGresult(conn, PGRES_FATAL_ERROR);
			PQclear(last);
			last = res;
		}
		remaining = deadline - now_ms();
		if (remaining <= 0)
			break;
		if (unsent)
			pfd.events |= POLLOUT;
		if (poll(&pfd, 1, (int) remaining) < 0 && errno != EINTR)
			break;
	}
	shutdown(PQsocket(conn), SHUT_RDWR);
	PQconsumeInput(conn);
	return drain(conn, last);
}

/* Sends without blocking (what does not fit in the socket is flushed by await_result). */
static void
set_nonblocking(PGconn *conn)
{
	if (!PQisnonblocking(conn))
		PQsetnonblocking(conn, 1);
}

/* Runs a statement without parameters within the request timeout (the bound pool_exec has). */
PGresult *
pool_query(PGconn *conn, const char *sql)
{
	set_nonblocking(conn);
	if (!PQsendQuery(conn, sql))
		return PQmakeEmptyPGresult(conn, PGRES_FATAL_ERROR);
	return await_result(conn, now_ms() + request_timeout * 1000L);
}

/* Runs a prepared statement by name, waiting until deadline. */
static PGresult *
exec_prepared(PGconn *conn, const char *name, int nparams, const char *const *params, long deadline)
{
	if (!PQsendQueryPrepared(conn, name, nparams, params, NULL, NULL, 0))
		return PQmakeEmptyPGresult(conn, PGRES_FATAL_ERROR);
	return await_result(conn, deadline);
}

/*
 * Runs a statement by name, preparing it when the connection does not know
 * it (SQLSTATE 26000: the first time on a connection), all within the
 * request timeout.  Saves the parse and plan of every request.
 */
PGresult *
pool_exec(PGconn *conn, const char *name, const char *sql, int nparams, const char *const *params)
{
	long		deadline = now_ms() + request_timeout * 1000L;
	PGresult   *res;
	const char *sqlstate;

	set_nonblocking(conn);
	res = exec_prepared(conn, name, nparams, params, deadline);
	sqlstate = PQresultErrorField(res, PG_DIAG_SQLSTATE);
	if (sqlstate == NULL || strcmp(sqlstate, "26000") != 0)
		return res;
	PQclear(res);
	if (!PQsendPrepare(conn, name, sql, nparams, NULL))
		return PQmakeEmptyPGresult(conn, PGRES_FATAL_ERROR);
	res = await_result(conn, deadline);
	if (PQresultStatus(res) != PGRES_COMMAND_OK)
		return res;
	PQclear(res);
	return exec_prepared(conn, name, nparams, params, deadline);
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
	free(pool->stale);
	free(pool->dsn);
	free(pool->endpoint_address);
	free(pool);
}
