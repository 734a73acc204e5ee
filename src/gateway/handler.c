/*
 * handler.c — serves one HTTP request.
 *
 * A DynamoDB request is a POST with X-Amz-Target:
 * DynamoDB_20120810.<Action> and a JSON body, answered by
 * ddb.execute_metered on a pooled connection.  Errors of the extension's
 * SQLSTATE class YD carry DynamoDB's error body as DETAIL: that body is the
 * HTTP body, with the status of its row in error_types.h.  PostgreSQL's
 * errors that a request causes outside ddb.execute (its body cast to jsonb,
 * checks at commit) are DynamoDB's by the same table (DDB_SQLSTATE_ERRORS);
 * a database that cannot be reached, or that went away (a failover: the
 * connection is opened again, to the dsn's writable host), is 503
 * ServiceUnavailable, which the SDKs retry; anything else is DynamoDB's
 * internal server error, status 500.  Every response has x-amz-crc32 and
 * x-amzn-RequestId.  A request must be signed (SigV4, sigv4.c); it runs as
 * its key's role.
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
#include <zlib.h>

#include "access_log.h"
#include "cors.h"
#include "health.h"
#include "metrics.h"
#include "shard_direct.h"
#include "sigv4.h"

#define TARGET_PREFIX "DynamoDB_20120810."
#define STREAMS_TARGET_PREFIX "DynamoDBStreams_20120810."

int			gateway_ready = 0;
int			gateway_router = 0;

/* Request ids: a random prefix per run (gateway_start_request_ids), then a count. */
static unsigned long long request_id_prefix;
static unsigned long long request_count;

/* A request in the making: its body, and what its log line and metrics will say. */
typedef struct RequestState
{
	char	   *data;			/* the body */
	size_t		len;
	size_t		cap;
	int			too_large;		/* over GATEWAY_MAX_BODY: not kept */
	struct timespec started;
	char		method[16];
	char		path[128];
	int			dynamodb;		/* a DynamoDB request (counted in the metrics) */
	int			preflight;		/* a CORS preflight (cors.c) */
	char		operation[64];
	char		key_id[129];
	char	   *tables;			/* malloc'd, comma-separated */
	char		request_id[33];
	unsigned int status;		/* 0 until a response is queued */
	char		error_type[128];
	size_t		bytes_out;
} RequestState;

/*
 * Queues a response with DynamoDB's headers (content_type NULL: DynamoDB's
 * JSON), and notes its status and size for the log.  A server fault (5xx)
 * is also logged on stderr with the request id the response carries, so
 * that an operator can find what a client reports.
 */
static enum MHD_Result
respond_as(struct MHD_Connection *connection, ServeContext *context, RequestState *state, unsigned int status,
		   const char *content_type, const char *body)
{
	size_t		len = strlen(body);
	struct MHD_Response *response = MHD_create_response_from_buffer(len, (void *) body, MHD_RESPMEM_MUST_COPY);
	char		crc[16];
	enum MHD_Result result;

	if (response == NULL)
		return MHD_NO;
	snprintf(crc, sizeof(crc), "%lu", crc32(0L, (const Bytef *) body, (uInt) len));
	MHD_add_response_header(response, "Content-Type", content_type ? content_type : "application/x-amz-json-1.0");
	MHD_add_response_header(response, "x-amz-crc32", crc);
	MHD_add_response_header(response, "x-amzn-RequestId", state->request_id);
	cors_add_headers(&context->settings->cors_policy, connection, response, state->preflight);
	/* while stopping, clients reconnect (to the new daemon after a reload) */
	if (__atomic_load_n(&context->draining, __ATOMIC_RELAXED))
		MHD_add_response_header(response, MHD_HTTP_HEADER_CONNECTION, "close");
	if (status >= 500 && status != MHD_HTTP_SERVICE_UNAVAILABLE)
		fprintf(stderr, "ddb-gateway: request %s: status %u: %s\n", state->request_id, status, body);
	state->status = status;
	state->bytes_out = len;
	result = MHD_queue_response(connection, status, response);
	MHD_destroy_response(response);
	return result;
}

