/*
 * server.c — the listening socket and the HTTP daemon (server.h).
 *
 * The gateway binds the socket itself, so that a port in use or an address
 * not of this machine is said plainly, and hands it to libmicrohttpd.  A
 * daemon serves it with a thread per pooled connection, over epoll (no
 * select(): descriptors past 1024 work).  Stopping one is gentle: it stops
 * accepting (MHD_quiesce_daemon), its responses ask clients to close, and
 * it is stopped once its requests in flight are answered or the timeout
 * passes.  A reload (SIGHUP, new TLS files) starts a new daemon on the same
 * socket before stopping the old one, so no connection attempt is refused.
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

/* Descriptors the gateway needs beyond its clients': the pool's, the log's, libpq's and the listener's. */
#define SPARE_DESCRIPTORS 64

struct Server
{
	struct MHD_Daemon *daemon;
	int			fd;				/* the daemon's own descriptor of the listening socket (a dup) */
	ServeContext context;
	char	   *cert_pem;		/* kept while the daemon runs */
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
	rlim_t		needed = (rlim_t) settings->max_connections + 2 * settings->pool + SPARE_DESCRIPTORS;

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

/* Frees a server and its TLS files, the private key wiped first. */
static void
free_server(Server *server)
{
	if (server->key_pem)
		explicit_bzero(server->key_pem, strlen(server->key_pem));
	free(server->key_pem);
	free(server->cert_pem);
	free(server);
}

/* libmicrohttpd's messages, prefixed as the gateway's own. */
static void
log_daemon_message(void *cls, const char *format, va_list args)
{
	char		message[512];

	vsnprintf(message, sizeof(message), format, args);
	fprintf(stderr, "ddb-gateway: http: %s%s", message, message[0] && message[strlen(message) - 1] == '\n' ? "" : "\n");
}

/* Starts serving the socket; NULL with one line on stderr. */
Server *
server_start(const GatewaySettings *settings, int listen_fd, ConnPool *pool, ReplicaSet *replicas)
{
	Server	   *server = calloc(1, sizeof(Server));
	struct MHD_OptionItem options[10];
	int			n = 0;
	unsigned int flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG | MHD_USE_ITC;

	if (server == NULL)
		return NULL;
	server->context.pool = pool;
	server->context.replicas = replicas;
	server->context.settings = settings;
	if (settings->tls_cert)
	{
		if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES)
		{
			fprintf(stderr, "ddb-gateway: this libmicrohttpd was built without TLS: install Debian's libmicrohttpd12\n");
			free(server);
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
	/*
	 * The daemon gets a descriptor of its own: libmicrohttpd closes the one
	 * it was given when it fails to start, and the running daemon's must stay.
	 */
	server->fd = dup(listen_fd);
	if (server->fd < 0)
	{
		fprintf(stderr, "ddb-gateway: cannot serve on %s: %s\n", settings->listen, strerror(errno));
		free_server(server);
		return NULL;
	}
	options[n++] = (struct MHD_OptionItem) {MHD_OPTION_LISTEN_SOCKET, server->fd, NULL};
	options[n++] = (struct MHD_OptionItem) {MHD_OPTION_THREAD_POOL_SIZE, settings->pool, NULL};
	options[n++] = (struct MHD_OptionItem) {MHD_OPTION_CONNECTION_LIMIT, settings->max_connections, NULL};
	options[n++] = (struct MHD_OptionItem) {MHD_OPTION_CONNECTION_TIMEOUT, 60, NULL};
	options[n++] = (struct MHD_OptionItem) {MHD_OPTION_END, 0, NULL};
	server->daemon = MHD_start_daemon(flags, 0, NULL, NULL, gateway_handle, &server->context,
									  MHD_OPTION_EXTERNAL_LOGGER, log_daemon_message, NULL,
									  MHD_OPTION_NOTIFY_COMPLETED, gateway_request_done, &server->context,
									  MHD_OPTION_ARRAY, options,
									  MHD_OPTION_END);
	if (server->daemon == NULL)
	{
		if (settings->tls_cert)
			fprintf(stderr, "ddb-gateway: cannot serve HTTPS with %s and %s: are both PEM, and is the key the "
					"certificate's?\n", settings->tls_cert, settings->tls_key);
		else
			fprintf(stderr, "ddb-gateway: cannot serve on %s\n", settings->listen);
		free_server(server);
		return NULL;
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
	/* the daemon's descriptor comes back to us; the socket closes with the last one */
	if (MHD_quiesce_daemon(server->daemon) == server->fd)
		close(server->fd);
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
	MHD_stop_daemon(server->daemon);
	free_server(server);
}
