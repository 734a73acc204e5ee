/*
 * sigv4.c — verifies AWS Signature Version 4 on a DynamoDB request: the
 * canonical request (method, path, signed headers, SHA-256 of the body), the
 * string to sign, and the signing key derived from the secret in
 * ddb.access_keys.  Signatures are compared in constant time and dates must
 * be within AWS's 15 minutes of clock skew.  Host, X-Amz-Date and
 * X-Amz-Target must be signed, so that a captured request cannot be sent to
 * another operation.  A signed request may come again, as AWS accepts it
 * (HTTP resends, SDKs that sign without a per-call id).
 */
#define _GNU_SOURCE
#include "sigv4.h"

#include "keycache.h"
#include "connect.h"

#include <ctype.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* AWS's clock skew window, both ways */
#define MAX_SKEW_SECONDS 900

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

/*
 * SHA-256, fetched once (sigv4_start): OpenSSL 3's one-shot SHA256() and
 * HMAC() look the algorithm up, under a lock, on every call, which was a
 * quarter of the gateway's CPU in a profile of signed GetItems.
 */
static EVP_MD *sha256_md;

/* This thread's digest context, kept from one request to the next. */
static __thread EVP_MD_CTX *thread_digest;

/* Fetches SHA-256 once for all threads; 0 on success. */
int
sigv4_start(void)
{
	sha256_md = EVP_MD_fetch(NULL, "SHA256", NULL);
	return sha256_md ? 0 : -1;
}

/* This thread's digest context, started on SHA-256; NULL when OpenSSL cannot make one. */
static EVP_MD_CTX *
digest_begin(void)
{
	if (thread_digest == NULL)
		thread_digest = EVP_MD_CTX_new();
	if (thread_digest == NULL || !EVP_DigestInit_ex2(thread_digest, sha256_md, NULL))
		return NULL;
	return thread_digest;
}

/* SHA-256 of the pieces a and b (b may be empty), into out (32 bytes); 0 on success. */
static int
sha256_of(const void *a, size_t a_len, const void *b, size_t b_len, unsigned char *out)
{
	EVP_MD_CTX *ctx = digest_begin();

	return ctx && EVP_DigestUpdate(ctx, a, a_len) && EVP_DigestUpdate(ctx, b, b_len) &&
		EVP_DigestFinal_ex(ctx, out, NULL) ? 0 : -1;
}

/* HMAC-SHA256 (RFC 2104) of data under key, into out (32 bytes); 0 on success. */
static int
hmac(const unsigned char *key, size_t key_len, const char *data, unsigned char *out)
{
	unsigned char block[64] = {0};
	unsigned char inner[32];
	int			failed;

	if (key_len > sizeof(block))
	{
		if (sha256_of(key, key_len, "", 0, block) != 0)
			return -1;
	}
	else
		memcpy(block, key, key_len);
	for (size_t i = 0; i < sizeof(block); i++)
		block[i] ^= 0x36;
	failed = sha256_of(block, sizeof(block), data, strlen(data), inner);
	for (size_t i = 0; i < sizeof(block); i++)
		block[i] ^= 0x36 ^ 0x5c;
	failed = failed || sha256_of(block, sizeof(block), inner, sizeof(inner), out);
	OPENSSL_cleanse(block, sizeof(block));
	return failed ? -1 : 0;
}

/* The last signing key this thread derived, and what it derived it from. */
typedef struct DerivedKey
{
	char		secret[KEYCACHE_SECRET_MAX + 8];	/* "AWS4" and the secret */
	char		scope[256];		/* date/region/service/aws4_request */
	unsigned char key[32];
} DerivedKey;

static __thread DerivedKey last_derived;

/*
 * The signing key of a secret ("AWS4" and the secret) for a credential
 * scope, into key (32 bytes): four HMACs, or none when this thread derived
 * it last (an SDK signs a day's requests in one scope); 0 on success.  A
 * secret or scope too long to keep is derived every time.
 */
