/*
 * respond.c — a request's response (respond.h).
 *
 * Errors of the extension's SQLSTATE class YD carry DynamoDB's error body
 * as DETAIL: that body is the HTTP body, with the status of its row in
 * error_types.h.  PostgreSQL's errors that a request causes outside
 * ddb.execute (its body cast to jsonb, checks at commit) are DynamoDB's by
 * the same table (DDB_SQLSTATE_ERRORS); a database that cannot be reached,
 * or that went away (a failover: the lane connects again, to the dsn's
 * writable host), is 503 ServiceUnavailable, which the SDKs retry;
 * anything else is DynamoDB's internal server error, status 500.  Every
 * response has x-amz-crc32 and x-amzn-RequestId.
 */
#include "respond.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "connect.h"
#include "cors.h"

/*
 * Prepares a response with DynamoDB's headers (content_type NULL:
 * DynamoDB's JSON), and notes its status and size for the log.  A server
 * fault (5xx) is also logged on stderr with the request id the response
 * carries, so that an operator can find what a client reports.
 */
void
respond_as(RequestState *state, unsigned int status, const char *content_type, const char *body)
{
	size_t		len = strlen(body);
	struct MHD_Response *response = MHD_create_response_from_buffer(len, (void *) body, MHD_RESPMEM_MUST_COPY);
	char		crc[16];

	if (response == NULL)
		return;
	snprintf(crc, sizeof(crc), "%lu", crc32(0L, (const Bytef *) body, (uInt) len));
	MHD_add_response_header(response, "Content-Type", content_type ? content_type : "application/x-amz-json-1.0");
	MHD_add_response_header(response, "x-amz-crc32", crc);
	MHD_add_response_header(response, "x-amzn-RequestId", state->request_id);
	cors_add_headers(&state->context->settings->cors_policy, state->connection, response, state->preflight);
	/* while stopping, clients reconnect (to the new daemon after a reload) */
	if (__atomic_load_n(&state->context->draining, __ATOMIC_RELAXED))
		MHD_add_response_header(response, MHD_HTTP_HEADER_CONNECTION, "close");
	if (status >= 500 && status != MHD_HTTP_SERVICE_UNAVAILABLE)
		fprintf(stderr, "ddb-gateway: request %s: status %u: %s\n", state->request_id, status, body);
	state->status = status;
	state->bytes_out = len;
	state->response = response;
}

/* Prepares a DynamoDB response. */
void
respond(RequestState *state, unsigned int status, const char *body)
{
	respond_as(state, status, NULL, body);
}

/*
 * Prepares DynamoDB's error body for an error and message, with the
 * error's HTTP status.  A message quoting a client's bytes that are not
 * UTF-8 (a header, say), which JSON cannot carry, has each byte above 0x7F
 * as '?'.
 */
void
respond_error(RequestState *state, const DdbErrorType *error_type, const char *message)
{
	char	   *text = strdup(message ? message : "");
	json_t	   *error = json_pack("{s:s, s:s}", "__type", error_type->type, "message", text);
	char	   *body;

	if (error == NULL)
	{
		for (unsigned char *c = (unsigned char *) text; *c; c++)
			if (*c > 0x7F)
				*c = '?';
		error = json_pack("{s:s, s:s}", "__type", error_type->type, "message", text);
	}
	body = json_dumps(error, JSON_COMPACT);
	snprintf(state->error_type, sizeof(state->error_type), "%s", error_type->type);
	respond(state, error_type->http_status, body ? body : "{}");
	free(body);
	free(text);
	json_decref(error);
}

/* Prepares 503 ServiceUnavailable. */
void
respond_unavailable(RequestState *state)
{
	respond_error(state, ddb_error_type(DDB_ERROR_SERVICE_UNAVAILABLE), "The database is unavailable: retry later");
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

/* True when a statement failed because its server went away or cannot serve it. */
int
server_went_away(PGconn *conn, const PGresult *res)
{
	const char *sqlstate = PQresultErrorField(res, PG_DIAG_SQLSTATE);

	return db_connection_failed(conn, res) || strncmp(sqlstate, "57", 2) == 0;
}

/* Prepares the answer to a failed statement. */
void
respond_failure(RequestState *state, PGconn *conn, const PGresult *res)
{
	const char *sqlstate = PQresultErrorField(res, PG_DIAG_SQLSTATE);
	const DdbErrorType *error = ddb_error_type_of_sqlstate(sqlstate);
	const char *detail = PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL);
	char	   *message = first_line(PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY));
	char		client_message[2048];
	const DdbErrorType *database_error = error ? NULL :
		ddb_error_type_of_database_error(sqlstate, message, names_object(res), client_message,
										 sizeof(client_message));

	note_table_of_body(state);
	if ((error || database_error) && detail && detail[0] == '{' && strstr(detail, "\"__type\"") != NULL)
	{
		/* DynamoDB's body, which ddb.execute attached */
		snprintf(state->error_type, sizeof(state->error_type), "%s", (error ? error : database_error)->type);
		respond(state, (error ? error : database_error)->http_status, detail);
	}
	else if (error)
		/* a YD error raised outside ddb.execute (a deferred check at commit) */
		respond_error(state, error, message);
	else if (database_error)
		/* the request's fault before ddb.execute ran (the body's cast to jsonb) or after (at commit) */
		respond_error(state, database_error, client_message);
	else if (server_went_away(conn, res))
		respond_unavailable(state);
	else
		respond_error(state, ddb_error_type(DDB_ERROR_INTERNAL_SERVER_ERROR), message);
	free(message);
}

/* Queues the prepared response (none: out of memory, the connection is closed). */
enum MHD_Result
respond_queue(RequestState *state)
{
	struct MHD_Response *response = state->response;
	enum MHD_Result result;

	if (response == NULL)
		return MHD_NO;
	state->response = NULL;
	result = MHD_queue_response(state->connection, state->status, response);
	MHD_destroy_response(response);
	return result;
}
