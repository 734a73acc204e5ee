/*
 * lane.c — a pipelined connection to PostgreSQL (lane.h).
 *
 * A call is sent as PQsendQueryPrepared and a sync: its results are the
 * statement's result, a NULL and PGRES_PIPELINE_SYNC, and a failing
 * statement aborts nothing but itself.  Output is flushed once per turn of
 * the event loop (lane_tick), so that the calls of one turn share a
 * write.  A lane whose server went away, whose oldest call passed the
 * request timeout, or that a result marked failed is closed: every call in
 * flight gets a failure (which the handler answers 503) and the next call
 * connects again, to the host the dsn asks for now (a failover).  A call
 * past its deadline is not canceled: the socket is shut down, because a
 * canceled wait for a synchronous standby is reported as committed though
 * it is on one node only.
 */
#include "lane.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "connect.h"
#include "connector.h"
#include "health.h"
#include "shard_map.h"
#include "sigv4.h"

typedef enum LaneState
{
	LANE_CLOSED,
	LANE_CONNECTING,
	LANE_OPEN
} LaneState;

struct Lane
{
	const char *dsn;
	const unsigned int *generation; /* the server's role changes (a standby's), or NULL */
	unsigned int connected_generation;
	int			epoll_fd;
	ConnectInbox *inbox;
	LaneState	state;
	PGconn	   *conn;
	int			failed;			/* to be closed at the next tick */
	uint32_t	watching;		/* the epoll events its socket is registered for, 0 when not */
	Call	   *sent;			/* in flight, oldest first */
	Call	   *sent_tail;
	Call	   *waiting;		/* waiting for the connection */
	Call	   *waiting_tail;
	PGresult   *result;			/* the oldest call's result, until its sync arrives */
	int			in_flight;		/* atomic (the metrics read it) */
	int			nwaiting;		/* atomic */
};

/* The prepared statements' names, in LaneStatement's order. */
static const char *const statement_names[NSTATEMENTS] = {"execute", "lookup_key", "health", "execute_direct"};

/* A lane to dsn, closed until first used; NULL when out of memory. */
Lane *
lane_new(const char *dsn, const unsigned int *generation, int epoll_fd, ConnectInbox *inbox)
{
	Lane	   *lane = calloc(1, sizeof(Lane));

	if (lane == NULL)
		return NULL;
	lane->dsn = dsn;
	lane->generation = generation;
	lane->epoll_fd = epoll_fd;
	lane->inbox = inbox;
	return lane;
}

/* A notice processor that drops notices: the gateway shows no one its connections' notices. */
static void
ignore_notice(void *arg, const char *message)
{
}

