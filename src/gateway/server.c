/*
 * server.c — the listening socket and the HTTP daemon (server.h).
 *
 * The gateway binds the socket itself, so that a port in use or an address
 * not of this machine is said plainly, and hands it to its event threads
 * (worker.c), each with a libmicrohttpd daemon over epoll (no select():
 * descriptors past 1024 work) and its own lanes to the database; --pool
 * connections are shared out among --threads threads.  Stopping a server
 * is gentle: it stops accepting (MHD_quiesce_daemon), its responses ask
 * clients to close, and it is stopped once its requests in flight are
 * answered or the timeout passes.  A reload (SIGHUP, new TLS files) starts
 * a new server on the same socket before stopping the old one, so no
 * connection attempt is refused.
 */
#include "server.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Descriptors the gateway needs beyond its clients', its lanes' and its event threads': the log's, the listener's, the watcher's. */
#define SPARE_DESCRIPTORS 64

struct Server
{
	ServeContext context;		/* with the event threads */
	char	   *cert_pem;		/* kept while the daemons run */
	char	   *key_pem;
};

/* Binds and listens on the settings' address; the socket, or -1 with one line on stderr. */
int
server_listen(const GatewaySettings *settings)
{
	int			fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int			on = 1;

	if (fd < 0)
	{
		fprintf(stderr, "ddb-gateway: cannot open a socket: %s\n", strerror(errno));
		return -1;
	}
	/* a restart may bind while the last run's connections linger in TIME_WAIT */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
	if (bind(fd, (const struct sockaddr *) &settings->address, sizeof(settings->address)) != 0)
	{
		int			err = errno;

		if (err == EADDRINUSE)
			fprintf(stderr, "ddb-gateway: %s is in use by another program: stop it, or choose another port "
					"with --listen HOST:PORT\n", settings->listen);
		else if (err == EADDRNOTAVAIL)
			fprintf(stderr, "ddb-gateway: %s is not an address of this machine: listen on one of its "
					"addresses, or on 0.0.0.0 for all of them\n", settings->listen);
		else if (err == EACCES)
			fprintf(stderr, "ddb-gateway: %s: ports below 1024 need privileges: choose a port from 1024 up, "
					"or give the gateway CAP_NET_BIND_SERVICE (AmbientCapabilities= in its systemd unit)\n",
					settings->listen);
		else
			fprintf(stderr, "ddb-gateway: cannot listen on %s: %s\n", settings->listen, strerror(err));
		close(fd);
		return -1;
	}
	if (listen(fd, 4096) != 0 || fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0)
	{
		fprintf(stderr, "ddb-gateway: cannot listen on %s: %s\n", settings->listen, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* Raises the soft file-descriptor limit to what --max-connections needs; -1 when the hard limit is lower. */
int
server_raise_fd_limit(const GatewaySettings *settings)
{
	struct rlimit limit;
	/*
	 * A reload runs two servers for a moment, each with its lanes to the
	 * primary and to each replica, and its event threads' own (an epoll, an
	 * eventfd, the daemon's epoll and wake-up, the listening socket's copy,
	 * and, in front of a router, a lane to each shard node).
	 */
	rlim_t		needed = (rlim_t) settings->max_connections +
		2 * ((rlim_t) settings->pool * (1 + settings->nreplicas) +
			 (5 + WORKER_NODES_MAX) * (rlim_t) settings->threads) + SPARE_DESCRIPTORS;

	if (getrlimit(RLIMIT_NOFILE, &limit) != 0)
		return 0;
	if (limit.rlim_cur >= needed)
		return 0;
	if (limit.rlim_max != RLIM_INFINITY && limit.rlim_max < needed)
	{
		fprintf(stderr, "ddb-gateway: --max-connections %d needs %lu file descriptors, but this process may open "
				"only %lu: raise the limit (ulimit -n in a shell, LimitNOFILE= in a systemd unit) or lower "
				"--max-connections\n", settings->max_connections, (unsigned long) needed,
				(unsigned long) limit.rlim_max);
		return -1;
	}
	limit.rlim_cur = needed;
	if (setrlimit(RLIMIT_NOFILE, &limit) != 0)
	{
		fprintf(stderr, "ddb-gateway: cannot raise the file-descriptor limit to %lu: %s\n",
				(unsigned long) needed, strerror(errno));
		return -1;
	}
	return 0;
}

/* A file's contents as a string (malloc'd); NULL with one line on stderr. */
static char *
read_file(const char *path, const char *setting)
{
	FILE	   *file = fopen(path, "r");
	char	   *text = NULL;
	size_t		len = 0;
	size_t		cap = 0;
	size_t		n;

	if (file == NULL)
	{
		fprintf(stderr, "ddb-gateway: --%s: cannot read %s: %s\n", setting, path, strerror(errno));
		return NULL;
	}
	do
	{
		if (len + 4096 + 1 > cap)
		{
			char	   *grown;

			cap = (len + 4096 + 1) * 2;
			if ((grown = realloc(text, cap)) == NULL)
			{
				free(text);
				fclose(file);
				return NULL;
			}
			text = grown;
		}
		n = fread(text + len, 1, 4096, file);
		len += n;
	} while (n > 0);
	fclose(file);
	text[len] = '\0';
	return text;
}

/* Frees a server whose event threads stopped, and its TLS files, the private key wiped first. */
static void
free_server(Server *server)
{
	if (server->key_pem)
		explicit_bzero(server->key_pem, strlen(server->key_pem));
	free(server->key_pem);
	free(server->cert_pem);
	free(server->context.workers);
	free(server);
}

/* Stops the event threads started so far. */
static void
stop_workers(Server *server)
{
	for (int i = 0; i < server->context.nworkers; i++)
		worker_stop(server->context.workers[i]);
	server->context.nworkers = 0;
}

/* Starts serving the socket; NULL with one line on stderr. */
Server *
server_start(const GatewaySettings *settings, int listen_fd, ReplicaSet *replicas)
{
	Server	   *server = calloc(1, sizeof(Server));
	struct MHD_OptionItem options[3];
	int			n = 0;
	unsigned int flags = 0;
	int			threads = settings->threads;

	if (server == NULL || (server->context.workers = calloc(threads, sizeof(Worker *))) == NULL)
	{
		free(server);
		return NULL;
	}
	server->context.replicas = replicas;
	server->context.settings = settings;
	if (settings->tls_cert)
	{
		if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES)
		{
			fprintf(stderr, "ddb-gateway: this libmicrohttpd was built without TLS: install Debian's libmicrohttpd12\n");
			free_server(server);
			return NULL;
		}
		server->cert_pem = read_file(settings->tls_cert, "tls-cert");
		server->key_pem = server->cert_pem ? read_file(settings->tls_key, "tls-key") : NULL;
		if (server->key_pem == NULL)
		{
			free_server(server);
			return NULL;
		}
		flags |= MHD_USE_TLS;
		options[n++] = (struct MHD_OptionItem) {MHD_OPTION_HTTPS_MEM_CERT, 0, server->cert_pem};
		options[n++] = (struct MHD_OptionItem) {MHD_OPTION_HTTPS_MEM_KEY, 0, server->key_pem};
	}
	options[n++] = (struct MHD_OptionItem) {MHD_OPTION_END, 0, NULL};
	for (int i = 0; i < threads; i++)
	{
		/* the connections and clients shared out, the first threads taking what does not divide */
		int			lanes = settings->pool / threads + (i < settings->pool % threads);
		int			clients = settings->max_connections / threads + (i < settings->max_connections % threads);
		Worker	   *worker = worker_start(&server->context, listen_fd, flags, options, clients > 0 ? clients : 1, lanes);

		if (worker == NULL)
		{
			if (settings->tls_cert)
				fprintf(stderr, "ddb-gateway: cannot serve HTTPS with %s and %s: are both PEM, and is the key the "
						"certificate's?\n", settings->tls_cert, settings->tls_key);
			else
				fprintf(stderr, "ddb-gateway: cannot serve on %s\n", settings->listen);
			stop_workers(server);
			free_server(server);
			return NULL;
		}
		server->context.workers[server->context.nworkers++] = worker;
	}
	return server;
}

/*
 * Stops accepting (closing listen_fd unless it is -1), waits up to timeout
 * seconds for the requests in flight, then stops.
 */
void
server_stop(Server *server, int timeout_seconds, int listen_fd)
{
	struct timespec start;
	struct timespec now;

	__atomic_store_n(&server->context.draining, 1, __ATOMIC_RELAXED);
	/* each event thread closes its descriptor; the socket closes with the last one */
	for (int i = 0; i < server->context.nworkers; i++)
		worker_quiesce(server->context.workers[i]);
	/* stopping for good: new clients are refused at once */
	if (listen_fd >= 0)
		close(listen_fd);
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (__atomic_load_n(&server->context.in_flight, __ATOMIC_RELAXED) > 0)
	{
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec >= timeout_seconds)
		{
			fprintf(stderr, "ddb-gateway: %d requests still in flight after %d seconds: closing their connections\n",
					__atomic_load_n(&server->context.in_flight, __ATOMIC_RELAXED), timeout_seconds);
			break;
		}
		usleep(20 * 1000);
	}
	stop_workers(server);
	free_server(server);
}
