/*
 * connect.c — connections to PostgreSQL (connect.h).  Every connection
 * attempt is bounded in time (db_connect), and so is every round trip of
 * the blocking helpers (await_result); the request path does not block
 * (lane.c).
 */
#include "connect.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

/* The longest one connection attempt takes, over all the hosts of a dsn (--connect-timeout). */
static int	connect_timeout = 10;

/* The longest one statement's round trip takes (--request-timeout). */
static int	request_timeout = 10;

/* Sets the longest a connection attempt and a round trip take, in seconds (before any thread connects). */
void
db_set_timeouts(int connect_seconds, int request_seconds)
{
	connect_timeout = connect_seconds;
	request_timeout = request_seconds;
}

/* The request timeout, in milliseconds. */
long
db_request_timeout_ms(void)
{
	return request_timeout * 1000L;
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
db_connect(const char *dsn)
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
db_connection_failed(PGconn *conn, const PGresult *res)
{
	const char *sqlstate = PQresultErrorField(res, PG_DIAG_SQLSTATE);

	return PQstatus(conn) != CONNECTION_OK || sqlstate == NULL || strncmp(sqlstate, "57P", 3) == 0 ||
		strncmp(sqlstate, "08", 2) == 0 || strcmp(sqlstate, "25006") == 0;
}

/* Milliseconds on the monotonic clock. */
long
db_now_ms(void)
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
		remaining = deadline - db_now_ms();
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

/* Runs a statement without parameters within the request timeout (the bound db_exec has). */
PGresult *
db_query(PGconn *conn, const char *sql)
{
	set_nonblocking(conn);
	if (!PQsendQuery(conn, sql))
		return PQmakeEmptyPGresult(conn, PGRES_FATAL_ERROR);
	return await_result(conn, db_now_ms() + request_timeout * 1000L);
}

/*
 * A connection to dsn that ran setup (its application name, then LISTEN) for
 * a listener thread; NULL when it cannot, the reason on stderr after
 * "ddb-gateway: <consequence>, cannot connect to <purpose>" or "cannot listen".
 */
PGconn *
db_listen(const char *dsn, const char *setup, const char *consequence, const char *purpose)
{
	PGconn	   *conn = db_connect(dsn);
	PGresult   *res;

	if (PQstatus(conn) != CONNECTION_OK)
	{
		fprintf(stderr, "ddb-gateway: %s, cannot connect to %s: %s", consequence, purpose, PQerrorMessage(conn));
		PQfinish(conn);
		return NULL;
	}
	res = db_query(conn, setup);
	if (PQresultStatus(res) != PGRES_COMMAND_OK)
	{
		fprintf(stderr, "ddb-gateway: %s, cannot listen: %s", consequence, PQerrorMessage(conn));
		PQclear(res);
		PQfinish(conn);
		return NULL;
	}
	PQclear(res);
	return conn;
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
db_exec(PGconn *conn, const char *name, const char *sql, int nparams, const char *const *params)
{
	long		deadline = db_now_ms() + request_timeout * 1000L;
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
