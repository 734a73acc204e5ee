/*
 * cors.c — cross-origin requests from web pages (cors.h).
 *
 * A page that calls the gateway with an AWS SDK sends signed requests, with
 * Authorization and X-Amz-* headers, so its browser first asks with a
 * preflight (OPTIONS, Origin, Access-Control-Request-Method and -Headers)
 * and sends the request only when the answer allows it.  DynamoDB's
 * endpoints allow every origin: a preflight answers 200 with the method and
 * headers asked for, cached for 172800 seconds, without a signature
 * (browsers send none); every response to a request with an Origin exposes
 * the headers the SDKs read.  The gateway answers the same way to the
 * origins of its cors setting, naming the origin (and Vary: Origin) rather
 * than "*" unless the setting is "*".  It allows whatever headers a
 * preflight asks for, as DynamoDB does: the signature check of the request
 * itself guards the gateway, and a list would only break the SDK that adds
 * a header.  A preflight from an origin not allowed is refused (403, in
 * handler.c) and no response to it carries a CORS header, so its browser
 * keeps the page from the answer.
 */
#include "cors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/*
 * The response headers the SDKs read, as DynamoDB's endpoints expose them,
 * and x-amz-crc32, which the SDKs check the body against.
 */
#define EXPOSED_HEADERS "x-amzn-RequestId,x-amzn-ErrorType,x-amz-request-id,x-amz-id-2,x-amzn-ErrorMessage,Date,x-amz-crc32"

/* How long a browser may keep a preflight's answer, in seconds: DynamoDB's. */
#define PREFLIGHT_MAX_AGE "172800"

/* The longest Access-Control-Request-Headers echoed back. */
#define MAX_REQUEST_HEADERS 2048

/* Normalizes one origin (lower case, no default port) into out; NULL, or what is wrong with it. */
static const char *
normalize_origin(const char *text, size_t len, char *out, size_t out_size)
{
	size_t		i = 0;
	size_t		host_start;
	size_t		host_end;
	long		port = -1;

	if (len == 0)
		return "is empty";
	if (len >= out_size)
		return "is too long";
	/* scheme: a letter, then letters, digits, '+', '-' or '.' */
	while (i < len && (((text[i] | 0x20) >= 'a' && (text[i] | 0x20) <= 'z') ||
					   (i > 0 && ((text[i] >= '0' && text[i] <= '9') || strchr("+-.", text[i]) != NULL))))
		i++;
	if (i == 0 || len - i < 3 || strncmp(text + i, "://", 3) != 0)
		return "has no scheme:// (such as http://)";
	host_start = i + 3;
	i = host_start;
	if (i < len && text[i] == '[')
	{
		/* an IPv6 address */
		while (i < len && text[i] != ']')
			i++;
		if (i == len)
			return "has an unclosed [";
		i++;
	}
	else
		while (i < len && (((text[i] | 0x20) >= 'a' && (text[i] | 0x20) <= 'z') ||
						   (text[i] >= '0' && text[i] <= '9') || text[i] == '.' || text[i] == '-'))
			i++;
	host_end = i;
	if (host_end == host_start)
		return "has no host";
	if (i < len && text[i] == ':')
	{
		char	   *end;

		port = strtol(text + i + 1, &end, 10);
		if (text[i + 1] < '0' || text[i + 1] > '9' || port < 1 || port > 65535)
			return "has a port that is not a number from 1 to 65535";
		i = end - text;
	}
	if (i < len)
		return text[i] == '/' ? "has a path (an origin ends at its host or port, with no /)" :
			"has a character an origin cannot hold";
	for (size_t k = 0; k < host_end; k++)
		out[k] = (text[k] >= 'A' && text[k] <= 'Z') ? text[k] | 0x20 : text[k];
	out[host_end] = '\0';
	/* browsers send no default port: http://host:80 is sent as http://host */
	if (port > 0 && !((port == 80 && strncmp(out, "http://", 7) == 0) ||
					  (port == 443 && strncmp(out, "https://", 8) == 0)))
		snprintf(out + host_end, out_size - host_end, ":%ld", port);
	return NULL;
}

