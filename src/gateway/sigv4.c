/*
 * sigv4.c — verifies AWS Signature Version 4 on a DynamoDB request: the
 * canonical request (method, path, signed headers, SHA-256 of the body), the
 * string to sign, and the signing key derived from the secret in
 * ddb.access_keys.  Signatures are compared in constant time, dates must be
 * within 15 minutes, and a signature is accepted once (the gateway keeps the
 * recent ones).
 */
#define _GNU_SOURCE
#include "sigv4.h"
#include "pool.h"

#include <ctype.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_SKEW_SECONDS 900
#define SEEN_SLOTS 65536

/* The recent signatures, by a hash of their text: a slot remembers one. */
static struct
{
	char		signature[65];
	time_t		at;
}			seen[SEEN_SLOTS];
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;

/* Records the refusal of a request. */
static void
refuse(AuthResult *result, DdbError error, const char *message)
{
	result->error = ddb_error_type(error);
	snprintf(result->message, sizeof(result->message), "%s", message);
}

/* Refuses the request and returns from sigv4_verify. */
#define REFUSE(error, message) do { refuse(result, (error), (message)); return; } while (0)

/* Lower-case hex of bytes, into out (2 * n + 1 bytes). */
static void
to_hex(const unsigned char *bytes, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++)
	{
		out[2 * i] = digits[bytes[i] >> 4];
		out[2 * i + 1] = digits[bytes[i] & 15];
	}
	out[2 * n] = '\0';
}

/* HMAC-SHA256 of data under key, into out (32 bytes). */
static void
hmac(const unsigned char *key, size_t key_len, const char *data, unsigned char *out)
{
	unsigned int len = 32;

	HMAC(EVP_sha256(), key, (int) key_len, (const unsigned char *) data, strlen(data), out, &len);
}

/* Copies the value of "name=" in an Authorization header (up to ',' or the end); 0 when absent. */
static int
auth_field(const char *header, const char *name, char *out, size_t size)
{
	const char *at = strstr(header, name);
	size_t		n;

	if (at == NULL)
		return 0;
	at += strlen(name);
	n = strcspn(at, ", ");
	if (n == 0 || n >= size)
		return 0;
	memcpy(out, at, n);
	out[n] = '\0';
	return 1;
}

/* Appends a header value with its outer spaces trimmed and inner runs of spaces collapsed. */
static void
append_trimmed(char **buf, size_t *len, size_t *cap, const char *value)
{
	int			space = 0;

	while (*value == ' ' || *value == '\t')
		value++;
	for (; *value; value++)
	{
		if (*value == ' ' || *value == '\t')
		{
			space = 1;
			continue;
		}
		if (*len + 3 >= *cap)
		{
			*cap *= 2;
			*buf = realloc(*buf, *cap);
		}
		if (space)
			(*buf)[(*len)++] = ' ';
		space = 0;
		(*buf)[(*len)++] = *value;
	}
}

/* Appends text to a growing buffer. */
static void
append(char **buf, size_t *len, size_t *cap, const char *text)
{
	size_t		n = strlen(text);

	while (*len + n + 1 >= *cap)
	{
		*cap *= 2;
		*buf = realloc(*buf, *cap);
	}
	memcpy(*buf + *len, text, n);
	*len += n;
	(*buf)[*len] = '\0';
}

/* The canonical request of SigV4, malloc'd. */
static char *
canonical_request(struct MHD_Connection *connection, const char *method, const char *url,
				  const char *signed_headers, const char *body, size_t body_len)
{
	size_t		cap = 1024;
	size_t		len = 0;
	char	   *buf = malloc(cap);
	char		names[1024];
	unsigned char digest[32];
	char		hex[65];

	buf[0] = '\0';
	append(&buf, &len, &cap, method);
	append(&buf, &len, &cap, "\n");
	append(&buf, &len, &cap, url && *url ? url : "/");
	append(&buf, &len, &cap, "\n\n");
	snprintf(names, sizeof(names), "%s", signed_headers);
	for (char *save = NULL, *name = strtok_r(names, ";", &save); name; name = strtok_r(NULL, ";", &save))
	{
		const char *value = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, name);

		append(&buf, &len, &cap, name);
		append(&buf, &len, &cap, ":");
		append_trimmed(&buf, &len, &cap, value ? value : "");
		buf[len] = '\0';
		append(&buf, &len, &cap, "\n");
	}
	append(&buf, &len, &cap, "\n");
	append(&buf, &len, &cap, signed_headers);
	append(&buf, &len, &cap, "\n");
	SHA256((const unsigned char *) body, body_len, digest);
	to_hex(digest, 32, hex);
	append(&buf, &len, &cap, hex);
	return buf;
}

/* The request time of an X-Amz-Date (20260322T103000Z), or -1. */
static time_t
parse_amz_date(const char *text)
{
	struct tm	tm;
	const char *end;

	memset(&tm, 0, sizeof(tm));
	if (text == NULL || (end = strptime(text, "%Y%m%dT%H%M%SZ", &tm)) == NULL || *end != '\0')
		return -1;
	return timegm(&tm);
}

/* The secret of an active access key, and the tables it may use as a JSON array, NULL for all (read-only, so it may be retried). */
static PGresult *
lookup_key(PGconn *conn, const char **params)
{
	return pool_exec(conn, "lookup_key", "SELECT secret_access_key, pg_catalog.array_to_json(tables)::pg_catalog.text "
					 "FROM ddb.access_keys WHERE access_key_id OPERATOR(pg_catalog.=) $1 AND revoked_at IS NULL",
					 1, params);
}

