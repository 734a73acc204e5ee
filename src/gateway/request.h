/*
 * request.h — the state of one HTTP request from its headers to its
 * completion: its body, where it is (a statement in flight on a lane, a
 * response prepared), and what its log line and metrics will say.
 */
#ifndef DDB_GATEWAY_REQUEST_H
#define DDB_GATEWAY_REQUEST_H

#include <microhttpd.h>
#include <stddef.h>
#include <time.h>

#include "handler.h"
#include "lane.h"
#include "sigv4.h"
#include "worker.h"

typedef struct RequestState
{
	struct MHD_Connection *connection;
	Worker	   *worker;			/* the event thread serving it */
	ServeContext *context;
	char	   *url;			/* malloc'd: signed, so checked whole */
	char	   *data;			/* the body */
	size_t		len;
	size_t		cap;
	int			too_large;		/* over GATEWAY_MAX_BODY: not kept */
	Call		call;			/* the statement in flight for it */
	AuthResult	auth;
	int			eventual;		/* an eventually consistent read */
	int			replica;		/* the standby it is read from, or -1 */
	char		partition[12];	/* its partition, when it goes straight to its shard */
	int			suspended;		/* waiting for its statement's result */
	struct MHD_Response *response;	/* prepared, queued at the handler's next call */
	struct timespec started;
	char		method[16];
	char		path[128];
	int			dynamodb;		/* a DynamoDB request (counted in the metrics) */
	int			preflight;		/* a CORS preflight (cors.c) */
	char		operation[64];
	char		key_id[129];
	char	   *tables;			/* malloc'd, comma-separated */
	char		request_id[33];
	unsigned int status;		/* 0 until a response is prepared */
	char		error_type[128];
	size_t		bytes_out;
} RequestState;

/* The request whose call this is. */
#define REQUEST_OF_CALL(c) ((RequestState *) ((char *) (c) - offsetof(RequestState, call)))

#endif
