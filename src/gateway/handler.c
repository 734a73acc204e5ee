/*
 * handler.c — serves one HTTP request, in an event thread (worker.c).
 *
 * A DynamoDB request is a POST with X-Amz-Target:
 * DynamoDB_20120810.<Action> and a JSON body, answered by
 * ddb.execute_metered on a lane of the request's event thread (respond.c
 * maps its result to DynamoDB's).  A request must be signed (SigV4,
 * sigv4.c); it runs as its key's role.  Once its body is in, a request
 * whose statement is sent is suspended, and its callback, when the result
 * comes, prepares the response and resumes it: the handler's next call
 * queues it.
 *
 * GET /health says whether the database answers with the extension of this
 * gateway's version (200 or 503); GET /metrics serves metrics.c's counters
 * to the clients the metrics setting allows.  With the cors setting, a
 * CORS preflight is answered without a signature, and the responses to the
 * pages of the origins it allows carry CORS headers (cors.c).  Every
 * request ends in one access-log line, and a DynamoDB request is counted
 * in the metrics.
 */
#include "handler.h"

#include <arpa/inet.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "access_log.h"
#include "connect.h"
#include "cors.h"
#include "health.h"
#include "metrics.h"
#include "request.h"
#include "respond.h"
#include "shard_direct.h"
#include "sigv4.h"

#define TARGET_PREFIX "DynamoDB_20120810."
#define STREAMS_TARGET_PREFIX "DynamoDBStreams_20120810."

int			gateway_ready = 0;

/* Request ids: a random prefix per run (gateway_start_request_ids), then a count. */
static unsigned long long request_id_prefix;
static unsigned long long request_count;

/* A response was prepared by a callback: the request is resumed, and the handler's next call queues it. */
static void
finish(RequestState *state)
{
	if (state->suspended)
	{
		state->suspended = 0;
		MHD_resume_connection(state->connection);
		worker_resumed(state->worker);
	}
}

/* Sends a statement for the request on a lane; done gets its result. */
static void
submit(RequestState *state, Lane *lane, LaneStatement statement, int nparams, CallDone done)
{
	state->call.statement = statement;
	state->call.nparams = nparams;
	state->call.done = done;
	lane_submit(lane, &state->call);
}

/*
 * Counts the capacity a request consumed ({"Table": [read, write], ...}, the
 * first line of ddb.execute_metered's answer) in the metrics, and notes its
 * tables for the log.
 */
static void
note_consumed(RequestState *state, const char *consumed)
{
	json_t	   *units = json_loads(consumed, 0, NULL);
	const char *table;
	json_t	   *pair;
	char	   *tables = NULL;
	size_t		len = 0;
	FILE	   *out;

	if (units == NULL)
		return;
	out = open_memstream(&tables, &len);
	json_object_foreach(units, table, pair)
	{
		metrics_add_capacity(table, json_number_value(json_array_get(pair, 0)),
							 json_number_value(json_array_get(pair, 1)));
		if (out)
			fprintf(out, "%s%s", ftell(out) > 0 ? "," : "", table);
	}
	if (out)
	{
		fclose(out);
		state->tables = tables;
	}
	json_decref(units);
}

/*
 * True for a read a hot standby may serve: GetItem, Query and Scan without
 * ConsistentRead true, and BatchGetItem without it for any table (a body
 * that does not parse goes to the primary, which says what is wrong).
 */
static int
eventually_consistent_read(const RequestState *state)
{
	json_t	   *request;
	int			eventual = 1;

	if (strcmp(state->operation, "GetItem") != 0 && strcmp(state->operation, "Query") != 0 &&
		strcmp(state->operation, "Scan") != 0 && strcmp(state->operation, "BatchGetItem") != 0)
		return 0;
	request = json_loadb(state->data, state->len, 0, NULL);
	if (!json_is_object(request))
		eventual = 0;
	else if (strcmp(state->operation, "BatchGetItem") != 0)
		eventual = !json_is_true(json_object_get(request, "ConsistentRead"));
	else
	{
		const char *table;
		json_t	   *keys;

		json_object_foreach(json_object_get(request, "RequestItems"), table, keys)
			if (json_is_true(json_object_get(keys, "ConsistentRead")))
				eventual = 0;
	}
	json_decref(request);
	return eventual;
}

static void executed(Call *call, PGconn *conn, PGresult *res);
static void executed_direct(Call *call, PGconn *conn, PGresult *res);