/* Queues a DynamoDB response. */
static enum MHD_Result
respond(struct MHD_Connection *connection, ServeContext *context, RequestState *state, unsigned int status,
		const char *body)
{
	return respond_as(connection, context, state, status, NULL, body);
}

/*
 * Queues DynamoDB's error body for an error and message, with the error's
 * HTTP status.  A message quoting a client's bytes that are not UTF-8 (a
 * header, say), which JSON cannot carry, has each byte above 0x7F as '?'.
 */
static enum MHD_Result
respond_error(struct MHD_Connection *connection, ServeContext *context, RequestState *state,
			  const DdbErrorType *error_type, const char *message)
{
	char	   *text = strdup(message ? message : "");
	json_t	   *error = json_pack("{s:s, s:s}", "__type", error_type->type, "message", text);
	char	   *body;
	enum MHD_Result result;

	if (error == NULL)
	{
		for (unsigned char *c = (unsigned char *) text; *c; c++)
			if (*c > 0x7F)
				*c = '?';
		error = json_pack("{s:s, s:s}", "__type", error_type->type, "message", text);
	}
	body = json_dumps(error, JSON_COMPACT);
	snprintf(state->error_type, sizeof(state->error_type), "%s", error_type->type);
	result = respond(connection, context, state, error_type->http_status, body ? body : "{}");
	free(body);
	free(text);
	json_decref(error);
	return result;
}

/* Queues 503 ServiceUnavailable: the database cannot be reached (the SDKs retry it). */
static enum MHD_Result
respond_unavailable(struct MHD_Connection *connection, ServeContext *context, RequestState *state)
{
	return respond_error(connection, context, state, ddb_error_type(DDB_ERROR_SERVICE_UNAVAILABLE),
						 "The database is unavailable: retry later");
}

/* The first line of a libpq error message (without the "ERROR:  " and the newline). */
static char *
first_line(const char *message)
{
	const char *start = message ? message : "";
	size_t		n = strcspn(start, "\n");

	return strndup(start, n);
}

/* True when an error names a database object (which a client must not see). */
static int
names_object(const PGresult *res)
{
	return PQresultErrorField(res, PG_DIAG_SCHEMA_NAME) || PQresultErrorField(res, PG_DIAG_TABLE_NAME) ||
		PQresultErrorField(res, PG_DIAG_COLUMN_NAME) || PQresultErrorField(res, PG_DIAG_DATATYPE_NAME) ||
		PQresultErrorField(res, PG_DIAG_CONSTRAINT_NAME);
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

/* Notes the TableName of a refused request's body for the log, when it has one. */
static void
note_table_of_body(RequestState *state)
{
	json_t	   *request = json_loadb(state->data, state->len, 0, NULL);
	const char *table = json_string_value(json_object_get(request, "TableName"));

	if (table && state->tables == NULL)
		state->tables = strdup(table);
	json_decref(request);
}

/*
 * True when a statement failed because its server went away or cannot
 * serve it: the connection failed (pool_connection_failed: gone, going, a
 * standby now), or the server said the statement cannot run now (SQLSTATE
 * class 57: canceled, shutting down).
 */
static int
server_went_away(PGconn *conn, const PGresult *res)
{
	const char *sqlstate = PQresultErrorField(res, PG_DIAG_SQLSTATE);

	return pool_connection_failed(conn, res) || strncmp(sqlstate, "57", 2) == 0;
}

/* Answers a failed statement: DynamoDB's error it carries, 503 when the database went away, else 500. */
static enum MHD_Result
respond_failure(struct MHD_Connection *connection, ServeContext *context, RequestState *state, PGconn *conn,
				PGresult *res)
{
	const char *sqlstate = PQresultErrorField(res, PG_DIAG_SQLSTATE);
	const DdbErrorType *error = ddb_error_type_of_sqlstate(sqlstate);
	const char *detail = PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL);
	char	   *message = first_line(PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY));
	char		client_message[2048];
	enum MHD_Result result;
	const DdbErrorType *database_error = error ? NULL :
		ddb_error_type_of_database_error(sqlstate, message, names_object(res), client_message,
										 sizeof(client_message));

	note_table_of_body(state);
	if ((error || database_error) && detail && detail[0] == '{' && strstr(detail, "\"__type\"") != NULL)
	{
		/* DynamoDB's body, which ddb.execute attached */
		snprintf(state->error_type, sizeof(state->error_type), "%s", (error ? error : database_error)->type);
		result = respond(connection, context, state, (error ? error : database_error)->http_status, detail);
	}
	else if (error)
		/* a YD error raised outside ddb.execute (a deferred check at commit) */
		result = respond_error(connection, context, state, error, message);
	else if (database_error)
		/* the request's fault before ddb.execute ran (the body's cast to jsonb) or after (at commit) */
		result = respond_error(connection, context, state, database_error, client_message);
	else if (server_went_away(conn, res))
		result = respond_unavailable(connection, context, state);
	else
		result = respond_error(connection, context, state, ddb_error_type(DDB_ERROR_INTERNAL_SERVER_ERROR), message);
	free(message);
	return result;
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

