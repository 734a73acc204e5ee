/*
 * gateway.c — ddb-gateway, DynamoDB's HTTP protocol in front of
 * ddb.execute.
 *
 *   ddb-gateway [--config FILE] [--listen 127.0.0.1:8000] [--dsn CONNINFO] [--pool 4]
 *               [--tls-cert FILE --tls-key FILE] ...      (ddb-gateway --help)
 *
 * Checks its settings, raises its descriptor limit, binds its address and
 * starts serving, then waits for the database (trying again with back-off
 * while it cannot be reached; GET /health says 503 meanwhile) and checks
 * that it has the extension of this version.  Then it serves until SIGTERM
 * or SIGINT, which let the requests in flight finish (within
 * --shutdown-timeout) and exit 0; SIGHUP empties the key cache, reopens
 * the access log and reloads the TLS files.  docs/operations.md.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <time.h>
#include <unistd.h>

#include "access_log.h"
#include "handler.h"
#include "health.h"
#include "keycache.h"
#include "connect.h"
#include "connector.h"
#include "replicas.h"
#include "server.h"
#include "shard_direct.h"
#include "settings.h"
#include "sigv4.h"

/* The longest wait between two attempts to reach the database, in seconds. */
#define MAX_RETRY_SECONDS 30

/*
 * Says once how to point the gateway at a database: the dsn setting, and
 * without it libpq's defaults and PG* variables.
 */
static void
say_how_to_reach_a_database(const GatewaySettings *settings)
{
	if (settings->dsn[0] == '\0')
		fprintf(stderr, "ddb-gateway: no dsn setting was given, so libpq's defaults and the PGHOST, PGPORT, PGDATABASE "
				"and PGUSER variables name the database, as for psql: point the gateway at the database that has "
				"ddb_model with --dsn \"host=HOST port=PORT dbname=NAME user=USER\" (or DDB_GATEWAY_DSN, or "
				"`dsn = ...` in its --config file); it keeps trying meanwhile\n");
	else
		fprintf(stderr, "ddb-gateway: check that the server of the dsn setting runs and lets the gateway in, or point "
				"the gateway at the database that has ddb_model with --dsn \"host=HOST port=PORT dbname=NAME "
				"user=USER\" (or DDB_GATEWAY_DSN, or `dsn = ...` in its --config file); it keeps trying meanwhile\n");
}

/*
 * Waits until the database answers with the extension of this version: 0;
 * 1 when it answers without it (or with another version: said on stderr);
 * 2 when a stop signal came first.  While it cannot be reached, the first
 * failure also says how to point the gateway at a database.
 */
static int
wait_for_database(const GatewaySettings *settings, const sigset_t *signals)
{
	int			wait_seconds = 1;
	int			said_how = 0;

	for (;;)
	{
		char		detail[512];
		DatabaseState state = health_check_dsn(settings->dsn, detail, sizeof(detail));
		struct timespec timeout = {0, 0};
		int			signo;

		if (state == DATABASE_READY)
			return 0;
		if (state == DATABASE_NO_EXTENSION || state == DATABASE_OTHER_VERSION)
		{
			fprintf(stderr, "ddb-gateway: %s\n", detail);
			return 1;
		}
		fprintf(stderr, "ddb-gateway: %s; trying again in %d s (GET /health answers 503 meanwhile)\n",
				detail, wait_seconds);
		if (!said_how && state == DATABASE_UNREACHABLE)
		{
			say_how_to_reach_a_database(settings);
			said_how = 1;
		}
		timeout.tv_sec = wait_seconds;
		do
			signo = sigtimedwait(signals, NULL, &timeout);
		while (signo == SIGHUP);
		if (signo == SIGINT || signo == SIGTERM)
			return 2;
		wait_seconds = wait_seconds * 2 < MAX_RETRY_SECONDS ? wait_seconds * 2 : MAX_RETRY_SECONDS;
	}
}

/* SIGHUP: empties the key cache, reopens the access log, and serves with the TLS files read again. */
static Server *
reload(const GatewaySettings *settings, Server *server, int listen_fd, ReplicaSet *replicas)
{
	Server	   *replacement;

	keycache_flush();
	if (access_log_reopen() != 0)
		fprintf(stderr, "ddb-gateway: cannot reopen the access log %s: %s\n", settings->access_log, strerror(errno));
	if (settings->tls_cert == NULL)
	{
		fprintf(stderr, "ddb-gateway: reloaded: key cache emptied, access log reopened\n");
		return server;
	}
	replacement = server_start(settings, listen_fd, replicas);
	if (replacement == NULL)
	{
		fprintf(stderr, "ddb-gateway: the new TLS files were not taken: still serving with the old ones\n");
		return server;
	}
	server_stop(server, settings->shutdown_timeout, -1);
	fprintf(stderr, "ddb-gateway: reloaded: key cache emptied, access log reopened, TLS files read again\n");
	return replacement;
}

