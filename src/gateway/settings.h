/*
 * settings.h — ddb-gateway's settings: each a command-line flag, an
 * environment variable (DDB_GATEWAY_ and the flag's name in capitals, '-'
 * as '_') and a line of the config file (`name = value`), in that order of
 * precedence.  docs/operations.md.
 */
#ifndef DDB_GATEWAY_SETTINGS_H
#define DDB_GATEWAY_SETTINGS_H

#include <netinet/in.h>

#include "cors.h"

/* Who may read GET /metrics. */
typedef enum MetricsAccess
{
	METRICS_LOOPBACK,			/* clients on 127.0.0.0/8 (the default) */
	METRICS_ANY,
	METRICS_OFF
} MetricsAccess;

/* The most hot standbys the gateway reads from. */
#define MAX_REPLICAS 8

typedef struct GatewaySettings
{
	char	   *listen;			/* HOST:PORT as given */
	char	   *endpoint_address;	/* DescribeEndpoints' address; the listen address when not given */
	struct sockaddr_in address; /* listen, parsed */
	char	   *dsn;			/* libpq connection string; "" = libpq's defaults */
	int			pool;			/* database connections to the primary (and to each replica) */
	int			threads;		/* event threads (worker.c), at most pool */
	int			max_connections;	/* client connections served at once */
	int			connection_memory;	/* bytes each keeps for headers (libmicrohttpd's pool) */
	char	   *tls_cert;		/* PEM files, both or neither */
	char	   *tls_key;
	int			insecure_listen;	/* plain HTTP allowed beyond loopback */
	int			development;	/* any access key or none: requests run as the dsn's role */
	char	   *access_log;		/* a file, "-" (stderr) or "off" */
	int			connect_timeout;	/* seconds one attempt to connect may take, over all the dsn's hosts */
	int			request_timeout;	/* seconds one statement's round trip may take */
	int			shutdown_timeout;	/* seconds SIGTERM waits for requests in flight */
	MetricsAccess metrics;
	char	   *replicas[MAX_REPLICAS];	/* libpq connection strings of hot standbys */
	int			nreplicas;
	int			max_replica_lag;	/* seconds a standby may lag and still serve reads */
	char	   *cors;			/* origins whose web pages may call the gateway, as given; NULL: off */
	CorsPolicy	cors_policy;	/* cors, parsed */
} GatewaySettings;

/*
 * Fills settings from argv, the environment and the config file (--config
 * or DDB_GATEWAY_CONFIG), and checks them; on a bad setting prints one line
 * saying what to do and exits 2 (--help: the usage, --version: the
 * version, on stdout, exit 0).
 */
extern void settings_load(int argc, char **argv, GatewaySettings *settings);

/* True when the address is on loopback (127.0.0.0/8). */
extern int	settings_is_loopback(const struct sockaddr_in *address);

#endif
