/*
 * gateway.c — ddb-gateway, DynamoDB's HTTP protocol in front of ddb.execute.
 *
 *   ddb-gateway [--listen 127.0.0.1:8000] --dsn "host=... dbname=..." [--pool 4] [--no-auth]
 *
 * Listens on loopback unless told otherwise, serves each request on one of
 * the pool's connections (as many requests in parallel as the pool has
 * connections), and stops on SIGINT or SIGTERM.  docs/gateway.md.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "handler.h"
#include "keycache.h"
#include "pool.h"
#include "sigv4.h"

/* Prints the usage and exits with status. */
static void
usage(int status)
{
	fprintf(status ? stderr : stdout,
			"usage: ddb-gateway [--listen HOST:PORT] --dsn CONNINFO [--pool N] [--no-auth]\n"
			"  --listen   IPv4 address and port (default 127.0.0.1:8000)\n"
			"  --dsn      libpq connection string of the database with ddb_model\n"
			"  --pool     connections, and requests served at once (default 4)\n"
			"  --no-auth  skip signature checks (loopback only: for benchmarks)\n");
	exit(status);
}

/* Parses HOST:PORT into an IPv4 socket address; 0 on success. */
static int
parse_listen(const char *text, struct sockaddr_in *addr)
{
	const char *colon = strrchr(text, ':');
	char		host[64];
	long		port;

	if (colon == NULL || colon - text >= (long) sizeof(host))
		return -1;
	memcpy(host, text, colon - text);
	host[colon - text] = '\0';
	port = strtol(colon + 1, NULL, 10);
	if (port <= 0 || port > 65535)
		return -1;
	memset(addr, 0, sizeof(*addr));
	addr->sin_family = AF_INET;
	addr->sin_port = htons((uint16_t) port);
	return inet_pton(AF_INET, host, &addr->sin_addr) == 1 ? 0 : -1;
}

/* Runs the gateway until a signal stops it. */
int
main(int argc, char **argv)
{
	const char *listen_on = "127.0.0.1:8000";
	const char *dsn = NULL;
	int			pool_size = 4;
	struct sockaddr_in addr;
	ConnPool   *pool;
	struct MHD_Daemon *daemon;
	sigset_t	stop_signals;
	int			signo;

	for (int i = 1; i < argc; i++)
	{
		if (strcmp(argv[i], "--help") == 0)
			usage(0);
		else if (i + 1 < argc && strcmp(argv[i], "--listen") == 0)
			listen_on = argv[++i];
		else if (i + 1 < argc && strcmp(argv[i], "--dsn") == 0)
			dsn = argv[++i];
		else if (i + 1 < argc && strcmp(argv[i], "--pool") == 0)
			pool_size = atoi(argv[++i]);
		else if (strcmp(argv[i], "--no-auth") == 0)
			gateway_require_auth = 0;
		else
			usage(2);
	}
	if (dsn == NULL || pool_size < 1 || pool_size > 256)
		usage(2);
	if (parse_listen(listen_on, &addr) != 0)
	{
		fprintf(stderr, "ddb-gateway: --listen takes an IPv4 HOST:PORT, not %s\n", listen_on);
		return 2;
	}
	if (!gateway_require_auth && ntohl(addr.sin_addr.s_addr) >> 24 != 127)
	{
		fprintf(stderr, "ddb-gateway: --no-auth is for loopback addresses only\n");
		return 2;
	}
	if (gateway_require_auth && sigv4_start() != 0)
	{
		fprintf(stderr, "ddb-gateway: OpenSSL has no SHA-256 to check signatures with\n");
		return 1;
	}
	pool = pool_open(dsn, pool_size);
	if (pool == NULL)
		return 1;
	/* blocked in every thread (MHD's inherit the mask): the main thread waits for them */
	sigemptyset(&stop_signals);
	sigaddset(&stop_signals, SIGINT);
	sigaddset(&stop_signals, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &stop_signals, NULL);
	/* signed requests look their keys up in a cache the database keeps fresh (keycache.c) */
	if (gateway_require_auth && keycache_start(dsn) != 0)
		fprintf(stderr, "ddb-gateway: key cache off: cannot start its listener\n");
	/* epoll where there is one: select() would stop at descriptor 1024, and costs more per call */
	daemon = MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG, 0, NULL, NULL,
							  gateway_handle, pool,
							  MHD_OPTION_SOCK_ADDR, (struct sockaddr *) &addr,
							  MHD_OPTION_THREAD_POOL_SIZE, (unsigned int) pool_size,
							  MHD_OPTION_NOTIFY_COMPLETED, gateway_request_done, NULL,
							  MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int) 60,
							  MHD_OPTION_END);
	if (daemon == NULL)
	{
		fprintf(stderr, "ddb-gateway: cannot listen on %s\n", listen_on);
		pool_close(pool);
		return 1;
	}
	fprintf(stderr, "ddb-gateway: listening on %s with %d connections\n", listen_on, pool_size);
	sigwait(&stop_signals, &signo);
	MHD_stop_daemon(daemon);
	pool_close(pool);
	return 0;
}