/* Sends the request's ddb.execute_metered on the primary's lane (a router's: it goes through the router). */
static void
run_on_primary(RequestState *state)
{
	state->call.params[0] = state->auth.role_name[0] ? state->auth.role_name : NULL;
	state->call.params[1] = state->operation;
	state->call.params[2] = state->data;
	submit(state, worker_primary_lane(state->worker), STATEMENT_EXECUTE, 3, executed);
}

/*
 * Sends the request's ddb.execute_metered, as the access key's role when it
 * has one: on a usable hot standby's lane for an eventually consistent
 * read when there is one, else on the primary's.  What the request may
 * touch is the database's to decide: the role's privileges.
 */
static void
run(RequestState *state)
{
	ServeContext *context = state->context;
	Lane	   *lane;

	if (memchr(state->data, '\0', state->len) != NULL)
	{
		/* libpq would send the text before it: JSON has no raw NUL */
		respond_error(state, ddb_error_type(DDB_ERROR_SERIALIZATION),
					  "The request could not be read: the body contains a NUL byte");
		return;
	}
	state->eventual = context->replicas && eventually_consistent_read(state);
	state->replica = state->eventual ? replicas_pick(context->replicas) : -1;
	if (state->replica >= 0)
	{
		state->call.params[0] = state->auth.role_name[0] ? state->auth.role_name : NULL;
		state->call.params[1] = state->operation;
		state->call.params[2] = state->data;
		submit(state, worker_replica_lane(state->worker, state->replica), STATEMENT_EXECUTE, 3, executed);
		return;
	}
	/* a router's request of one partition key goes straight to its shard (shard_direct.c) */
	lane = shard_direct_lane(state->worker, state->operation, state->data, state->len, state->partition);
	if (lane == NULL)
	{
		run_on_primary(state);
		return;
	}
	state->call.params[0] = state->partition;
	state->call.params[1] = state->auth.role_name[0] ? state->auth.role_name : NULL;
	state->call.params[2] = state->operation;
	state->call.params[3] = state->data;
	submit(state, lane, STATEMENT_EXECUTE_DIRECT, 4, executed_direct);
}

/*
 * ddb.execute_direct's result on a shard: answered as ddb.execute_metered's,
 * unless the shard refused the request (its map moved on) or cannot be
 * reached: then it goes through the router.
 */
static void
executed_direct(Call *call, PGconn *conn, PGresult *res)
{
	RequestState *state = REQUEST_OF_CALL(call);

	if (PQresultStatus(res) != PGRES_TUPLES_OK && db_connection_failed(conn, res))
		lane_fail(call->lane);
	if (PQresultStatus(res) != PGRES_TUPLES_OK && (db_connection_failed(conn, res) || shard_direct_refused(res)))
	{
		run_on_primary(state);
		return;
	}
	executed(call, conn, res);
}

/*
 * ddb.execute_metered's result: the response.  A standby that went away,
 * or that refused what a standby cannot do (25006), is skipped and the
 * primary serves the read; a primary gone or a standby now has its lane
 * closed, so that it connects again to the dsn's writable host.
 */
static void
executed(Call *call, PGconn *conn, PGresult *res)
{
	RequestState *state = REQUEST_OF_CALL(call);
	int			ok = PQresultStatus(res) == PGRES_TUPLES_OK;

	if (!ok && db_connection_failed(conn, res))
		lane_fail(call->lane);
	if (state->replica >= 0 && !ok && server_went_away(conn, res))
	{
		replicas_failed(state->context->replicas, state->replica);
		state->replica = -1;
		submit(state, worker_primary_lane(state->worker), STATEMENT_EXECUTE, 3, executed);
		return;
	}
	if (state->eventual)
		replicas_count_read(state->context->replicas, state->replica);
	if (ok && PQntuples(res) == 1)
	{
		/* the capacity consumed by table on the first line, then the response */
		char	   *consumed = PQgetvalue(res, 0, 0);
		char	   *newline = strchr(consumed, '\n');

		if (newline == NULL)
			respond_error(state, ddb_error_type(DDB_ERROR_INTERNAL_SERVER_ERROR),
						  "ddb.execute_metered answered without its first line");
		else
		{
			*newline = '\0';
			note_consumed(state, consumed);
			respond(state, MHD_HTTP_OK, newline + 1);
		}
	}
	else
		respond_failure(state, conn, res);
	finish(state);
}

