/*
 * worker.h — an event thread of the gateway: one loop over epoll that
 * drives an HTTP daemon of its own (libmicrohttpd, polled from here) and
 * its lanes to the primary and to each standby, so that a request never
 * waits for a thread and a thread never waits for the database.
 */
#ifndef DDB_GATEWAY_WORKER_H
#define DDB_GATEWAY_WORKER_H

#include <microhttpd.h>

#include "lane.h"

/* The most shard nodes a thread keeps a lane to (shard_direct.c). */
#define WORKER_NODES_MAX 64

typedef struct Worker Worker;
typedef struct ServeContext ServeContext;

/* The database connections of the event threads, and what they do now (GET /metrics). */
typedef struct PoolUse
{
	int			size;			/* lanes to the primary */
	int			in_use;			/* of them, with a statement in flight */
	int			waiting;		/* statements waiting for a lane to connect */
} PoolUse;

/*
 * Starts an event thread serving listen_fd (it takes a descriptor of its
 * own) with the daemon flags and options given (TLS), up to
 * max_connections clients, and lanes lanes to the primary and to each
 * standby of the context; NULL with one line on stderr.
 */
extern Worker *worker_start(ServeContext *context, int listen_fd, unsigned int flags,
							const struct MHD_OptionItem *options, int max_connections, int lanes);

/* Makes the thread stop accepting clients (and close its listening descriptor). */
extern void worker_quiesce(Worker *worker);

/* Stops the thread, failing what is still in flight (503), and frees it. */
extern void worker_stop(Worker *worker);

/* The context the thread serves (the cls its callbacks get is the worker). */
extern ServeContext *worker_context(Worker *worker);

/* The primary's lane with the least work, for a request of this thread. */
extern Lane *worker_primary_lane(Worker *worker);

/* Standby replica's lane with the least work. */
extern Lane *worker_replica_lane(Worker *worker, int replica);

/* The thread's lane to a shard node (its connection string), made when first asked for; NULL past the most nodes. */
extern Lane *worker_node_lane(Worker *worker, const char *dsn);

/* Notes that a request of this thread was resumed: the daemon runs before the thread waits again. */
extern void worker_resumed(Worker *worker);

/* Adds the thread's lanes to the primary to use. */
extern void worker_add_use(Worker *worker, PoolUse *use);

#endif
