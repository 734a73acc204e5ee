/*
 * handler.h — one DynamoDB HTTP request: the body gathered, ddb.execute
 * called on a pooled connection, DynamoDB's response or error returned.
 */
#ifndef DDB_GATEWAY_HANDLER_H
#define DDB_GATEWAY_HANDLER_H

#include <microhttpd.h>

#include "pool.h"

/* DynamoDB's limit on a request body: larger ones are refused before they are read. */
#define GATEWAY_MAX_BODY (16 * 1024 * 1024)

/* Whether requests must carry a valid SigV4 signature (off only with --no-auth, on loopback). */
extern int	gateway_require_auth;

/* The MHD access handler; cls is the ConnPool. */
extern enum MHD_Result gateway_handle(void *cls, struct MHD_Connection *connection, const char *url,
									  const char *method, const char *version, const char *upload_data,
									  size_t *upload_data_size, void **request_state);

/* The MHD completion callback: frees a request's state. */
extern void gateway_request_done(void *cls, struct MHD_Connection *connection, void **request_state,
								 enum MHD_RequestTerminationCode code);

#endif
