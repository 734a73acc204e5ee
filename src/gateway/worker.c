/*
 * worker.c — an event thread (worker.h).
 *
 * Each turn of the loop: the lanes send what requests queued and give up
 * calls past the request timeout (lane_tick), epoll waits for the daemon's
 * descriptor, the lanes' sockets and the thread's eventfd (connections
 * made, commands), results go to their requests, and the daemon runs:
 * requests whose statement was sent are suspended, and resumed with their
 * response when its result came.  A daemon polled from outside has no
 * wake-up of its own (libmicrohttpd drops it): the thread notes a resumed
 * request (worker_resumed) and runs the daemon before it waits again.  Several event threads share the
 * listening socket; each daemon accepts its own clients.
 */
#include "worker.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <poll.h>
#include <unistd.h>

#include "connect.h"
#include "connector.h"
#include "handler.h"

/* What the thread is asked to do (atomic). */
enum
{
	WORKER_RUN,
	WORKER_QUIESCE,
	WORKER_STOP
};

struct Worker
{
	ServeContext *context;
	pthread_t	thread;
	int			epoll_fd;
	int			wake_fd;		/* an eventfd: connections delivered, commands */
	int			listen_fd;		/* the daemon's own descriptor of the listening socket */
	struct MHD_Daemon *daemon;
	ConnectInbox inbox;
	Lane	  **lanes;			/* nlanes to the primary, nlanes to each standby, then one to each shard node */
	int			nlanes;
	int			nreplicas;
	char	   *node_dsns[WORKER_NODES_MAX];	/* the shard nodes' connection strings, of lanes[fixed_lanes(worker) + i] */
	int			nnodes;
	int			command;
	int			quiesced;
	int			resumed;		/* a request was resumed since the daemon last ran */
};

/* libmicrohttpd's messages, prefixed as the gateway's own. */
static void
log_daemon_message(void *cls, const char *format, va_list args)
{
	char		message[512];

	vsnprintf(message, sizeof(message), format, args);
	fprintf(stderr, "ddb-gateway: http: %s%s", message, message[0] && message[strlen(message) - 1] == '\n' ? "" : "\n");
}

/* The lanes to the primary and the standbys. */
static int
fixed_lanes(const Worker *worker)
{
	return worker->nlanes * (1 + worker->nreplicas);
}

/* All the thread's lanes. */
static int
lane_count(const Worker *worker)
{
	return fixed_lanes(worker) + worker->nnodes;
}

/* The lane with the least work among n. */
static Lane *
least_busy(Lane **lanes, int n)
{
	Lane	   *best = lanes[0];
	int			best_load = -1;

	for (int i = 0; i < n; i++)
	{
		int			in_flight;
		int			waiting;

		lane_use(lanes[i], &in_flight, &waiting);
		if (best_load < 0 || in_flight + waiting < best_load)
		{
			best = lanes[i];
			best_load = in_flight + waiting;
		}
	}
	return best;
}

/* The primary's lane with the least work. */
Lane *
worker_primary_lane(Worker *worker)
{
	return least_busy(worker->lanes, worker->nlanes);
}

/* A standby's lane with the least work. */
Lane *
worker_replica_lane(Worker *worker, int replica)
{
	return least_busy(worker->lanes + worker->nlanes * (1 + replica), worker->nlanes);
}

/* The thread's lane to a shard node's connection string, made when first asked for; NULL past the most nodes. */
Lane *
worker_node_lane(Worker *worker, const char *dsn)
{
	int			first = fixed_lanes(worker);
	char	   *copy;
	Lane	   *lane;

	for (int i = 0; i < worker->nnodes; i++)
		if (strcmp(worker->node_dsns[i], dsn) == 0)
			return worker->lanes[first + i];
	if (worker->nnodes == WORKER_NODES_MAX || (copy = strdup(dsn)) == NULL)
		return NULL;
	if ((lane = lane_new(copy, NULL, worker->epoll_fd, &worker->inbox)) == NULL)
	{
		free(copy);
		return NULL;
	}
	worker->node_dsns[worker->nnodes] = copy;
	worker->lanes[first + worker->nnodes++] = lane;
	return lane;
}

/* The context the thread serves. */
ServeContext *
worker_context(Worker *worker)
{
	return worker->context;
}

/* Adds the thread's lanes to the primary to use. */
void
worker_add_use(Worker *worker, PoolUse *use)
{
	for (int i = 0; i < worker->nlanes; i++)
	{
		int			in_flight;
		int			waiting;

		lane_use(worker->lanes[i], &in_flight, &waiting);
		use->size++;
		use->in_use += in_flight > 0;
		use->waiting += waiting;
	}
}

