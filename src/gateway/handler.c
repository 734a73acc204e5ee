/*
 * handler.c — serves one DynamoDB request: POST with
 * X-Amz-Target: DynamoDB_20120810.<Action> and a JSON body, answered by
 * ddb.execute on a pooled connection.  Errors of the extension's SQLSTATE
 * class YD carry DynamoDB's error body as DETAIL: that body is the HTTP
 * body, with the status of its row in error_types.h.  PostgreSQL's errors
 * that a request causes outside ddb.execute (its body cast to jsonb, checks
 * at commit) are DynamoDB's by the same table (DDB_SQLSTATE_ERRORS);
 * anything else is DynamoDB's internal server error, status 500.  Every
 * response has x-amz-crc32 and x-amzn-RequestId.  A
 * request must be signed (SigV4, sigv4.c); it runs as its key's role.
 */
#include "handler.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "sigv4.h"

#define TARGET_PREFIX "DynamoDB_20120810."
#define STREAMS_TARGET_PREFIX "DynamoDBStreams_20120810."

int			gateway_require_auth = 1;

/* A request body in the making. */
typedef struct RequestBody
{
	char	   *data;
	size_t		len;
	size_t		cap;
	int			too_large;		/* over GATEWAY_MAX_BODY: not kept */
} RequestBody;

/*
 * Queues a response with DynamoDB's headers.  A server fault (5xx) is also
 * logged on stderr with the request id the response carries, so that an
 * operator can find what a client reports.
 */
static enum MHD_Result
respond(struct MHD_Connection *connection, unsigned int status, const char *body)
{
	size_t		len = strlen(body);
	struct MHD_Response *response = MHD_create_response_from_buffer(len, (void *) body, MHD_RESPMEM_MUST_COPY);
	char		crc[16];
	char		request_id[40];
	enum MHD_Result result;

	snprintf(crc, sizeof(crc), "%lu", crc32(0L, (const Bytef *) body, (uInt) len));
	snprintf(request_id, sizeof(request_id), "%08x%08x%08x%08x", (unsigned) random(), (unsigned) random(),
			 (unsigned) random(), (unsigned) random());
	MHD_add_response_header(response, "Content-Type", "application/x-amz-json-1.0");
	MHD_add_response_header(response, "x-amz-crc32", crc);
	MHD_add_response_header(response, "x-amzn-RequestId", request_id);
	if (status >= 500)
		fprintf(stderr, "ddb-gateway: request %s: status %u: %s\n", request_id, status, body);
	result = MHD_queue_response(connection, status, response);
	MHD_destroy_response(response);
	return result;
}

/*
 * Queues DynamoDB's error body for an error and message, with the error's
 * HTTP status.  A message quoting a client's bytes that are not UTF-8 (a
 * header, say), which JSON cannot carry, has each byte above 0x7F as '?'.
 */
static enum MHD_Result
respond_error(struct MHD_Connection *connection, const DdbErrorType *error_type, const char *message)
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
	result = respond(connection, error_type->http_status, body ? body : "{}");
	free(body);
	free(text);
	json_decref(error);
	return result;
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
 * Runs the operation through ddb.execute, as the access key's role
 * (ddb.execute_as) when it has one, and queues its response.  What the
 * request may touch is the database's to decide: the role's privileges.
 */
