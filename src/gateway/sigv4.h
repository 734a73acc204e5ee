/*
 * sigv4.h — AWS Signature Version 4 of a DynamoDB request, verified against
 * the access keys in ddb.access_keys.
 */
#ifndef DDB_GATEWAY_SIGV4_H
#define DDB_GATEWAY_SIGV4_H

#include <libpq-fe.h>
#include <microhttpd.h>

#include "../error_types.h"

/* Why a request is refused: DynamoDB's error and message, or error NULL when it is signed well. */
typedef struct AuthResult
{
	const DdbErrorType *error;	/* ServiceUnavailable when the key lookup's connection failed, else
								 * InternalServerError when it could not be looked up */
	char		message[512];
	char		access_key_id[129];
	char		role_name[64];	/* the role the key acts as (ddb.execute_as), or "" for the gateway's own */
} AuthResult;

/* Readies the hashing that signatures use, once before any request; 0 on success. */
extern int	sigv4_start(void);

/*
 * Verifies the request's Authorization header (SigV4 over the method, path,
 * signed headers and body; Host, X-Amz-Date and X-Amz-Target among them),
 * the key (known, not revoked) and the date (within 15 minutes).
 */
extern void sigv4_verify(struct MHD_Connection *connection, const char *method, const char *url,
						 const char *body, size_t body_len, PGconn *conn, AuthResult *result);

#endif