/* Reads the eventfd, collects delivered connections, and acts on a command. */
static void
wake(Worker *worker)
{
	uint64_t	count;

	if (read(worker->wake_fd, &count, sizeof(count)) < 0)
	{
		/* nothing to read: another turn already did */
	}
	connector_collect(&worker->inbox);
	if (__atomic_load_n(&worker->command, __ATOMIC_ACQUIRE) >= WORKER_QUIESCE && !worker->quiesced)
	{
		/* the descriptor comes back to us; the socket closes with the last one */
		if (MHD_quiesce_daemon(worker->daemon) == worker->listen_fd)
			close(worker->listen_fd);
		worker->quiesced = 1;
	}
}

/* A request of this thread was resumed: the daemon runs before the thread waits again. */
void
worker_resumed(Worker *worker)
{
	worker->resumed = 1;
}

/* Ticks every lane (flushes what was sent, gives up what is past its deadline): the earliest deadline, or -1. */
static long
tick_lanes(Worker *worker, long now)
{
	long		next = -1;

	for (int i = 0; i < lane_count(worker); i++)
	{
		long		deadline = lane_tick(worker->lanes[i], now);

		if (deadline >= 0 && (next < 0 || deadline < next))
			next = deadline;
	}
	return next;
}

/*
 * One turn: ticks the lanes, waits for events, hands them out, and runs the
 * daemon when it has something to do: its descriptor is ready, a request
 * was resumed, or its own timeout is due (it has data pending, or a
 * connection to time out).  Every run of the daemon is followed by a tick
 * before the thread waits: a statement it sent is flushed, not left in the
 * lane's buffer until some other event comes.
 */
static void
turn(Worker *worker)
{
	struct epoll_event events[64];
	long		now = db_now_ms();
	long		next = tick_lanes(worker, now);
	long		daemon_due = -1;
	MHD_UNSIGNED_LONG_LONG daemon_ms;
	int			timeout;
	int			run_daemon = 0;
	int			n;

	while (worker->resumed)
	{
		/* answered by a tick (a deadline, a lane closed): taken up before the wait */
		worker->resumed = 0;
		MHD_run(worker->daemon);
		now = db_now_ms();
		next = tick_lanes(worker, now);
	}
	if (MHD_get_timeout(worker->daemon, &daemon_ms) == MHD_YES)
	{
		daemon_due = now + (long) daemon_ms;
		if (next < 0 || daemon_due < next)
			next = daemon_due;
	}
	timeout = next < 0 ? -1 : next <= now ? 0 : (int) (next - now);
	n = epoll_wait(worker->epoll_fd, events, 64, timeout);
	for (int i = 0; i < n; i++)
	{
		if (events[i].data.ptr == &worker->wake_fd)
			wake(worker);
		else if (events[i].data.ptr == &worker->daemon)
			run_daemon = 1;
		else
			lane_on_event(events[i].data.ptr, events[i].events);
	}
	if (run_daemon || worker->resumed || (daemon_due >= 0 && db_now_ms() >= daemon_due))
	{
		worker->resumed = 0;
		MHD_run(worker->daemon);
	}
}

/* True while a lane waits for its connection. */
static int
any_connecting(const Worker *worker)
{
	for (int i = 0; i < lane_count(worker); i++)
		if (lane_connecting(worker->lanes[i]))
			return 1;
	return 0;
}

/*
 * Fails what is left in flight and waits for the connections being made
 * (a connecting thread delivers to this thread's inbox), so that no request
 * stays suspended when the daemon stops.
 */
static void
settle(Worker *worker)
{
	do
	{
		struct pollfd pfd = {worker->wake_fd, POLLIN, 0};

		for (int i = 0; i < lane_count(worker); i++)
			lane_close(worker->lanes[i]);
		MHD_run(worker->daemon);
		if (any_connecting(worker) && poll(&pfd, 1, 100) > 0)
			wake(worker);
	} while (any_connecting(worker));
	for (int i = 0; i < lane_count(worker); i++)
		lane_close(worker->lanes[i]);
	MHD_run(worker->daemon);
}

/* The event thread. */
static void *
worker_main(void *arg)
{
	Worker	   *worker = arg;

	while (__atomic_load_n(&worker->command, __ATOMIC_ACQUIRE) != WORKER_STOP)
		turn(worker);
	settle(worker);
	return NULL;
}

