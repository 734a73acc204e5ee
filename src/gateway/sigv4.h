/*
 * sigv4.h — AWS Signature Version 4 of a DynamoDB request, verified against
 * the access keys in ddb.access_keys.
 */
#ifndef DDB_GATEWAY_SIGV4_H
#define DDB_GATEWAY_SIGV4_H

#include <libpq-fe.h>
#include <microhttpd.h>

#include "../error_types.h"
#include "keycache.h"

/* The statement that reads an active access key's secret and role (sigv4_key_of_result reads its result). */
#define SIGV4_LOOKUP_KEY_SQL "SELECT secret_access_key, role_name FROM ddb.access_keys " \
	"WHERE access_key_id OPERATOR(pg_catalog.=) $1 AND revoked_at IS NULL"

/* An access key as ddb.access_keys has it. */
typedef struct KnownKey
{
	char		secret[KEYCACHE_SECRET_MAX];
	char		role[KEYCACHE_ROLE_MAX];
} KnownKey;

/* Why a request is refused: DynamoDB's error and message, or error NULL when it is signed well. */
typedef struct AuthResult
{
	const DdbErrorType *error;	/* ServiceUnavailable when the key lookup's connection failed, else
								 * InternalServerError when it could not be looked up */
	char		message[512];
	char		access_key_id[129];
	char		role_name[KEYCACHE_ROLE_MAX];	/* the role the key acts as (ddb.execute_as), or "" for the gateway's own */
	int			lookup;			/* the key is to be looked up (SIGV4_LOOKUP_KEY_SQL), then verified again */
	unsigned long cache_generation; /* the key cache's, when it did not have the key */
} AuthResult;

/* Readies the hashing that signatures use, once before any request; 0 on success. */
extern int	sigv4_start(void);

/*
 * Verifies the request's Authorization header (SigV4 over the method, path,
 * signed headers and body; Host, X-Amz-Date and X-Amz-Target among them),
 * the key (known, not revoked) and the date (within 15 minutes), with key
 * or, when it is NULL, the key cache's: when the cache does not have the
 * key, result->lookup is set (with access_key_id) and nothing is refused:
 * the caller looks the key up and verifies again with it.
 */
extern void sigv4_verify(struct MHD_Connection *connection, const char *method, const char *url,
						 const char *body, size_t body_len, const KnownKey *key, AuthResult *result);

/*
 * Reads the key lookup's result for result's key: 1 with key filled (and
 * cached); 0 with result refused (an unknown or revoked key, or a lookup
 * that failed: ServiceUnavailable when its connection failed).
 */
extern int	sigv4_key_of_result(PGconn *conn, const PGresult *res, AuthResult *result, KnownKey *key);

#endif
