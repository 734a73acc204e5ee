/*
 * lane.h — one pipelined connection to PostgreSQL, owned by one event
 * thread (worker.c).  Requests' statements are sent on it without waiting
 * for the ones before (libpq's pipeline mode), each followed by a sync, so
 * that each is a transaction of its own; their results come back in order
 * and each goes to its call's callback.  A lane connects when first used
 * and again after it broke (connector.c), and never blocks its thread.
 */
#ifndef DDB_GATEWAY_LANE_H
#define DDB_GATEWAY_LANE_H

#include <libpq-fe.h>
#include <stdint.h>

typedef struct Lane Lane;
typedef struct Call Call;
typedef struct ConnectInbox ConnectInbox;

/* The statements a lane prepares when it connects. */
typedef enum LaneStatement
{
	STATEMENT_EXECUTE,			/* ddb.execute_metered(role, operation, request) (ddb_router's on a router) */
	STATEMENT_LOOKUP_KEY,		/* an active access key's secret and role */
	STATEMENT_HEALTH,			/* the version of ddb_model in the database */
	STATEMENT_EXECUTE_DIRECT,	/* ddb.execute_direct(partition, role, operation, request) on a shard */
	NSTATEMENTS
} LaneStatement;

/*
 * What a call's result goes to, in the lane's thread: conn is NULL when
 * the lane could not connect; res is cleared after it returns.
 */
typedef void (*CallDone) (Call *call, PGconn *conn, PGresult *res);

/* A statement to run on a lane for a request (kept in the request's state). */
struct Call
{
	LaneStatement statement;
	int			nparams;
	const char *params[4];
	CallDone	done;
	Lane	   *lane;			/* set by lane_submit */
	long		deadline;		/* set by lane_submit: db_now_ms() past which the lane is given up */
	Call	   *next;
};

/*
 * A lane to dsn watched by epoll_fd, its connections delivered to inbox.
 * generation, when not NULL, is bumped when the server changed role (a
 * standby promoted): an idle lane then connects again.  NULL when out of
 * memory.
 */
extern Lane *lane_new(const char *dsn, const unsigned int *generation, int epoll_fd, ConnectInbox *inbox);

/* Sends a call (or queues it while the lane connects); its callback runs later, never inside. */
extern void lane_submit(Lane *lane, Call *call);

/* The lane's socket is ready (epoll events): reads results and runs their callbacks. */
extern void lane_on_event(Lane *lane, uint32_t events);

/*
 * Marks the lane failed (a result said its server is gone, going or a
 * standby now): its next tick closes it, failing what is in flight.
 */
extern void lane_fail(Lane *lane);

/*
 * Sends what is buffered, gives up a lane whose oldest call is past its
 * deadline (its socket shut down, never canceled) and fails the calls that
 * waited that long for a connection, closes a failed lane; the earliest
 * deadline of its calls, or -1.
 */
extern long lane_tick(Lane *lane, long now);

/* A connection attempt ended: conn is open (in pipeline mode, statements prepared) or NULL/bad. */
extern void lane_connected(Lane *lane, PGconn *conn, unsigned int generation);

/* True while the lane waits for its connection. */
extern int	lane_connecting(const Lane *lane);

/* Calls in flight and calls waiting for the connection (read from any thread, for the metrics). */
extern void lane_use(const Lane *lane, int *in_flight, int *waiting);

/* Closes an open lane: its calls in flight fail (their callbacks run); it connects again when next used. */
extern void lane_close(Lane *lane);

/* Frees a closed lane. */
extern void lane_free(Lane *lane);

/*
 * Readies a new connection for a lane (in the connecting thread): notices
 * dropped, ddb.endpoint_address set, the statements prepared, pipeline
 * mode on; 0 on success.
 */
extern int	lane_setup(PGconn *conn, const char *endpoint_address);

#endif