/* True when the signature was seen within the window; records it otherwise. */
static int
replayed(const char *signature, time_t now)
{
	unsigned long slot = strtoul((char[9]) {signature[0], signature[1], signature[2], signature[3],
		signature[4], signature[5], signature[6], signature[7], '\0'}, NULL, 16) % SEEN_SLOTS;
	int			again;

	pthread_mutex_lock(&seen_lock);
	again = strcmp(seen[slot].signature, signature) == 0 && now - seen[slot].at <= 2 * MAX_SKEW_SECONDS;
	if (!again)
	{
		snprintf(seen[slot].signature, sizeof(seen[slot].signature), "%s", signature);
		seen[slot].at = now;
	}
	pthread_mutex_unlock(&seen_lock);
	return again;
}

/* Verifies the request's SigV4 signature; see sigv4.h. */
void
sigv4_verify(struct MHD_Connection *connection, const char *method, const char *url,
			 const char *body, size_t body_len, PGconn *conn, AuthResult *result)
{
	const char *auth = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, "Authorization");
	const char *amz_date = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, "X-Amz-Date");
	char		credential[512];
	char		signed_headers[512];
	char		signature[128];
	char	   *parts[5];
	char	   *save = NULL;
	time_t		now = time(NULL);
	time_t		when;
	PGresult   *res;
	const char *params[1];
	char	   *canonical;
	unsigned char digest[32];
	char		hex[65];
	char	   *to_sign;
	unsigned char key[32];
	char	   *secret_key;
	char		expected[65];

	memset(result, 0, sizeof(*result));
	if (auth == NULL)
		REFUSE(DDB_ERROR_MISSING_AUTHENTICATION_TOKEN, "Request is missing Authentication Token");
	if (strncmp(auth, "AWS4-HMAC-SHA256 ", 17) != 0 || !auth_field(auth, "Credential=", credential, sizeof(credential)) ||
		!auth_field(auth, "SignedHeaders=", signed_headers, sizeof(signed_headers)) ||
		!auth_field(auth, "Signature=", signature, sizeof(signature)) || strlen(signature) != 64)
		REFUSE(DDB_ERROR_INCOMPLETE_SIGNATURE, "Authorization header requires 'Credential', 'Signature' and 'SignedHeaders' parameters");
	for (int i = 0; i < 5; i++)
	{
		parts[i] = strtok_r(i == 0 ? credential : NULL, "/", &save);
		if (parts[i] == NULL)
			REFUSE(DDB_ERROR_INCOMPLETE_SIGNATURE, "Credential should be scoped to a valid region, service and aws4_request");
	}
	when = parse_amz_date(amz_date);
	if (when < 0 || strncmp(amz_date, parts[1], 8) != 0 || strstr(signed_headers, "x-amz-date") == NULL ||
		strstr(signed_headers, "host") == NULL)
		REFUSE(DDB_ERROR_INCOMPLETE_SIGNATURE, "X-Amz-Date and Host must be signed, and the date must match the credential scope");
	if (when < now - MAX_SKEW_SECONDS || when > now + MAX_SKEW_SECONDS)
		REFUSE(DDB_ERROR_INVALID_SIGNATURE, "Signature expired: the request's date is more than 15 minutes from now");

	params[0] = parts[0];
	res = lookup_key(conn, params);
	if (PQresultStatus(res) != PGRES_TUPLES_OK && PQstatus(conn) == CONNECTION_BAD)
	{
		/* the server went away since the connection's last use (a restart, say): once more on a new one */
		PQclear(res);
		PQreset(conn);
		res = lookup_key(conn, params);
	}
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
	{
		refuse(result, DDB_ERROR_INTERNAL_SERVER_ERROR, PQerrorMessage(conn));
		PQclear(res);
		return;
	}
	if (PQntuples(res) != 1)
	{
		PQclear(res);
		REFUSE(DDB_ERROR_UNRECOGNIZED_CLIENT, "The security token included in the request is invalid.");
	}
	secret_key = malloc(strlen(PQgetvalue(res, 0, 0)) + 5);
	sprintf(secret_key, "AWS4%s", PQgetvalue(res, 0, 0));
	result->tables = PQgetisnull(res, 0, 1) ? NULL : strdup(PQgetvalue(res, 0, 1));
	snprintf(result->access_key_id, sizeof(result->access_key_id), "%s", parts[0]);
	PQclear(res);

	canonical = canonical_request(connection, method, url, signed_headers, body, body_len);
	SHA256((const unsigned char *) canonical, strlen(canonical), digest);
	to_hex(digest, 32, hex);
	free(canonical);
	if (asprintf(&to_sign, "AWS4-HMAC-SHA256\n%s\n%s/%s/%s/%s\n%s", amz_date, parts[1], parts[2], parts[3], parts[4], hex) < 0)
	{
		free(secret_key);
		REFUSE(DDB_ERROR_INTERNAL_SERVER_ERROR, "out of memory");
	}
	hmac((unsigned char *) secret_key, strlen(secret_key), parts[1], key);
	hmac(key, 32, parts[2], key);
	hmac(key, 32, parts[3], key);
	hmac(key, 32, parts[4], key);
	hmac(key, 32, to_sign, digest);
	to_hex(digest, 32, expected);
	free(to_sign);
	free(secret_key);
	if (CRYPTO_memcmp(expected, signature, 64) != 0)
		REFUSE(DDB_ERROR_INVALID_SIGNATURE,
					  "The request signature we calculated does not match the signature you provided. "
					  "Check your AWS Secret Access Key and signing method. Consult the service documentation for details.");
	if (replayed(signature, now))
		REFUSE(DDB_ERROR_INVALID_SIGNATURE, "The request signature was used before: a signed request is accepted once");
}
