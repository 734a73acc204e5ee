/*
 * cors.h — cross-origin requests from web pages (the cors setting): which
 * origins may call the gateway, the preflight's answer, and the headers a
 * response from an allowed origin carries, as DynamoDB's endpoints answer
 * them.  docs/gateway.md.
 */
#ifndef DDB_GATEWAY_CORS_H
#define DDB_GATEWAY_CORS_H

#include <microhttpd.h>
#include <stddef.h>

/* The origins whose pages may call the gateway. */
typedef struct CorsPolicy
{
	int			on;				/* the cors setting was given: without it no CORS header is sent */
	int			any;			/* "*": every origin (a loopback gateway only) */
	int			count;
	char	  **origins;		/* scheme://host[:port], lower case, without a default port */
} CorsPolicy;

/*
 * Reads the cors setting (origins separated by commas, or "*") into policy;
 * 0, or -1 with what is wrong in what.
 */
extern int	cors_parse(const char *value, CorsPolicy *policy, char *what, size_t what_size);

/* True when a request is a CORS preflight: OPTIONS with Origin and Access-Control-Request-Method. */
extern int	cors_is_preflight(struct MHD_Connection *connection, const char *method);

/* The Access-Control-Allow-Origin a request gets: "*", its Origin, or NULL when its origin is not allowed. */
extern const char *cors_allowed_origin(const CorsPolicy *policy, struct MHD_Connection *connection);

/*
 * Adds the CORS headers to a response (none when the policy is off or the
 * origin not allowed); a preflight's answer also allows the method and
 * headers it asked for, for as long as DynamoDB's endpoints do.
 */
extern void cors_add_headers(const CorsPolicy *policy, struct MHD_Connection *connection,
							 struct MHD_Response *response, int preflight);

#endif