static int
signing_key(const char *secret, char *const *scope, unsigned char *key)
{
	char		scope_text[sizeof(last_derived.scope)];
	int			keep = strlen(secret) < sizeof(last_derived.secret) &&
		snprintf(scope_text, sizeof(scope_text), "%s/%s/%s/%s", scope[1], scope[2], scope[3], scope[4]) <
		(int) sizeof(scope_text);

	if (keep && strcmp(scope_text, last_derived.scope) == 0 && strcmp(secret, last_derived.secret) == 0)
	{
		memcpy(key, last_derived.key, 32);
		return 0;
	}
	if (keep)
		last_derived.scope[0] = '\0';
	if (hmac((const unsigned char *) secret, strlen(secret), scope[1], key) != 0 ||
		hmac(key, 32, scope[2], key) != 0 || hmac(key, 32, scope[3], key) != 0 ||
		hmac(key, 32, scope[4], key) != 0)
		return -1;
	if (keep)
	{
		memcpy(last_derived.key, key, 32);
		strcpy(last_derived.secret, secret);
		strcpy(last_derived.scope, scope_text);
	}
	return 0;
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
	if (sha256_of(body, body_len, "", 0, digest) != 0)
	{
		free(buf);
		return NULL;
	}
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

/*
 * "AWS4" and the secret of a key, which the signing key derives from: the
 * key given, or the gateway's cache's (its role into result).  NULL when
 * neither has it (result->lookup set: look the key up) or out of memory
 * (refused).
 */
static char *
signing_secret(const char *key_id, const KnownKey *key, AuthResult *result)
{
	char		cached[KEYCACHE_SECRET_MAX];
	char	   *secret = NULL;

	if (key == NULL && !keycache_get(key_id, cached, result->role_name, &result->cache_generation))
	{
		result->lookup = 1;
		return NULL;
	}
	if (key)
		snprintf(result->role_name, sizeof(result->role_name), "%s", key->role);
	if (asprintf(&secret, "AWS4%s", key ? key->secret : cached) < 0)
	{
		refuse(result, DDB_ERROR_INTERNAL_SERVER_ERROR, "out of memory");
		return NULL;
	}
	return secret;
}

/* What the key lookup's result says; see sigv4.h. */
int
sigv4_key_of_result(PGconn *conn, const PGresult *res, AuthResult *result, KnownKey *key)
{
	result->lookup = 0;
	if (PQresultStatus(res) != PGRES_TUPLES_OK && db_connection_failed(conn, res))
		refuse(result, DDB_ERROR_SERVICE_UNAVAILABLE, "The database is unavailable: retry later");
	else if (PQresultStatus(res) != PGRES_TUPLES_OK)
		refuse(result, DDB_ERROR_INTERNAL_SERVER_ERROR, PQresultErrorMessage(res));
	else if (PQntuples(res) != 1)
		refuse(result, DDB_ERROR_UNRECOGNIZED_CLIENT, "The security token included in the request is invalid.");
	else
	{
		snprintf(key->secret, sizeof(key->secret), "%s", PQgetvalue(res, 0, 0));
		snprintf(key->role, sizeof(key->role), "%s", PQgetisnull(res, 0, 1) ? "" : PQgetvalue(res, 0, 1));
		keycache_put(result->access_key_id, key->secret, key->role, result->cache_generation);
		return 1;
	}
	return 0;
}

/* True when name is one of the ';'-separated SignedHeaders. */
static int
is_signed(const char *signed_headers, const char *name)
{
	size_t		n = strlen(name);

	for (const char *at = signed_headers; *at; at += strcspn(at, ";"), at += *at == ';')
		if (strncmp(at, name, n) == 0 && (at[n] == ';' || at[n] == '\0'))
			return 1;
	return 0;
}

/* An epoch time as X-Amz-Date writes it, into out (17 bytes). */
static void
format_amz_date(time_t t, char *out)
{
	struct tm	tm;

	gmtime_r(&t, &tm);
	strftime(out, 17, "%Y%m%dT%H%M%SZ", &tm);
}

/* Refuses a request dated outside the clock skew window, with AWS's message giving both times. */
static void
refuse_skew(AuthResult *result, const char *amz_date, time_t when, time_t now)
{
	char		bound[17];
	char		server[17];

	format_amz_date(now, server);
	if (when < now - MAX_SKEW_SECONDS)
	{
		format_amz_date(now - MAX_SKEW_SECONDS, bound);
		snprintf(result->message, sizeof(result->message),
				 "Signature expired: %s is now earlier than %s (%s - 15 min.)", amz_date, bound, server);
	}
	else
	{
		format_amz_date(now + MAX_SKEW_SECONDS, bound);
		snprintf(result->message, sizeof(result->message),
				 "Signature not yet current: %s is still later than %s (%s + 15 min.)", amz_date, bound, server);
	}
	result->error = ddb_error_type(DDB_ERROR_INVALID_SIGNATURE);
}

/*
 * Refuses a request whose SignedHeaders lack a header that must be signed,
 * or name one the request does not have; true when it did.
 */
static int
refuse_unsigned(struct MHD_Connection *connection, const char *signed_headers, AuthResult *result)
{
	static const char *const required[][2] = {{"host", "Host"}, {"x-amz-date", "X-Amz-Date"},
	{"x-amz-target", "X-Amz-Target"}};
	char		names[512];
	char	   *save = NULL;

	for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++)
		if (!is_signed(signed_headers, required[i][0]))
		{
			result->error = ddb_error_type(DDB_ERROR_INVALID_SIGNATURE);
			snprintf(result->message, sizeof(result->message),
					 "'%s' must be a 'SignedHeader' in the AWS Authorization.", required[i][1]);
			return 1;
		}
	snprintf(names, sizeof(names), "%s", signed_headers);
	for (char *name = strtok_r(names, ";", &save); name; name = strtok_r(NULL, ";", &save))
		if (MHD_lookup_connection_value(connection, MHD_HEADER_KIND, name) == NULL)
		{
			result->error = ddb_error_type(DDB_ERROR_INCOMPLETE_SIGNATURE);
			snprintf(result->message, sizeof(result->message),
					 "'%s' is named as a SignedHeader, but it does not exist in the HTTP request.", name);
			return 1;
		}
	return 0;
}