/* Reads the cors setting (origins separated by commas, or "*") into policy; 0, or -1 with what is wrong. */
int
cors_parse(const char *value, CorsPolicy *policy, char *what, size_t what_size)
{
	const char *start = value;

	memset(policy, 0, sizeof(*policy));
	policy->on = 1;
	if (strcmp(value, "*") == 0)
	{
		policy->any = 1;
		return 0;
	}
	policy->origins = calloc(strlen(value) / 2 + 2, sizeof(char *));
	if (policy->origins == NULL)
	{
		snprintf(what, what_size, "out of memory");
		return -1;
	}
	for (;;)
	{
		const char *comma = strchr(start, ',');
		const char *end = comma ? comma : start + strlen(start);
		char		origin[300];
		const char *wrong;

		while (start < end && (*start == ' ' || *start == '\t'))
			start++;
		while (end > start && (end[-1] == ' ' || end[-1] == '\t'))
			end--;
		wrong = end - start == 1 && *start == '*' ? "is *, which stands alone (every origin) or not at all" :
			normalize_origin(start, end - start, origin, sizeof(origin));
		if (wrong)
		{
			snprintf(what, what_size, "the origin \"%.*s\" %s: cors takes the origins that may call the gateway as "
					 "browsers send them, scheme://host[:port] separated by commas (such as "
					 "http://localhost:3000,https://app.example.com), or * on a loopback address",
					 (int) (end - start > 100 ? 100 : end - start), start, wrong);
			return -1;
		}
		policy->origins[policy->count++] = strdup(origin);
		if (comma == NULL)
			return 0;
		start = comma + 1;
	}
}

/* True when a request is a CORS preflight: OPTIONS with Origin and Access-Control-Request-Method. */
int
cors_is_preflight(struct MHD_Connection *connection, const char *method)
{
	return strcmp(method, MHD_HTTP_METHOD_OPTIONS) == 0 &&
		MHD_lookup_connection_value(connection, MHD_HEADER_KIND, "Origin") != NULL &&
		MHD_lookup_connection_value(connection, MHD_HEADER_KIND,
									MHD_HTTP_HEADER_ACCESS_CONTROL_REQUEST_METHOD) != NULL;
}

/* The Access-Control-Allow-Origin a request gets: "*", its Origin, or NULL when its origin is not allowed. */
const char *
cors_allowed_origin(const CorsPolicy *policy, struct MHD_Connection *connection)
{
	const char *origin;

	if (!policy->on)
		return NULL;
	origin = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, "Origin");
	if (origin == NULL)
		return NULL;
	if (policy->any)
		return "*";
	for (int i = 0; i < policy->count; i++)
		if (strcasecmp(policy->origins[i], origin) == 0)
			return origin;
	return NULL;
}

/* True when text is a list of HTTP tokens (header names, a method) separated by commas and spaces. */
static int
token_list(const char *text)
{
	if (text == NULL || text[0] == '\0' || strlen(text) > MAX_REQUEST_HEADERS)
		return 0;
	for (const char *c = text; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
			  strchr("!#$%&'*+-.^_`|~, ", *c) != NULL))
			return 0;
	return 1;
}

/*
 * Adds the CORS headers to a response (none when the policy is off or the
 * origin not allowed); a preflight's answer also allows the method and
 * headers it asked for.
 */
void
cors_add_headers(const CorsPolicy *policy, struct MHD_Connection *connection, struct MHD_Response *response,
				 int preflight)
{
	const char *allowed;
	const char *method;
	const char *headers;

	if (!policy->on)
		return;
	allowed = cors_allowed_origin(policy, connection);
	/* the answer names the origin it was given for: a cache must keep one per origin */
	if (!policy->any)
		MHD_add_response_header(response, MHD_HTTP_HEADER_VARY, "Origin");
	if (allowed == NULL)
		return;
	MHD_add_response_header(response, MHD_HTTP_HEADER_ACCESS_CONTROL_ALLOW_ORIGIN, allowed);
	MHD_add_response_header(response, MHD_HTTP_HEADER_ACCESS_CONTROL_EXPOSE_HEADERS, EXPOSED_HEADERS);
	if (!preflight)
		return;
	method = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCESS_CONTROL_REQUEST_METHOD);
	headers = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCESS_CONTROL_REQUEST_HEADERS);
	if (token_list(method))
		MHD_add_response_header(response, MHD_HTTP_HEADER_ACCESS_CONTROL_ALLOW_METHODS, method);
	if (token_list(headers))
		MHD_add_response_header(response, MHD_HTTP_HEADER_ACCESS_CONTROL_ALLOW_HEADERS, headers);
	MHD_add_response_header(response, MHD_HTTP_HEADER_ACCESS_CONTROL_MAX_AGE, PREFLIGHT_MAX_AGE);
}