/* Notes the outcome of a signature check: the key id for the log, a refusal prepared; true when signed well. */
static int
signed_well(RequestState *state)
{
	snprintf(state->key_id, sizeof(state->key_id), "%s", state->auth.access_key_id);
	if (state->auth.error)
		respond_error(state, state->auth.error, state->auth.message);
	return state->auth.error == NULL;
}

/* The key lookup's result: verifies the signature with the key, then runs the request. */
static void
key_looked_up(Call *call, PGconn *conn, PGresult *res)
{
	RequestState *state = REQUEST_OF_CALL(call);
	KnownKey	key;

	if (PQresultStatus(res) != PGRES_TUPLES_OK && db_connection_failed(conn, res))
		lane_fail(call->lane);
	if (sigv4_key_of_result(conn, res, &state->auth, &key))
	{
		sigv4_verify(state->connection, "POST", state->url, state->data, state->len, &key, &state->auth);
		explicit_bzero(&key, sizeof(key));
	}
	if (signed_well(state))
		run(state);
	if (state->response)
		finish(state);
}

/*
 * Starts a DynamoDB request: its signature checked (keys on the primary: a
 * standby may not have seen a revocation yet; a key not in the cache is
 * looked up first), then ddb.execute_metered.  A response prepared at once
 * (a refusal) is queued by the caller; else the request waits for a result.
 */
static void
execute(RequestState *state)
{
	if (!__atomic_load_n(&gateway_ready, __ATOMIC_ACQUIRE))
	{
		respond_unavailable(state);
		return;
	}
	if (!state->context->settings->development)
	{
		sigv4_verify(state->connection, "POST", state->url, state->data, state->len, NULL, &state->auth);
		if (state->auth.lookup)
		{
			state->call.params[0] = state->auth.access_key_id;
			submit(state, worker_primary_lane(state->worker), STATEMENT_LOOKUP_KEY, 1, key_looked_up);
			return;
		}
		if (!signed_well(state))
			return;
	}
	run(state);
}

/* The health statement's result: GET /health's answer. */
static void
health_checked(Call *call, PGconn *conn, PGresult *res)
{
	RequestState *state = REQUEST_OF_CALL(call);
	char		detail[512];
	DatabaseState db = health_of_result(conn, res, detail, sizeof(detail));
	json_t	   *body;
	char	   *text;

	if (PQresultStatus(res) != PGRES_TUPLES_OK && db_connection_failed(conn, res))
		lane_fail(call->lane);
	if (db == DATABASE_READY && !__atomic_load_n(&gateway_ready, __ATOMIC_ACQUIRE))
	{
		/* the start-up check has not passed yet: DynamoDB requests still get 503 */
		db = DATABASE_UNREACHABLE;
		snprintf(detail, sizeof(detail), "starting: the database is about to be checked again");
	}
	body = json_pack("{s:s, s:s, s:s}", "status", db == DATABASE_READY ? "ok" : "unavailable",
					 "extension", GATEWAY_EXTENSION_VERSION, "detail", detail);
	text = body ? json_dumps(body, JSON_COMPACT) : NULL;
	respond_as(state, db == DATABASE_READY ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE, "application/json",
			   text ? text : "{\"status\":\"unavailable\"}");
	free(text);
	json_decref(body);
	finish(state);
}

/*
 * A CORS preflight (the cors setting on): 200 with what cors.c allows for
 * an allowed origin, without a signature; 403 for another.
 */
static void
respond_preflight(RequestState *state)
{
	char		refusal[512];

	state->preflight = 1;
	if (cors_allowed_origin(&state->context->settings->cors_policy, state->connection) != NULL)
	{
		respond_as(state, MHD_HTTP_OK, "text/plain", "");
		return;
	}
	snprintf(refusal, sizeof(refusal), "the origin %.200s may not call this gateway: it is not in the gateway's cors setting\n",
			 MHD_lookup_connection_value(state->connection, MHD_HEADER_KIND, "Origin"));
	respond_as(state, MHD_HTTP_FORBIDDEN, "text/plain", refusal);
}

/* True when the client's address is on loopback. */
static int
client_is_loopback(struct MHD_Connection *connection)
{
	const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);

	return info && info->client_addr->sa_family == AF_INET &&
		settings_is_loopback((const struct sockaddr_in *) info->client_addr);
}

