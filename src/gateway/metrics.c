/*
 * metrics.c — ddb-gateway's counters (metrics.h), under one mutex: a
 * request takes it twice at most, which costs nothing next to its round
 * trip to the database.  Labels come from fixed lists (operations,
 * statuses) or from tables a request really touched, so a client cannot
 * grow the series without bound.
 */
#include "metrics.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The operations the gateway serves; any other name counts as "other". */
static const char *const operations[] = {
	"BatchExecuteStatement", "BatchGetItem", "BatchWriteItem", "CreateBackup", "CreateTable", "DeleteBackup",
	"DeleteItem", "DeleteTable", "DescribeBackup", "DescribeContinuousBackups", "DescribeEndpoints",
	"DescribeExport", "DescribeImport", "DescribeLimits", "DescribeStream", "DescribeTable", "DescribeTimeToLive",
	"ExecuteStatement", "ExecuteTransaction", "ExportTableToPointInTime", "GetItem", "GetRecords",
	"GetShardIterator", "ImportTable", "ListBackups", "ListExports", "ListImports", "ListStreams", "ListTables",
	"ListTagsOfResource", "PutItem", "Query", "RestoreTableFromBackup", "RestoreTableToPointInTime", "Scan",
	"TagResource", "TransactGetItems", "TransactWriteItems", "UntagResource", "UpdateContinuousBackups",
	"UpdateItem", "UpdateTable", "UpdateTimeToLive", "other"
};
#define NOPERATIONS (sizeof(operations) / sizeof(operations[0]))

/* The statuses the gateway answers with; any other counts as the last. */
static const unsigned int statuses[] = {200, 400, 403, 404, 405, 413, 500, 503, 0};
#define NSTATUSES (sizeof(statuses) / sizeof(statuses[0]))