/* Watches a descriptor for input, its events tagged with tag. */
static int
watch_input(Worker *worker, int fd, void *tag)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = tag};

	return epoll_ctl(worker->epoll_fd, EPOLL_CTL_ADD, fd, &ev);
}

/* Frees a worker whose thread is not running. */
static void
free_worker(Worker *worker)
{
	if (worker->daemon)
		MHD_stop_daemon(worker->daemon);
	for (int i = 0; worker->lanes && i < lane_count(worker); i++)
		if (worker->lanes[i])
			lane_free(worker->lanes[i]);
	free(worker->lanes);
	for (int i = 0; i < worker->nnodes; i++)
		free(worker->node_dsns[i]);
	if (worker->wake_fd >= 0)
		close(worker->wake_fd);
	if (worker->epoll_fd >= 0)
		close(worker->epoll_fd);
	free(worker);
}

/* Starts an event thread; NULL with one line on stderr. */
Worker *
worker_start(ServeContext *context, int listen_fd, unsigned int flags, const struct MHD_OptionItem *options,
			 int max_connections, int lanes)
{
	Worker	   *worker = calloc(1, sizeof(Worker));
	const union MHD_DaemonInfo *info;

	if (worker == NULL)
		return NULL;
	worker->context = context;
	worker->nlanes = lanes;
	worker->nreplicas = replicas_count(context->replicas);
	worker->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	worker->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	worker->lanes = calloc(fixed_lanes(worker) + WORKER_NODES_MAX, sizeof(Lane *));
	if (worker->epoll_fd < 0 || worker->wake_fd < 0 || worker->lanes == NULL)
	{
		fprintf(stderr, "ddb-gateway: cannot start an event thread: %m\n");
		free_worker(worker);
		return NULL;
	}
	connector_inbox_init(&worker->inbox, worker->wake_fd);
	for (int i = 0; i < fixed_lanes(worker); i++)
	{
		int			replica = i / lanes - 1;

		worker->lanes[i] = replica < 0 ?
			lane_new(context->settings->dsn, NULL, worker->epoll_fd, &worker->inbox) :
			lane_new(context->settings->replicas[replica], replicas_generation(context->replicas, replica),
					 worker->epoll_fd, &worker->inbox);
		if (worker->lanes[i] == NULL)
		{
			free_worker(worker);
			return NULL;
		}
	}
	/* the daemon gets a descriptor of its own: libmicrohttpd closes the one it was given when it fails to start */
	worker->listen_fd = dup(listen_fd);
	if (worker->listen_fd >= 0)
		worker->daemon = MHD_start_daemon(flags | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG,
										  0, NULL, NULL, gateway_handle, worker,
										  MHD_OPTION_EXTERNAL_LOGGER, log_daemon_message, NULL,
										  MHD_OPTION_NOTIFY_COMPLETED, gateway_request_done, worker,
										  MHD_OPTION_LISTEN_SOCKET, worker->listen_fd,
										  MHD_OPTION_CONNECTION_LIMIT, (unsigned int) max_connections,
										  MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int) 60,
										  MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t) context->settings->connection_memory,
										  MHD_OPTION_ARRAY, options,
										  MHD_OPTION_END);
	if (worker->daemon == NULL)
	{
		free_worker(worker);
		return NULL;
	}
	info = MHD_get_daemon_info(worker->daemon, MHD_DAEMON_INFO_EPOLL_FD);
	if (info == NULL || watch_input(worker, info->epoll_fd, &worker->daemon) != 0 ||
		watch_input(worker, worker->wake_fd, &worker->wake_fd) != 0 ||
		pthread_create(&worker->thread, NULL, worker_main, worker) != 0)
	{
		fprintf(stderr, "ddb-gateway: cannot start an event thread: %m\n");
		free_worker(worker);
		return NULL;
	}
	return worker;
}

/* Posts a command to the thread. */
static void
command(Worker *worker, int what)
{
	uint64_t	one = 1;

	__atomic_store_n(&worker->command, what, __ATOMIC_RELEASE);
	if (write(worker->wake_fd, &one, sizeof(one)) < 0)
		perror("ddb-gateway: cannot wake an event thread");
}

/* Makes the thread stop accepting clients. */
void
worker_quiesce(Worker *worker)
{
	command(worker, WORKER_QUIESCE);
}

/* Stops the thread and frees it. */
void
worker_stop(Worker *worker)
{
	command(worker, WORKER_STOP);
	pthread_join(worker->thread, NULL);
	if (!worker->quiesced && MHD_quiesce_daemon(worker->daemon) == worker->listen_fd)
		close(worker->listen_fd);
	free_worker(worker);
}