/* GET /metrics, to the clients the metrics setting allows. */
static void
respond_metrics(RequestState *state)
{
	ServeContext *context = state->context;
	MetricsAccess access = context->settings->metrics;
	PoolUse		use = {0};
	char	   *text;

	if (access == METRICS_OFF || (access == METRICS_LOOPBACK && !client_is_loopback(state->connection)))
	{
		respond_as(state, MHD_HTTP_FORBIDDEN, "text/plain",
				   "metrics are served to loopback clients only (the gateway's metrics setting)\n");
		return;
	}
	for (int i = 0; i < context->nworkers; i++)
		worker_add_use(context->workers[i], &use);
	text = metrics_render(use, context->replicas);
	respond_as(state, MHD_HTTP_OK, "text/plain; version=0.0.4", text ? text : "");
	free(text);
}

/* Draws this run's prefix of request ids, so that no two runs give the same ids; 0 on success. */
int
gateway_start_request_ids(void)
{
	return getrandom(&request_id_prefix, sizeof(request_id_prefix), 0) == sizeof(request_id_prefix) ? 0 : -1;
}

/* Starts a request's state at its headers: when it began, its id, its method and path. */
static RequestState *
begin_request(Worker *worker, struct MHD_Connection *connection, const char *method, const char *url)
{
	RequestState *state = calloc(1, sizeof(RequestState));

	if (state == NULL)
		return NULL;
	state->url = strdup(url);
	if (state->url == NULL)
	{
		free(state);
		return NULL;
	}
	state->connection = connection;
	state->worker = worker;
	state->context = worker_context(worker);
	state->replica = -1;
	clock_gettime(CLOCK_MONOTONIC, &state->started);
	snprintf(state->method, sizeof(state->method), "%s", method);
	snprintf(state->path, sizeof(state->path), "%s", url);
	snprintf(state->request_id, sizeof(state->request_id), "%016llx%016llx", request_id_prefix,
			 __atomic_add_fetch(&request_count, 1, __ATOMIC_RELAXED));
	__atomic_add_fetch(&state->context->in_flight, 1, __ATOMIC_RELAXED);
	return state;
}

/* Appends a part of the body. */
static int
gather_body(RequestState *state, const char *data, size_t size)
{
	if (state->len + size > GATEWAY_MAX_BODY)
	{
		state->too_large = 1;
		return 0;
	}
	if (state->len + size + 1 > state->cap)
	{
		size_t		cap = (state->len + size + 1) * 2;
		char	   *grown = realloc(state->data, cap);

		if (grown == NULL)
			return -1;
		state->data = grown;
		state->cap = cap;
	}
	memcpy(state->data + state->len, data, size);
	state->len += size;
	return 0;
}

/*
 * Queues the response prepared for the request, or, when it waits for a
 * statement's result, suspends it until the result's callback resumes it.
 */
static enum MHD_Result
respond_or_wait(RequestState *state)
{
	if (state->response)
		return respond_queue(state);
	if (state->status != 0)
		return MHD_NO;			/* a response could not be made: out of memory */
	state->suspended = 1;
	MHD_suspend_connection(state->connection);
	return MHD_YES;
}

/*
 * The first call of a request, its headers only: GET /health, GET
 * /metrics and CORS preflights are served; a DynamoDB request that cannot
 * be served is refused before its body is read.
 */
static enum MHD_Result
begin(RequestState *state, const char *method, const char *url)
{
	struct MHD_Connection *connection = state->connection;
	const char *target;
	const char *operation;
	const char *length;

	if (state->context->settings->cors_policy.on && cors_is_preflight(connection, method))
		respond_preflight(state);
	else if (strcmp(method, "GET") == 0 && strcmp(url, "/health") == 0)
		submit(state, worker_primary_lane(state->worker), STATEMENT_HEALTH, 0, health_checked);
	else if (strcmp(method, "GET") == 0 && strcmp(url, "/metrics") == 0)
		respond_metrics(state);
	else
	{
		state->dynamodb = 1;
		target = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, "X-Amz-Target");
		/* DynamoDB's operations, and DynamoDB Streams' (ListStreams, GetRecords, ...) */
		if (target != NULL && strncmp(target, TARGET_PREFIX, strlen(TARGET_PREFIX)) == 0)
			operation = target + strlen(TARGET_PREFIX);
		else if (target != NULL && strncmp(target, STREAMS_TARGET_PREFIX, strlen(STREAMS_TARGET_PREFIX)) == 0)
			operation = target + strlen(STREAMS_TARGET_PREFIX);
		else
			operation = NULL;
		if (operation)
			snprintf(state->operation, sizeof(state->operation), "%s", operation);
		length = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
		if (strcmp(method, "POST") != 0)
			respond_error(state, ddb_error_type(DDB_ERROR_METHOD_NOT_ALLOWED), "DynamoDB takes POST requests");
		else if (length && strtoull(length, NULL, 10) > GATEWAY_MAX_BODY)
			respond_error(state, ddb_error_type(DDB_ERROR_REQUEST_TOO_LARGE), "Request size exceeds 16777216 bytes");
		else
			return MHD_YES;		/* the body comes next */
	}
	return respond_or_wait(state);
}

