/*
 * replicas.c — hot standbys for eventually consistent reads (replicas.h).
 *
 * A watcher thread asks each standby, every second on a connection of its
 * own, how far its replay is behind (now minus the time of the last
 * transaction replayed, or 0 when it has replayed all it received) and
 * which version of ddb_model it has; a standby is usable while it answers,
 * is in recovery, has this gateway's version and lags at most
 * --max-replica-lag seconds.
 * A request whose connection to a standby fails marks it unusable at once
 * (and is served by the primary); the watcher makes it usable again.  The
 * event threads read from a standby on lanes of their own (worker.c).
 */
#include "replicas.h"

#include <libpq-fe.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "connect.h"
#include "health.h"

typedef struct Replica
{
	char	   *dsn;
	unsigned int generation;	/* atomic: bumped when the server is no longer a standby (lane.h) */
	PGconn	   *watch;			/* the watcher's connection */
	int			usable;			/* atomic */
	double		lag;			/* seconds, as last seen (under the watcher only, read racily for metrics) */
	unsigned long reads;		/* atomic */
} Replica;

struct ReplicaSet
{
	Replica		replicas[MAX_REPLICAS];
	int			n;
	int			max_lag;
	unsigned int next;			/* atomic: the next to try */
	unsigned long primary_reads;	/* atomic */
};

#define LAG_QUERY \
	"SELECT pg_catalog.pg_is_in_recovery(), " \
	"CASE WHEN NOT pg_catalog.pg_is_in_recovery() " \
	"  OR pg_catalog.pg_last_wal_receive_lsn() OPERATOR(pg_catalog.=) pg_catalog.pg_last_wal_replay_lsn() THEN 0 " \
	"  ELSE coalesce(extract(epoch FROM pg_catalog.now() OPERATOR(pg_catalog.-) pg_catalog.pg_last_xact_replay_timestamp()), 0) END, " \
	"(SELECT extversion FROM pg_catalog.pg_extension WHERE extname = 'ddb_model')"

/*
 * Checks one standby on the watcher's connection (reconnecting it when
 * needed): usable or not.  A server that is no longer a standby (promoted
 * in a failover) is not: the watcher's connection and the standby's lanes
 * connect again, so that a dsn naming several hosts with
 * target_session_attrs=standby finds the one that is a standby now.
 */
static int
watch_one(ReplicaSet *set, Replica *r)
{
	PGresult   *res;
	int			usable;

	if (r->watch == NULL || PQstatus(r->watch) != CONNECTION_OK)
	{
		PQfinish(r->watch);
		r->watch = db_connect(r->dsn);
		if (PQstatus(r->watch) != CONNECTION_OK)
			return 0;
	}
	res = db_query(r->watch, LAG_QUERY);
	usable = PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1 &&
		strcmp(PQgetvalue(res, 0, 2), GATEWAY_EXTENSION_VERSION) == 0;
	if (usable && strcmp(PQgetvalue(res, 0, 0), "t") != 0)
	{
		usable = 0;
		PQfinish(r->watch);
		r->watch = NULL;
		__atomic_add_fetch(&r->generation, 1, __ATOMIC_RELAXED);
	}
	else if (usable)
	{
		r->lag = atof(PQgetvalue(res, 0, 1));
		usable = r->lag <= set->max_lag;
	}
	PQclear(res);
	return usable;
}

/* The watcher thread: every second, each standby's state. */
static void *
watcher_main(void *arg)
{
	ReplicaSet *set = arg;

	for (;;)
	{
		for (int i = 0; i < set->n; i++)
		{
			Replica    *r = &set->replicas[i];
			int			usable = watch_one(set, r);

			if (usable != __atomic_exchange_n(&r->usable, usable, __ATOMIC_RELAXED))
				fprintf(stderr, "ddb-gateway: replica %d %s\n", i + 1,
						usable ? "serves reads" :
						"skipped: cannot be reached, is not a standby, lags too far or has another version of ddb_model");
		}
		sleep(1);
	}
	return NULL;
}

/* The settings' standbys, watched by a thread of their own; NULL when there are none. */
ReplicaSet *
replicas_start(const GatewaySettings *settings)
{
	ReplicaSet *set;
	pthread_t	thread;

	if (settings->nreplicas == 0)
		return NULL;
	set = calloc(1, sizeof(ReplicaSet));
	if (set == NULL)
		return NULL;
	set->n = settings->nreplicas;
	set->max_lag = settings->max_replica_lag;
	for (int i = 0; i < set->n; i++)
		set->replicas[i].dsn = settings->replicas[i];
	if (pthread_create(&thread, NULL, watcher_main, set) != 0)
		return NULL;
	pthread_detach(thread);
	return set;
}

/* The number of standbys (0 for none). */
int
replicas_count(const ReplicaSet *set)
{
	return set ? set->n : 0;
}

/* What a standby's lanes watch to connect again after it changed role. */
const unsigned int *
replicas_generation(ReplicaSet *set, int index)
{
	return &set->replicas[index].generation;
}

/* A usable standby, taken in turn, or -1. */
int
replicas_pick(ReplicaSet *set)
{
	unsigned int start = __atomic_fetch_add(&set->next, 1, __ATOMIC_RELAXED);

	for (int k = 0; k < set->n; k++)
	{
		int			i = (int) ((start + k) % (unsigned int) set->n);

		if (__atomic_load_n(&set->replicas[i].usable, __ATOMIC_RELAXED))
			return i;
	}
	return -1;
}

/* A request could not use standby index: skipped until the watcher finds it well. */
void
replicas_failed(ReplicaSet *set, int index)
{
	if (__atomic_exchange_n(&set->replicas[index].usable, 0, __ATOMIC_RELAXED))
		fprintf(stderr, "ddb-gateway: replica %d skipped: a request could not use it\n", index + 1);
}

/* Counts a read served by standby index, or by the primary (-1). */
void
replicas_count_read(ReplicaSet *set, int index)
{
	__atomic_add_fetch(index < 0 ? &set->primary_reads : &set->replicas[index].reads, 1, __ATOMIC_RELAXED);
}

/* Writes the standbys' metrics. */
void
replicas_render(ReplicaSet *set, FILE *out)
{
	fprintf(out, "# HELP ddb_gateway_reads_total Eventually consistent reads, by the node that served them.\n"
			"# TYPE ddb_gateway_reads_total counter\n"
			"ddb_gateway_reads_total{node=\"primary\"} %lu\n",
			__atomic_load_n(&set->primary_reads, __ATOMIC_RELAXED));
	for (int i = 0; i < set->n; i++)
		fprintf(out, "ddb_gateway_reads_total{node=\"replica%d\"} %lu\n", i + 1,
				__atomic_load_n(&set->replicas[i].reads, __ATOMIC_RELAXED));
	fputs("# HELP ddb_gateway_replica_lag_seconds How far a standby's replay was behind, when last asked.\n"
		  "# TYPE ddb_gateway_replica_lag_seconds gauge\n", out);
	for (int i = 0; i < set->n; i++)
		fprintf(out, "ddb_gateway_replica_lag_seconds{replica=\"%d\"} %.3f\n", i + 1, set->replicas[i].lag);
	fputs("# HELP ddb_gateway_replica_usable Whether a standby serves reads now (1) or is skipped (0).\n"
		  "# TYPE ddb_gateway_replica_usable gauge\n", out);
	for (int i = 0; i < set->n; i++)
		fprintf(out, "ddb_gateway_replica_usable{replica=\"%d\"} %d\n", i + 1,
				__atomic_load_n(&set->replicas[i].usable, __ATOMIC_RELAXED));
}
