/*
 * respond.h — a request's response, prepared with DynamoDB's headers and
 * queued at the handler's next call: DynamoDB's answer, its error bodies,
 * and a failed statement's error mapped to DynamoDB's.
 */
#ifndef DDB_GATEWAY_RESPOND_H
#define DDB_GATEWAY_RESPOND_H

#include <libpq-fe.h>

#include "../error_types.h"
#include "request.h"

/* Prepares a response (content_type NULL: DynamoDB's JSON); see respond.c. */
extern void respond_as(RequestState *state, unsigned int status, const char *content_type, const char *body);

/* Prepares a DynamoDB response. */
extern void respond(RequestState *state, unsigned int status, const char *body);

/* Prepares DynamoDB's error body for an error and message, with the error's HTTP status. */
extern void respond_error(RequestState *state, const DdbErrorType *error_type, const char *message);

/* Prepares 503 ServiceUnavailable: the database cannot be reached (the SDKs retry it). */
extern void respond_unavailable(RequestState *state);

/* Prepares the answer to a failed statement: DynamoDB's error it carries, 503 when the database went away, else 500. */
extern void respond_failure(RequestState *state, PGconn *conn, const PGresult *res);

/*
 * True when a statement failed because its server went away or cannot
 * serve it: the connection failed (gone, going, a standby now), or the
 * server said the statement cannot run now (SQLSTATE class 57).
 */
extern int	server_went_away(PGconn *conn, const PGresult *res);

/* Queues the prepared response on the request's connection. */
extern enum MHD_Result respond_queue(RequestState *state);

#endif