/* The body is in: a DynamoDB request is refused or started. */
static enum MHD_Result
body_received(RequestState *state)
{
	const char *target;

	if (state->too_large)
		respond_error(state, ddb_error_type(DDB_ERROR_REQUEST_TOO_LARGE), "Request size exceeds 16777216 bytes");
	else if (state->operation[0] == '\0')
	{
		target = MHD_lookup_connection_value(state->connection, MHD_HEADER_KIND, "X-Amz-Target");
		respond_error(state, ddb_error_type(DDB_ERROR_UNKNOWN_OPERATION),
					  target && strlen(target) >= sizeof(state->operation) ?
					  "The operation named by X-Amz-Target is too long" :
					  "X-Amz-Target must name a DynamoDB_20120810 or DynamoDBStreams_20120810 operation");
	}
	else
	{
		if (state->data == NULL)
			state->data = strdup("{}");
		else
			state->data[state->len] = '\0';
		if (state->data == NULL)
			return MHD_NO;
		execute(state);
	}
	return respond_or_wait(state);
}

/* The MHD access handler; cls is the event thread's Worker. */
enum MHD_Result
gateway_handle(void *cls, struct MHD_Connection *connection, const char *url, const char *method,
			   const char *version, const char *upload_data, size_t *upload_data_size, void **request_state)
{
	RequestState *state = *request_state;

	if (state == NULL)
	{
		if ((state = begin_request(cls, connection, method, url)) == NULL)
			return MHD_NO;
		*request_state = state;
		return begin(state, method, url);
	}
	if (state->response)
		return respond_queue(state);	/* resumed with its response */
	if (state->status != 0)
	{
		/* answered at the headers: the body is not wanted */
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (*upload_data_size > 0)
	{
		if (gather_body(state, upload_data, *upload_data_size) != 0)
			return MHD_NO;
		*upload_data_size = 0;
		return MHD_YES;
	}
	return body_received(state);
}

/* The client's address, for the log. */
static void
client_address(struct MHD_Connection *connection, char *out, size_t size)
{
	const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);

	out[0] = '\0';
	if (info && info->client_addr->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *) info->client_addr)->sin_addr, out, size);
}

/* The MHD completion callback: logs and counts the request, and frees its state. */
void
gateway_request_done(void *cls, struct MHD_Connection *connection, void **request_state,
					 enum MHD_RequestTerminationCode code)
{
	RequestState *state = *request_state;
	struct timespec now;
	double		seconds;
	char		client[INET_ADDRSTRLEN];
	AccessRecord record;

	if (state == NULL)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	seconds = (double) (now.tv_sec - state->started.tv_sec) + (now.tv_nsec - state->started.tv_nsec) / 1e9;
	client_address(connection, client, sizeof(client));
	record = (AccessRecord) {
		.request_id = state->request_id,
		.client = client,
		.key_id = state->key_id,
		.method = state->method,
		.path = state->path,
		.operation = state->operation[0] ? state->operation : NULL,
		.tables = state->tables,
		.status = state->status,
		.error_type = state->error_type[0] ? state->error_type : NULL,
		.bytes_in = state->len,
		.bytes_out = state->bytes_out,
		.seconds = seconds,
	};
	access_log_write(&record);
	if (state->dynamodb && state->status != 0)
		metrics_count_request(state->operation[0] ? state->operation : NULL, state->status, seconds);
	__atomic_sub_fetch(&state->context->in_flight, 1, __ATOMIC_RELAXED);
	if (state->response)
		MHD_destroy_response(state->response);
	free(state->tables);
	free(state->data);
	free(state->url);
	free(state);
	*request_state = NULL;
}