/* Readies a new connection (in the connecting thread); 0 on success. */
int
lane_setup(PGconn *conn, const char *endpoint_address)
{
	const char *params[1] = {endpoint_address};
	const char *sql[NSTATEMENTS];
	PGresult   *res;
	int			router;

	/* a notice has no reader here (PL/Proxy's "dropping stale conn" on a router, say): not stderr's */
	PQsetNoticeProcessor(conn, ignore_notice, NULL);
	res = PQexecParams(conn, "SELECT pg_catalog.set_config('ddb.endpoint_address', $1, false), "
					   "EXISTS (SELECT FROM pg_catalog.pg_extension WHERE extname = 'ddb_router')",
					   1, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
	{
		PQclear(res);
		return -1;
	}
	router = strcmp(PQgetvalue(res, 0, 1), "t") == 0;
	PQclear(res);
	/* a router's requests go to its shards (docs/scale-out.md) */
	sql[STATEMENT_EXECUTE] = router ? "SELECT ddb_router.execute_metered($1, $2, $3::jsonb)" :
		"SELECT ddb.execute_metered($1, $2, $3::jsonb)";
	sql[STATEMENT_LOOKUP_KEY] = SIGV4_LOOKUP_KEY_SQL;
	sql[STATEMENT_HEALTH] = HEALTH_SQL;
	sql[STATEMENT_EXECUTE_DIRECT] = SHARD_DIRECT_SQL;
	for (int s = 0; s < NSTATEMENTS; s++)
	{
		/* one that fails (no ddb_model yet) fails its calls, and they close the lane to prepare it again */
		res = PQprepare(conn, statement_names[s], sql[s], 0, NULL);
		if (PQstatus(conn) != CONNECTION_OK)
		{
			PQclear(res);
			return -1;
		}
		PQclear(res);
	}
	if (PQsetnonblocking(conn, 1) != 0 || PQenterPipelineMode(conn) != 1)
		return -1;
	return 0;
}

/* Watches the lane's socket for events (0: not at all). */
static void
watch(Lane *lane, uint32_t events)
{
	struct epoll_event ev = {.events = events, .data.ptr = lane};

	if (events == lane->watching)
		return;
	if (events == 0)
		epoll_ctl(lane->epoll_fd, EPOLL_CTL_DEL, PQsocket(lane->conn), NULL);
	else
		epoll_ctl(lane->epoll_fd, lane->watching ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, PQsocket(lane->conn), &ev);
	lane->watching = events;
}

/* Appends a call to a list. */
static void
append(Call **head, Call **tail, Call *call)
{
	call->next = NULL;
	if (*tail)
		(*tail)->next = call;
	else
		*head = call;
	*tail = call;
}

/* Takes the first call off a list. */
static Call *
pop(Call **head, Call **tail)
{
	Call	   *call = *head;

	if (call)
	{
		*head = call->next;
		if (*head == NULL)
			*tail = NULL;
	}
	return call;
}

/* Sends a call on the open lane (flushed at the tick); a failure marks the lane failed. */
static void
send_call(Lane *lane, Call *call)
{
	append(&lane->sent, &lane->sent_tail, call);
	__atomic_add_fetch(&lane->in_flight, 1, __ATOMIC_RELAXED);
	if (!PQsendQueryPrepared(lane->conn, statement_names[call->statement], call->nparams, call->params,
							 NULL, NULL, 0) || !PQpipelineSync(lane->conn))
		lane->failed = 1;
}

/* Runs a call's callback with a result, then clears it. */
static void
complete(Call *call, PGconn *conn, PGresult *res)
{
	call->done(call, conn, res);
	PQclear(res);
}

/* Fails every call of a list (conn: the lane's connection, or NULL), each callback in turn. */
static void
fail_calls(Call *calls, PGconn *conn, int *counter)
{
	while (calls)
	{
		Call	   *call = calls;

		calls = call->next;
		__atomic_sub_fetch(counter, 1, __ATOMIC_RELAXED);
		complete(call, conn, PQmakeEmptyPGresult(conn, PGRES_FATAL_ERROR));
	}
}

/* Sends a call, or queues it while the lane connects (connecting it when closed). */
void
lane_submit(Lane *lane, Call *call)
{
	call->lane = lane;
	call->deadline = db_now_ms() + db_request_timeout_ms();
	/* an idle lane to a server that changed role connects again, to the one the dsn asks for now */
	if (lane->state == LANE_OPEN && lane->generation && lane->sent == NULL &&
		__atomic_load_n(lane->generation, __ATOMIC_RELAXED) != lane->connected_generation)
		lane_close(lane);
	if (lane->state == LANE_OPEN)
	{
		send_call(lane, call);
		return;
	}
	append(&lane->waiting, &lane->waiting_tail, call);
	__atomic_add_fetch(&lane->nwaiting, 1, __ATOMIC_RELAXED);
	if (lane->state == LANE_CLOSED)
	{
		lane->state = LANE_CONNECTING;
		connector_open(lane, lane->dsn, lane->generation ? __atomic_load_n(lane->generation, __ATOMIC_RELAXED) : 0,
					   lane->inbox);
	}
}

/* Reads the results that arrived: each call's own, handed over at its sync. */
static void
collect(Lane *lane)
{
	int			nulls = 0;

	while (lane->sent && !PQisBusy(lane->conn))
	{
		PGresult   *res = PQgetResult(lane->conn);

		if (res == NULL)
		{
			/* the end of a statement's results; twice in a row, nothing more will come */
			if (++nulls > 1)
				break;
			continue;
		}
		nulls = 0;
		if (PQresultStatus(res) == PGRES_PIPELINE_SYNC)
		{
			Call	   *call = pop(&lane->sent, &lane->sent_tail);
			PGresult   *result = lane->result ? lane->result : PQmakeEmptyPGresult(lane->conn, PGRES_FATAL_ERROR);

			PQclear(res);
			lane->result = NULL;
			__atomic_sub_fetch(&lane->in_flight, 1, __ATOMIC_RELAXED);
			complete(call, lane->conn, result);
		}
		else
		{
			PQclear(lane->result);
			lane->result = res;
		}
	}
}

/* The lane's socket is ready: reads what came and hands results to their calls. */
void
lane_on_event(Lane *lane, uint32_t events)
{
	if (lane->state != LANE_OPEN)
		return;
	if ((events & EPOLLOUT) && PQflush(lane->conn) < 0)
		lane->failed = 1;
	if (events & (EPOLLIN | EPOLLERR | EPOLLHUP))
	{
		if (!PQconsumeInput(lane->conn))
			lane->failed = 1;
		collect(lane);
	}
	if (PQstatus(lane->conn) != CONNECTION_OK)
		lane->failed = 1;
}

/* Marks the lane to be closed at its next tick. */
void
lane_fail(Lane *lane)
{
	if (lane->state == LANE_OPEN)
		lane->failed = 1;
}

/* Closes an open lane: its calls in flight fail (one connecting is left to its connection). */
void
lane_close(Lane *lane)
{
	PGconn	   *conn = lane->conn;
	Call	   *sent = lane->sent;

	if (lane->state == LANE_OPEN)
	{
		/* closed first: a callback that sends again finds the lane connecting anew */
		watch(lane, 0);
		lane->state = LANE_CLOSED;
		lane->conn = NULL;
		lane->failed = 0;
		lane->sent = lane->sent_tail = NULL;
		if (sent)
		{
			/* the oldest call's own result (a failure that came before its sync), else an empty failure */
			Call	   *first = sent;
			PGresult   *result = lane->result ? lane->result : PQmakeEmptyPGresult(conn, PGRES_FATAL_ERROR);

			lane->result = NULL;
			sent = sent->next;
			__atomic_sub_fetch(&lane->in_flight, 1, __ATOMIC_RELAXED);
			complete(first, conn, result);
		}
		fail_calls(sent, conn, &lane->in_flight);
		PQfinish(conn);
	}
}

/*
 * Flushes, gives up a call past its deadline (in flight: the lane is given
 * up; waiting for the connection: the call alone), closes a failed lane;
 * the earliest deadline, or -1.
 */
long
lane_tick(Lane *lane, long now)
{
	int			unsent;

	if (lane->state == LANE_CONNECTING)
	{
		/* a call waits for a connection no longer than for its result: the attempt goes on for the next ones */
		while (lane->waiting && lane->waiting->deadline <= now)
		{
			__atomic_sub_fetch(&lane->nwaiting, 1, __ATOMIC_RELAXED);
			complete(pop(&lane->waiting, &lane->waiting_tail), NULL, PQmakeEmptyPGresult(NULL, PGRES_FATAL_ERROR));
		}
		return lane->waiting ? lane->waiting->deadline : -1;
	}
	if (lane->state != LANE_OPEN)
		return -1;
	if (!lane->failed && lane->sent && lane->sent->deadline <= now)
	{
		/* broken off, not canceled: whatever runs is never answered on this connection */
		shutdown(PQsocket(lane->conn), SHUT_RDWR);
		PQconsumeInput(lane->conn);
		collect(lane);
		lane->failed = 1;
	}
	if (!lane->failed)
	{
		unsent = PQflush(lane->conn);
		if (unsent < 0)
			lane->failed = 1;
		else
			watch(lane, EPOLLIN | (unsent ? EPOLLOUT : 0));
	}
	if (lane->failed)
		lane_close(lane);
	return lane->state == LANE_OPEN && lane->sent ? lane->sent->deadline : -1;
}

/* A connection attempt ended: sends the waiting calls on it, or fails them. */
void
lane_connected(Lane *lane, PGconn *conn, unsigned int generation)
{
	Call	   *waiting = lane->waiting;

	lane->waiting = lane->waiting_tail = NULL;
	if (conn == NULL || PQstatus(conn) != CONNECTION_OK)
	{
		PQfinish(conn);
		lane->state = LANE_CLOSED;
		fail_calls(waiting, NULL, &lane->nwaiting);
		return;
	}
	lane->conn = conn;
	lane->state = LANE_OPEN;
	lane->connected_generation = generation;
	lane->watching = 0;
	watch(lane, EPOLLIN);
	while (waiting)
	{
		Call	   *call = waiting;

		waiting = call->next;
		__atomic_sub_fetch(&lane->nwaiting, 1, __ATOMIC_RELAXED);
		send_call(lane, call);
	}
}

/* True while the lane waits for its connection. */
int
lane_connecting(const Lane *lane)
{
	return lane->state == LANE_CONNECTING;
}

/* Calls in flight and waiting, for the metrics. */
void
lane_use(const Lane *lane, int *in_flight, int *waiting)
{
	*in_flight = __atomic_load_n(&lane->in_flight, __ATOMIC_RELAXED);
	*waiting = __atomic_load_n(&lane->nwaiting, __ATOMIC_RELAXED);
}

/* Frees a closed lane. */
void
lane_free(Lane *lane)
{
	free(lane);
}