/* Runs the request on a connection: ddb.execute_metered as role (NULL: the connection's own). */
static PGresult *
run_metered(PGconn *conn, const char *role, const RequestState *state)
{
	const char *params[3] = {role, state->operation, state->data};

	if (gateway_router)
		return pool_exec(conn, "execute_routed", "SELECT ddb_router.execute_metered($1, $2, $3::jsonb)", 3, params);
	return pool_exec(conn, "execute", "SELECT ddb.execute_metered($1, $2, $3::jsonb)", 3, params);
}

/*
 * Runs the operation through ddb.execute_metered, as the access key's role
 * when it has one, and queues its response.  What the request may touch is
 * the database's to decide: the role's privileges.  An eventually
 * consistent read goes to a usable hot standby when there is one, and to
 * the primary when the standby fails it (gone, or refusing what a standby
 * cannot do).
 */
static enum MHD_Result
execute(struct MHD_Connection *connection, ServeContext *context, RequestState *state, const char *url)
{
	PGconn	   *conn;
	PGresult   *res;
	enum MHD_Result result;
	AuthResult	auth = {0};
	ConnPool   *pool = context->pool;
	int			replica = -1;
	int			eventual;

	if (!__atomic_load_n(&gateway_ready, __ATOMIC_ACQUIRE) || (conn = pool_take(pool)) == NULL)
		return respond_unavailable(connection, context, state);
	/* keys are checked on the primary: a standby may not have seen a revocation yet */
	if (!context->settings->development)
	{
		sigv4_verify(connection, "POST", url, state->data, state->len, conn, &auth);
		if (auth.error == ddb_error_type(DDB_ERROR_SERVICE_UNAVAILABLE))
		{
			/* the server went away since the connection's last use (a restart, a failover): once more on a new one */
			pool_discard(pool, conn);
			if ((conn = pool_take(pool)) == NULL)
				return respond_unavailable(connection, context, state);
			auth = (AuthResult) {0};
			sigv4_verify(connection, "POST", url, state->data, state->len, conn, &auth);
		}
		snprintf(state->key_id, sizeof(state->key_id), "%s", auth.access_key_id);
		if (auth.error)
		{
			if (auth.error == ddb_error_type(DDB_ERROR_SERVICE_UNAVAILABLE))
				pool_discard(pool, conn);
			else
				pool_give(pool, conn);
			return respond_error(connection, context, state, auth.error, auth.message);
		}
	}
	if (memchr(state->data, '\0', state->len) != NULL)
	{
		/* libpq would send the text before it: JSON has no raw NUL */
		pool_give(pool, conn);
		return respond_error(connection, context, state, ddb_error_type(DDB_ERROR_SERIALIZATION),
							 "The request could not be read: the body contains a NUL byte");
	}
	eventual = context->replicas && eventually_consistent_read(state);
	if (eventual)
	{
		ConnPool   *standby = replicas_pick(context->replicas, &replica);
		PGconn	   *standby_conn = standby ? pool_take(standby) : NULL;

		if (standby_conn)
		{
			pool_give(pool, conn);
			pool = standby;
			conn = standby_conn;
		}
		else if (standby)
		{
			replicas_failed(context->replicas, replica);
			replica = -1;
		}
	}
	/* issue 33, target 2 (for the new request path to take over): a request of one partition key straight to its shard */
	res = gateway_router && replica < 0 ?
		shard_direct_execute(auth.role_name[0] ? auth.role_name : NULL, state->operation, state->data, state->len) : NULL;
	if (res == NULL)
		res = run_metered(conn, auth.role_name[0] ? auth.role_name : NULL, state);
	if (replica >= 0 && PQresultStatus(res) != PGRES_TUPLES_OK && server_went_away(conn, res))
	{
		/* the standby went away, or the read needed a write (25006): the primary serves it */
		replicas_failed(context->replicas, replica);
		replica = -1;
		PQclear(res);
		pool_give(pool, conn);
		pool = context->pool;
		if ((conn = pool_take(pool)) == NULL)
			return respond_unavailable(connection, context, state);
		res = run_metered(conn, auth.role_name[0] ? auth.role_name : NULL, state);
	}
	if (eventual)
		replicas_count_read(context->replicas, replica);
	if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1)
	{
		/* the capacity consumed by table on the first line, then the response */
		char	   *consumed = PQgetvalue(res, 0, 0);
		char	   *newline = strchr(consumed, '\n');

		if (newline == NULL)
			result = respond_error(connection, context, state, ddb_error_type(DDB_ERROR_INTERNAL_SERVER_ERROR),
								   "ddb.execute_metered answered without its first line");
		else
		{
			*newline = '\0';
			note_consumed(state, consumed);
			result = respond(connection, context, state, MHD_HTTP_OK, newline + 1);
		}
	}
	else
		result = respond_failure(connection, context, state, conn, res);
	/* a primary gone or a standby now: its slot connects again, to the dsn's writable host */
	if (PQresultStatus(res) != PGRES_TUPLES_OK && replica < 0 && pool_connection_failed(conn, res))
		pool_discard(pool, conn);
	else
		pool_give(pool, conn);
	PQclear(res);
	return result;
}