/* Runs the gateway until a stop signal. */
int
main(int argc, char **argv)
{
	GatewaySettings settings;
	sigset_t	signals;
	int			listen_fd;
	ReplicaSet *replicas;
	Server	   *server;
	int			signo;
	int			waited;

	settings_load(argc, argv, &settings);
	/* blocked in every thread (those of libmicrohttpd and libpq inherit the mask): main waits for them */
	sigemptyset(&signals);
	sigaddset(&signals, SIGINT);
	sigaddset(&signals, SIGTERM);
	sigaddset(&signals, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &signals, NULL);
	if (server_raise_fd_limit(&settings) != 0)
		return 1;
	if (gateway_start_request_ids() != 0)
	{
		fprintf(stderr, "ddb-gateway: the system gives no random bytes for request ids: %s\n", strerror(errno));
		return 1;
	}
	if (!settings.development && sigv4_start() != 0)
	{
		fprintf(stderr, "ddb-gateway: OpenSSL has no SHA-256 to check signatures with\n");
		return 1;
	}
	if (access_log_open(settings.access_log) != 0)
	{
		fprintf(stderr, "ddb-gateway: --access-log: cannot open %s: %s\n", settings.access_log, strerror(errno));
		return 1;
	}
	if ((listen_fd = server_listen(&settings)) < 0)
		return 1;
	db_set_timeouts(settings.connect_timeout, settings.request_timeout);
	connector_configure(settings.dsn, settings.endpoint_address);
	/* the standbys are watched from now on: reads go to one once it is seen well */
	replicas = replicas_start(&settings);
	if (settings.nreplicas > 0 && replicas == NULL)
	{
		fprintf(stderr, "ddb-gateway: cannot start watching the replicas\n");
		return 1;
	}
	if ((server = server_start(&settings, listen_fd, replicas)) == NULL)
		return 1;
	fprintf(stderr, "ddb-gateway: listening on %s (%s), %d event threads, %d database connections, up to %d clients\n",
			settings.listen, settings.tls_cert ? "HTTPS" : "HTTP", settings.threads, settings.pool,
			settings.max_connections);
	if (settings.development)
		fprintf(stderr, "ddb-gateway: DEVELOPMENT MODE: any access key, or none, is taken, and every request runs as "
				"the database role of the dsn setting: for ddb-local, tests and benchmarks, never for data that matters\n");

	waited = wait_for_database(&settings, &signals);
	if (waited != 0)
	{
		server_stop(server, settings.shutdown_timeout, listen_fd);
		access_log_close();
		return waited == 1 ? 1 : 0;
	}
	if (health_is_router(settings.dsn) == 1)
	{
		fprintf(stderr, "ddb-gateway: the database is the router of a sharded deployment (ddb_router): requests go to its shard nodes\n");
		/* requests of one partition key go straight to their node, by the router's map (shard_map.c) */
		if (shard_direct_start(settings.dsn) != 0)
			fprintf(stderr, "ddb-gateway: every request goes through the router: cannot start reading its map\n");
	}
	/* signed requests look their keys up in a cache the database keeps fresh (keycache.c) */
	if (!settings.development && keycache_start(settings.dsn) != 0)
		fprintf(stderr, "ddb-gateway: key cache off: cannot start its listener\n");
	__atomic_store_n(&gateway_ready, 1, __ATOMIC_RELEASE);
	fprintf(stderr, "ddb-gateway: ready: the database has ddb_model %s\n", GATEWAY_EXTENSION_VERSION);

	while (sigwait(&signals, &signo) == 0 && signo == SIGHUP)
		server = reload(&settings, server, listen_fd, replicas);
	fprintf(stderr, "ddb-gateway: stopping: answering the requests in flight (up to %d s)\n", settings.shutdown_timeout);
	server_stop(server, settings.shutdown_timeout, listen_fd);
	access_log_close();
	fprintf(stderr, "ddb-gateway: stopped\n");
	return 0;
}