static enum MHD_Result
execute(struct MHD_Connection *connection, ConnPool *pool, const char *url, const char *operation,
		const char *body, size_t body_len)
{
	const char *params[3] = {NULL, operation, body};
	PGconn	   *conn = pool_take(pool);
	PGresult   *res;
	enum MHD_Result result;
	AuthResult	auth = {0};

	if (gateway_require_auth)
	{
		sigv4_verify(connection, "POST", url, body, body_len, conn, &auth);
		if (auth.error)
		{
			pool_give(pool, conn);
			return respond_error(connection, auth.error, auth.message);
		}
	}
	if (memchr(body, '\0', body_len) != NULL)
	{
		/* libpq would send the text before it: JSON has no raw NUL */
		pool_give(pool, conn);
		return respond_error(connection, ddb_error_type(DDB_ERROR_SERIALIZATION),
							 "The request could not be read: the body contains a NUL byte");
	}
	if (auth.role_name[0] != '\0')
	{
		params[0] = auth.role_name;
		res = pool_exec(conn, "execute_as", "SELECT ddb.execute_as($1, $2, $3::jsonb)::text", 3, params);
	}
	else
		res = pool_exec(conn, "execute", "SELECT ddb.execute($1, $2::jsonb)::text", 2, params + 1);
	if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1)
		result = respond(connection, MHD_HTTP_OK, PQgetvalue(res, 0, 0));
	else
	{
		const char *sqlstate = PQresultErrorField(res, PG_DIAG_SQLSTATE);
		const DdbErrorType *error = ddb_error_type_of_sqlstate(sqlstate);
		const char *detail = PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL);
		char	   *message = first_line(PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY));
		char		client_message[2048];

		const DdbErrorType *database_error = error ? NULL :
			ddb_error_type_of_database_error(sqlstate, message, names_object(res), client_message,
											 sizeof(client_message));

		if ((error || database_error) && detail && detail[0] == '{' && strstr(detail, "\"__type\"") != NULL)
			/* DynamoDB's body, which ddb.execute attached */
			result = respond(connection, (error ? error : database_error)->http_status, detail);
		else if (error)
			/* a YD error raised outside ddb.execute (a deferred check at commit) */
			result = respond_error(connection, error, message);
		else if (database_error)
			/* the request's fault before ddb.execute ran (the body's cast to jsonb) or after (at commit) */
			result = respond_error(connection, database_error, client_message);
		else
			result = respond_error(connection, ddb_error_type(DDB_ERROR_INTERNAL_SERVER_ERROR), message);
		free(message);
	}
	PQclear(res);
	pool_give(pool, conn);
	return result;
}

/* The MHD access handler; cls is the ConnPool. */
enum MHD_Result
gateway_handle(void *cls, struct MHD_Connection *connection, const char *url, const char *method,
			   const char *version, const char *upload_data, size_t *upload_data_size, void **request_state)
{
	RequestBody *body = *request_state;
	const char *target;
	const char *operation;
	const char *length;

	if (body == NULL)
	{
		/* first call, headers only: refuse what cannot be served before reading the body */
		length = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
		if (strcmp(method, "POST") != 0)
			return respond_error(connection, ddb_error_type(DDB_ERROR_METHOD_NOT_ALLOWED), "DynamoDB takes POST requests");
		if (length && strtoull(length, NULL, 10) > GATEWAY_MAX_BODY)
			return respond_error(connection, ddb_error_type(DDB_ERROR_REQUEST_TOO_LARGE), "Request size exceeds 16777216 bytes");
		body = calloc(1, sizeof(RequestBody));
		if (body == NULL)
			return MHD_NO;
		*request_state = body;
		return MHD_YES;
	}
	if (*upload_data_size > 0)
	{
		if (body->len + *upload_data_size > GATEWAY_MAX_BODY)
			body->too_large = 1;
		else
		{
			if (body->len + *upload_data_size + 1 > body->cap)
			{
				size_t		cap = (body->len + *upload_data_size + 1) * 2;
				char	   *data = realloc(body->data, cap);

				if (data == NULL)
					return MHD_NO;
				body->data = data;
				body->cap = cap;
			}
			memcpy(body->data + body->len, upload_data, *upload_data_size);
			body->len += *upload_data_size;
		}
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (body->too_large)
		return respond_error(connection, ddb_error_type(DDB_ERROR_REQUEST_TOO_LARGE), "Request size exceeds 16777216 bytes");
	target = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, "X-Amz-Target");
	/* DynamoDB's operations, and DynamoDB Streams' (ListStreams, GetRecords, ...) */
	if (target != NULL && strncmp(target, TARGET_PREFIX, strlen(TARGET_PREFIX)) == 0)
		operation = target + strlen(TARGET_PREFIX);
	else if (target != NULL && strncmp(target, STREAMS_TARGET_PREFIX, strlen(STREAMS_TARGET_PREFIX)) == 0)
		operation = target + strlen(STREAMS_TARGET_PREFIX);
	else
		return respond_error(connection, ddb_error_type(DDB_ERROR_UNKNOWN_OPERATION),
							 "X-Amz-Target must name a DynamoDB_20120810 or DynamoDBStreams_20120810 operation");
	if (body->data == NULL)
		body->data = strdup("{}");
	else
		body->data[body->len] = '\0';
	return execute(connection, (ConnPool *) cls, url, operation, body->data, body->len);
}

/* The MHD completion callback: frees a request's state. */
void
gateway_request_done(void *cls, struct MHD_Connection *connection, void **request_state,
					 enum MHD_RequestTerminationCode code)
{
	RequestBody *body = *request_state;

	if (body)
	{
		free(body->data);
		free(body);
	}
	*request_state = NULL;
}
