/*
 * handler.h — one HTTP request: a DynamoDB request (POST, its body
 * gathered, ddb.execute_metered sent on a lane of its event thread,
 * DynamoDB's response or error returned), GET /health or GET /metrics;
 * each logged and counted.
 */
#ifndef DDB_GATEWAY_HANDLER_H
#define DDB_GATEWAY_HANDLER_H

#include <microhttpd.h>

#include "replicas.h"
#include "settings.h"
#include "worker.h"

/* DynamoDB's limit on a request body: larger ones are refused before they are read. */
#define GATEWAY_MAX_BODY (16 * 1024 * 1024)

/* What the requests of one server's event threads share. */
struct ServeContext
{
	Worker	  **workers;		/* the event threads */
	int			nworkers;
	ReplicaSet *replicas;		/* hot standbys for eventually consistent reads, or NULL */
	const GatewaySettings *settings;
	int			in_flight;		/* requests begun and not completed (atomic) */
	int			draining;		/* stopping: responses close their connection (atomic) */
};

/*
 * Set (atomically) once the database was found with the extension of this
 * gateway's version: until then DynamoDB requests get 503.
 */
extern int	gateway_ready;

/* Draws this run's prefix of request ids (x-amzn-RequestId), once before any request; 0 on success. */
extern int	gateway_start_request_ids(void);

/* The MHD access handler; cls is the event thread's Worker. */
extern enum MHD_Result gateway_handle(void *cls, struct MHD_Connection *connection, const char *url,
									  const char *method, const char *version, const char *upload_data,
									  size_t *upload_data_size, void **request_state);

/* The MHD completion callback: logs and counts a request, and frees its state. */
extern void gateway_request_done(void *cls, struct MHD_Connection *connection, void **request_state,
								 enum MHD_RequestTerminationCode code);

#endif
