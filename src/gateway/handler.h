/*
 * handler.h — one HTTP request: a DynamoDB request (POST, its body
 * gathered, ddb.execute_metered called on a pooled connection, DynamoDB's
 * response or error returned), GET /health or GET /metrics; each logged
 * and counted.
 */
#ifndef DDB_GATEWAY_HANDLER_H
#define DDB_GATEWAY_HANDLER_H

#include <microhttpd.h>

#include "pool.h"
#include "replicas.h"
#include "settings.h"

/* DynamoDB's limit on a request body: larger ones are refused before they are read. */
#define GATEWAY_MAX_BODY (16 * 1024 * 1024)

/* What the requests of one HTTP daemon share (the cls of its callbacks). */
typedef struct ServeContext
{
	ConnPool   *pool;
	ReplicaSet *replicas;		/* hot standbys for eventually consistent reads, or NULL */
	const GatewaySettings *settings;
	int			in_flight;		/* requests begun and not completed (atomic) */
	int			draining;		/* stopping: responses close their connection (atomic) */
} ServeContext;

/*
 * Set (atomically) once the database was found with the extension of this
 * gateway's version: until then DynamoDB requests get 503.
 */
extern int	gateway_ready;

/*
 * Set once before serving when the database is a router of a sharded
 * deployment (docs/scale-out.md): requests then go through
 * ddb_router.execute_metered rather than ddb.execute_metered.
 */
extern int	gateway_router;

/* Draws this run's prefix of request ids (x-amzn-RequestId), once before any request; 0 on success. */
extern int	gateway_start_request_ids(void);

/* The MHD access handler; cls is the ServeContext. */
extern enum MHD_Result gateway_handle(void *cls, struct MHD_Connection *connection, const char *url,
									  const char *method, const char *version, const char *upload_data,
									  size_t *upload_data_size, void **request_state);

/* The MHD completion callback: logs and counts a request, and frees its state. */
extern void gateway_request_done(void *cls, struct MHD_Connection *connection, void **request_state,
								 enum MHD_RequestTerminationCode code);

#endif