/* The latency histogram's upper bounds, in seconds (+Inf beyond). */
static const double buckets[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
#define NBUCKETS (sizeof(buckets) / sizeof(buckets[0]))

/* Past this many tables, capacity is counted under table="_other". */
#define MAX_TABLES 1000

typedef struct TableCapacity
{
	char	   *table;
	double		read;
	double		write;
} TableCapacity;

static pthread_mutex_t metrics_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long requests[NOPERATIONS][NSTATUSES];
static unsigned long latency_buckets[NOPERATIONS][NBUCKETS];	/* cumulative when rendered */
static unsigned long latency_count[NOPERATIONS];
static double latency_sum[NOPERATIONS];
static TableCapacity tables[MAX_TABLES + 1];
static int	ntables;

/* The index of an operation's name, "other" when not one of ours. */
static size_t
operation_index(const char *operation)
{
	for (size_t i = 0; operation && i < NOPERATIONS - 1; i++)
		if (strcmp(operations[i], operation) == 0)
			return i;
	return NOPERATIONS - 1;
}

/* Counts a request: its operation, HTTP status and duration. */
void
metrics_count_request(const char *operation, unsigned int status, double seconds)
{
	size_t		op = operation_index(operation);
	size_t		st = 0;
	size_t		b = 0;

	while (st < NSTATUSES - 1 && statuses[st] != status)
		st++;
	while (b < NBUCKETS && seconds > buckets[b])
		b++;
	pthread_mutex_lock(&metrics_lock);
	requests[op][st]++;
	if (b < NBUCKETS)
		latency_buckets[op][b]++;
	latency_count[op]++;
	latency_sum[op] += seconds;
	pthread_mutex_unlock(&metrics_lock);
}

/* Adds the units a request consumed in a table. */
void
metrics_add_capacity(const char *table, double read_units, double write_units)
{
	int			i;

	pthread_mutex_lock(&metrics_lock);
	for (i = 0; i < ntables; i++)
		if (strcmp(tables[i].table, table) == 0)
			break;
	if (i == ntables)
	{
		char	   *name = ntables < MAX_TABLES ? strdup(table) : NULL;

		if (name == NULL)
		{
			/* the last slot is "_other" */
			i = MAX_TABLES;
			if (tables[i].table == NULL)
				tables[i].table = "_other";
		}
		else
			tables[ntables++].table = name;
	}
	tables[i].read += read_units;
	tables[i].write += write_units;
	pthread_mutex_unlock(&metrics_lock);
}

/* Writes a table name as a label value: backslash, quote and newline escaped. */
static void
write_label(FILE *out, const char *value)
{
	for (const char *c = value; *c; c++)
	{
		if (*c == '\\' || *c == '"')
			fputc('\\', out);
		if (*c == '\n')
			fputs("\\n", out);
		else
			fputc(*c, out);
	}
}

/*
 * Writes the counter of consumed units by table: kind "read" or "write"
 * (writes: the write units, else the read ones); the caller holds
 * metrics_lock.
 */
static void
write_capacity(FILE *out, const char *kind, int writes)
{
	fprintf(out, "# HELP ddb_gateway_consumed_%s_capacity_units_total Capacity units consumed (%s), by table (indexes included).\n"
			"# TYPE ddb_gateway_consumed_%s_capacity_units_total counter\n", kind, kind, kind);
	for (int i = 0; i <= MAX_TABLES; i++)
		if (tables[i].table)
		{
			fprintf(out, "ddb_gateway_consumed_%s_capacity_units_total{table=\"", kind);
			write_label(out, tables[i].table);
			fprintf(out, "\"} %g\n", writes ? tables[i].write : tables[i].read);
		}
}

/* The metrics in Prometheus's text format (malloc'd), with the lanes' use and the standbys'. */
char *
metrics_render(PoolUse use, ReplicaSet *replicas)
{
	char	   *text = NULL;
	size_t		len = 0;
	FILE	   *out = open_memstream(&text, &len);

	if (out == NULL)
		return NULL;
	pthread_mutex_lock(&metrics_lock);
	fputs("# HELP ddb_gateway_requests_total Requests answered, by DynamoDB operation and HTTP status.\n"
		  "# TYPE ddb_gateway_requests_total counter\n", out);
	for (size_t op = 0; op < NOPERATIONS; op++)
		for (size_t st = 0; st < NSTATUSES; st++)
			if (requests[op][st])
			{
				if (statuses[st])
					fprintf(out, "ddb_gateway_requests_total{operation=\"%s\",status=\"%u\"} %lu\n",
							operations[op], statuses[st], requests[op][st]);
				else
					fprintf(out, "ddb_gateway_requests_total{operation=\"%s\",status=\"other\"} %lu\n",
							operations[op], requests[op][st]);
			}
	fputs("# HELP ddb_gateway_request_duration_seconds Time from a request's headers to its response, by operation.\n"
		  "# TYPE ddb_gateway_request_duration_seconds histogram\n", out);
	for (size_t op = 0; op < NOPERATIONS; op++)
	{
		unsigned long cumulative = 0;

		if (latency_count[op] == 0)
			continue;
		for (size_t b = 0; b < NBUCKETS; b++)
		{
			cumulative += latency_buckets[op][b];
			fprintf(out, "ddb_gateway_request_duration_seconds_bucket{operation=\"%s\",le=\"%g\"} %lu\n",
					operations[op], buckets[b], cumulative);
		}
		fprintf(out, "ddb_gateway_request_duration_seconds_bucket{operation=\"%s\",le=\"+Inf\"} %lu\n",
				operations[op], latency_count[op]);
		fprintf(out, "ddb_gateway_request_duration_seconds_sum{operation=\"%s\"} %.6f\n", operations[op], latency_sum[op]);
		fprintf(out, "ddb_gateway_request_duration_seconds_count{operation=\"%s\"} %lu\n", operations[op], latency_count[op]);
	}
	write_capacity(out, "read", 0);
	write_capacity(out, "write", 1);
	pthread_mutex_unlock(&metrics_lock);
	fprintf(out, "# HELP ddb_gateway_pool_connections Database connections to the primary (lanes of the event threads).\n"
			"# TYPE ddb_gateway_pool_connections gauge\n"
			"ddb_gateway_pool_connections %d\n"
			"# HELP ddb_gateway_pool_connections_in_use Database connections with statements in flight now.\n"
			"# TYPE ddb_gateway_pool_connections_in_use gauge\n"
			"ddb_gateway_pool_connections_in_use %d\n"
			"# HELP ddb_gateway_pool_waiting Requests waiting for a database connection to be made now.\n"
			"# TYPE ddb_gateway_pool_waiting gauge\n"
			"ddb_gateway_pool_waiting %d\n",
			use.size, use.in_use, use.waiting);
	if (replicas)
		replicas_render(replicas, out);
	fclose(out);
	return text;
}