/* GET /health: 200 when the database answers with this gateway's extension version, else 503. */
static enum MHD_Result
respond_health(struct MHD_Connection *connection, ServeContext *context, RequestState *state)
{
	PGconn	   *conn = pool_take(context->pool);
	char		detail[512];
	DatabaseState db = health_check(conn, detail, sizeof(detail));
	json_t	   *body;
	char	   *text;
	enum MHD_Result result;

	if (conn)
		pool_give(context->pool, conn);
	if (db == DATABASE_READY && !__atomic_load_n(&gateway_ready, __ATOMIC_ACQUIRE))
	{
		/* the start-up check has not passed yet: DynamoDB requests still get 503 */
		db = DATABASE_UNREACHABLE;
		snprintf(detail, sizeof(detail), "starting: the database is about to be checked again");
	}
	body = json_pack("{s:s, s:s, s:s}", "status", db == DATABASE_READY ? "ok" : "unavailable",
					 "extension", GATEWAY_EXTENSION_VERSION, "detail", detail);
	text = body ? json_dumps(body, JSON_COMPACT) : NULL;
	result = respond_as(connection, context, state, db == DATABASE_READY ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE,
						"application/json", text ? text : "{\"status\":\"unavailable\"}");
	free(text);
	json_decref(body);
	return result;
}

/*
 * A CORS preflight (the cors setting on): 200 with what cors.c allows for
 * an allowed origin, without a signature; 403 for another.
 */
