/*
 * bench/http_ceiling/mhd_server.c — libmicrohttpd answering every request
 * with ANSWER_BODY once its body is read, in one of its threading modes:
 *
 *   per-connection  a thread per connection (THREADS is 1)
 *   pool            an internal thread pool of THREADS threads with epoll
 *   external        THREADS daemons with epoll and no thread of their own,
 *                   each driven by a thread of this program from its own
 *                   epoll set (MHD_DAEMON_INFO_EPOLL_FD), all sharing the
 *                   listening socket
 *   suspend         external, and each request is suspended once its body
 *                   is read and resumed on the loop's next turn, as a
 *                   request waiting for the database would be
 *
 * TLS (GnuTLS) with CERT and KEY.
 */
#include "common.h"

#include <errno.h>
#include <limits.h>
#include <microhttpd.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

/* The most requests one daemon holds suspended at once (more than a run's connections). */
#define MAX_SUSPENDED 4096

/* A daemon driven by one of this program's threads, and the requests it holds suspended. */
typedef struct Worker
{
	struct MHD_Daemon *daemon;
	int			suspending;
	int			suspended_count;
	struct MHD_Connection *suspended[MAX_SUSPENDED];
} Worker;

/* The one answer, queued for every request (libmicrohttpd counts its references). */
static struct MHD_Response *answer;

/* Where a request is: its first call, its body read and suspended (then resumed). */
static char started,
			waiting;

/* Reads the body; once read, queues the answer, or with a suspending worker suspends first. */
static enum MHD_Result
handle(void *cls, struct MHD_Connection *connection, const char *url, const char *method,
	   const char *version, const char *upload_data, size_t *upload_data_size, void **request)
{
	Worker	   *worker = cls;

	(void) url, (void) method, (void) version, (void) upload_data;
	if (*request == NULL)
	{
		*request = &started;
		return MHD_YES;
	}
	if (*upload_data_size != 0)
	{
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (worker != NULL && worker->suspending && *request == &started)
	{
		if (worker->suspended_count == MAX_SUSPENDED)
			return MHD_NO;
		*request = &waiting;
		MHD_suspend_connection(connection);
		worker->suspended[worker->suspended_count++] = connection;
		return MHD_YES;
	}
	return MHD_queue_response(connection, MHD_HTTP_OK, answer);
}

/* Starts a daemon on the listening socket with the flags of the mode, TLS and a pool of threads as given. */
static struct MHD_Daemon *
start_daemon(unsigned int flags, int listen_fd, int pool, const Options *options, Worker *worker)
{
	struct MHD_OptionItem items[8];
	int			n = 0;
	struct MHD_Daemon *daemon;

	if (options->cert != NULL)
	{
		flags |= MHD_USE_TLS;
		items[n++] = (struct MHD_OptionItem) {MHD_OPTION_HTTPS_MEM_CERT, 0, read_file(options->cert)};
		items[n++] = (struct MHD_OptionItem) {MHD_OPTION_HTTPS_MEM_KEY, 0, read_file(options->key)};
	}
	if (pool > 1)
		items[n++] = (struct MHD_OptionItem) {MHD_OPTION_THREAD_POOL_SIZE, pool, NULL};
	items[n++] = (struct MHD_OptionItem) {MHD_OPTION_LISTEN_SOCKET, listen_fd, NULL};
	items[n++] = (struct MHD_OptionItem) {MHD_OPTION_CONNECTION_LIMIT, 100000, NULL};
	items[n++] = (struct MHD_OptionItem) {MHD_OPTION_CONNECTION_TIMEOUT, 60, NULL};
	items[n++] = (struct MHD_OptionItem) {MHD_OPTION_END, 0, NULL};
	daemon = MHD_start_daemon(flags | MHD_USE_ERROR_LOG, 0, NULL, NULL, handle, worker,
							  MHD_OPTION_ARRAY, items, MHD_OPTION_END);
	if (daemon == NULL)
		fail("MHD_start_daemon");
	return daemon;
}

/* Drives one daemon from this thread's epoll set: wait, run, resume what it suspended. */
static void *
drive(void *arg)
{
	Worker	   *worker = arg;
	int			epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event event = {.events = EPOLLIN};

	event.data.fd = MHD_get_daemon_info(worker->daemon, MHD_DAEMON_INFO_EPOLL_FD)->epoll_fd;
	if (epoll_fd < 0 || epoll_ctl(epoll_fd, EPOLL_CTL_ADD, event.data.fd, &event) != 0)
		fail("epoll");
	for (;;)
	{
		MHD_UNSIGNED_LONG_LONG timeout;
		int			wait_ms = -1;

		if (MHD_get_timeout(worker->daemon, &timeout) == MHD_YES)
			wait_ms = timeout < INT_MAX ? (int) timeout : INT_MAX;
		if (epoll_wait(epoll_fd, &event, 1, wait_ms) < 0 && errno != EINTR)
			fail("epoll_wait");
		MHD_run(worker->daemon);
		/* with external polling a resumed connection does not wake the daemon's epoll set: run it again, as its manual asks */
		while (worker->suspended_count > 0)
		{
			for (int i = 0; i < worker->suspended_count; i++)
				MHD_resume_connection(worker->suspended[i]);
			worker->suspended_count = 0;
			MHD_run(worker->daemon);
		}
	}
	return NULL;
}

int
main(int argc, char **argv)
{
	Options		options;
	const char *mode = argc > 1 ? argv[1] : "";
	int			listen_fd;
	static Worker workers[256];
	static void *args[256];

	parse_options(argc, argv, 2, "per-connection|pool|external|suspend ", &options);
	answer = MHD_create_response_from_buffer(strlen(ANSWER_BODY), ANSWER_BODY, MHD_RESPMEM_PERSISTENT);
	if (answer == NULL || MHD_add_response_header(answer, MHD_HTTP_HEADER_CONTENT_TYPE, ANSWER_TYPE) != MHD_YES)
		fail("MHD_create_response_from_buffer");
	listen_fd = listen_socket(options.port, 0);
	if (strcmp(mode, "per-connection") == 0 && options.threads == 1)
		start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL,
					 listen_fd, 1, &options, NULL);
	else if (strcmp(mode, "pool") == 0)
		start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL, listen_fd, options.threads, &options, NULL);
	else if (strcmp(mode, "external") == 0 || strcmp(mode, "suspend") == 0)
		for (int i = 0; i < options.threads; i++)
		{
			workers[i].suspending = strcmp(mode, "suspend") == 0;
			workers[i].daemon = start_daemon(workers[i].suspending ? MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME : MHD_USE_EPOLL,
											 listen_fd, 1, &options, &workers[i]);
			args[i] = &workers[i];
		}
	else
	{
		fprintf(stderr, "%s: MODE is per-connection (THREADS 1), pool, external or suspend\n", argv[0]);
		return 2;
	}
	fprintf(stderr, "mhd_server: %s, %d threads, serving on %d\n", mode, options.threads, options.port);
	if (args[0] != NULL)
		run_threads(options.threads, drive, args);
	else
		pause();
	return 0;
}