/* Verifies the request's SigV4 signature; see sigv4.h. */
void
sigv4_verify(struct MHD_Connection *connection, const char *method, const char *url,
			 const char *body, size_t body_len, const KnownKey *key, AuthResult *result)
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
	char	   *canonical;
	unsigned char digest[32];
	char		hex[65];
	char	   *to_sign;
	unsigned char signing[32];
	char	   *secret_key;
	char		expected[65];
	int			failed = 0;

	memset(result, 0, sizeof(*result));
	if (auth == NULL)
		REFUSE(DDB_ERROR_MISSING_AUTHENTICATION_TOKEN, "Request is missing Authentication Token");
	if (strncmp(auth, "AWS4-HMAC-SHA256 ", 17) != 0)
		REFUSE(DDB_ERROR_INCOMPLETE_SIGNATURE, "Authorization header must use the AWS4-HMAC-SHA256 algorithm");
	if (!auth_field(auth, "Credential=", credential, sizeof(credential)) ||
		!auth_field(auth, "SignedHeaders=", signed_headers, sizeof(signed_headers)) ||
		!auth_field(auth, "Signature=", signature, sizeof(signature)) || strlen(signature) != 64)
	{
		snprintf(result->message, sizeof(result->message),
				 "Authorization header requires 'Credential' parameter. Authorization header requires 'Signature' parameter. "
				 "Authorization header requires 'SignedHeaders' parameter. Authorization=%.100s", auth);
		result->error = ddb_error_type(DDB_ERROR_INCOMPLETE_SIGNATURE);
		return;
	}
	for (int i = 0; i < 5; i++)
	{
		parts[i] = strtok_r(i == 0 ? credential : NULL, "/", &save);
		if (parts[i] == NULL)
			REFUSE(DDB_ERROR_INCOMPLETE_SIGNATURE, "Credential should be scoped to a valid region, service and aws4_request");
	}
	if (amz_date == NULL)
		REFUSE(DDB_ERROR_INCOMPLETE_SIGNATURE, "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header.");
	if (refuse_unsigned(connection, signed_headers, result))
		return;
	when = parse_amz_date(amz_date);
	if (when < 0)
		REFUSE(DDB_ERROR_INCOMPLETE_SIGNATURE, "X-Amz-Date must be in the ISO 8601 basic format YYYYMMDD'T'HHMMSS'Z'");
	if (strncmp(amz_date, parts[1], 8) != 0)
		REFUSE(DDB_ERROR_INVALID_SIGNATURE, "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP");
	if (when < now - MAX_SKEW_SECONDS || when > now + MAX_SKEW_SECONDS)
	{
		refuse_skew(result, amz_date, when, now);
		return;
	}

	snprintf(result->access_key_id, sizeof(result->access_key_id), "%s", parts[0]);
	secret_key = signing_secret(parts[0], key, result);
	if (secret_key == NULL)
		return;

	canonical = canonical_request(connection, method, url, signed_headers, body, body_len);
	if (canonical == NULL || sha256_of(canonical, strlen(canonical), "", 0, digest) != 0)
		failed = 1;
	free(canonical);
	to_hex(digest, 32, hex);
	if (!failed && asprintf(&to_sign, "AWS4-HMAC-SHA256\n%s\n%s/%s/%s/%s\n%s", amz_date, parts[1], parts[2], parts[3], parts[4], hex) < 0)
		failed = 1;
	if (!failed)
	{
		failed = signing_key(secret_key, parts, signing) != 0 || hmac(signing, 32, to_sign, digest) != 0;
		free(to_sign);
	}
	OPENSSL_cleanse(signing, sizeof(signing));
	free(secret_key);
	if (failed)
		REFUSE(DDB_ERROR_INTERNAL_SERVER_ERROR, "The signature could not be computed");
	to_hex(digest, 32, expected);
	if (CRYPTO_memcmp(expected, signature, 64) != 0)
		REFUSE(DDB_ERROR_INVALID_SIGNATURE,
					  "The request signature we calculated does not match the signature you provided. "
					  "Check your AWS Secret Access Key and signing method. Consult the service documentation for details.");
}