static enum MHD_Result
respond_preflight(struct MHD_Connection *connection, ServeContext *context, RequestState *state)
{
	char		refusal[512];

	state->preflight = 1;
	if (cors_allowed_origin(&context->settings->cors_policy, connection) != NULL)
		return respond_as(connection, context, state, MHD_HTTP_OK, "text/plain", "");
	snprintf(refusal, sizeof(refusal), "the origin %.200s may not call this gateway: it is not in the gateway's cors setting\n",
			 MHD_lookup_connection_value(connection, MHD_HEADER_KIND, "Origin"));
	return respond_as(connection, context, state, MHD_HTTP_FORBIDDEN, "text/plain", refusal);
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
static enum MHD_Result
respond_metrics(struct MHD_Connection *connection, ServeContext *context, RequestState *state)
{
	MetricsAccess access = context->settings->metrics;
	char	   *text;
	enum MHD_Result result;

	if (access == METRICS_OFF || (access == METRICS_LOOPBACK && !client_is_loopback(connection)))
		return respond_as(connection, context, state, MHD_HTTP_FORBIDDEN, "text/plain",
						  "metrics are served to loopback clients only (the gateway's metrics setting)\n");
	text = metrics_render(context->pool, context->replicas);
	result = respond_as(connection, context, state, MHD_HTTP_OK, "text/plain; version=0.0.4",
						text ? text : "");
	free(text);
	return result;
}

/* Draws this run's prefix of request ids, so that no two runs give the same ids; 0 on success. */
int
gateway_start_request_ids(void)
{
	return getrandom(&request_id_prefix, sizeof(request_id_prefix), 0) == sizeof(request_id_prefix) ? 0 : -1;
}

/* Starts a request's state at its headers: when it began, its id, its method and path. */
static RequestState *
begin_request(ServeContext *context, const char *method, const char *url)
{
	RequestState *state = calloc(1, sizeof(RequestState));

	if (state == NULL)
		return NULL;
	clock_gettime(CLOCK_MONOTONIC, &state->started);
	snprintf(state->method, sizeof(state->method), "%s", method);
	snprintf(state->path, sizeof(state->path), "%s", url);
	snprintf(state->request_id, sizeof(state->request_id), "%016llx%016llx", request_id_prefix,
			 __atomic_add_fetch(&request_count, 1, __ATOMIC_RELAXED));
	__atomic_add_fetch(&context->in_flight, 1, __ATOMIC_RELAXED);
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

/* The MHD access handler; cls is the ServeContext. */
enum MHD_Result
gateway_handle(void *cls, struct MHD_Connection *connection, const char *url, const char *method,
			   const char *version, const char *upload_data, size_t *upload_data_size, void **request_state)
{
	ServeContext *context = cls;
	RequestState *state = *request_state;
	const char *target;
	const char *operation;
	const char *length;

	if (state == NULL)
	{
		/* first call, headers only: refuse what cannot be served before reading the body */
		if ((state = begin_request(context, method, url)) == NULL)
			return MHD_NO;
		*request_state = state;
		if (context->settings->cors_policy.on && cors_is_preflight(connection, method))
			return respond_preflight(connection, context, state);
		if (strcmp(method, "GET") == 0 && strcmp(url, "/health") == 0)
			return respond_health(connection, context, state);
		if (strcmp(method, "GET") == 0 && strcmp(url, "/metrics") == 0)
			return respond_metrics(connection, context, state);
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
			return respond_error(connection, context, state, ddb_error_type(DDB_ERROR_METHOD_NOT_ALLOWED),
								 "DynamoDB takes POST requests");
		if (length && strtoull(length, NULL, 10) > GATEWAY_MAX_BODY)
			return respond_error(connection, context, state, ddb_error_type(DDB_ERROR_REQUEST_TOO_LARGE),
								 "Request size exceeds 16777216 bytes");
		return MHD_YES;
	}
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
	if (state->too_large)
		return respond_error(connection, context, state, ddb_error_type(DDB_ERROR_REQUEST_TOO_LARGE),
							 "Request size exceeds 16777216 bytes");
	if (state->operation[0] == '\0')
	{
		target = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, "X-Amz-Target");
		return respond_error(connection, context, state, ddb_error_type(DDB_ERROR_UNKNOWN_OPERATION),
							 target && strlen(target) >= sizeof(state->operation) ?
							 "The operation named by X-Amz-Target is too long" :
							 "X-Amz-Target must name a DynamoDB_20120810 or DynamoDBStreams_20120810 operation");
	}
	if (state->data == NULL)
		state->data = strdup("{}");
	else
		state->data[state->len] = '\0';
	if (state->data == NULL)
		return MHD_NO;
	return execute(connection, context, state, url);
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
	ServeContext *context = cls;
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
	__atomic_sub_fetch(&context->in_flight, 1, __ATOMIC_RELAXED);
	free(state->tables);
	free(state->data);
	free(state);
	*request_state = NULL;
}
