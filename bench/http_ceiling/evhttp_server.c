/*
 * bench/http_ceiling/evhttp_server.c — libevent's evhttp answering POST /
 * with ANSWER_BODY once its body is read (evhttp reads a request's whole
 * body before its callback runs): THREADS threads, each with its event
 * base, its evhttp and its own listening socket on the port
 * (SO_REUSEPORT); TLS (OpenSSL, through bufferevent_openssl) with CERT and
 * KEY.
 */
#include "common.h"
#include "tls_openssl.h"

#include <event2/buffer.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/http.h>
#include <stdio.h>
#include <string.h>

/* Given to every thread. */
static Options options;
static SSL_CTX *tls;

/* Drops the body read, and answers. */
static void
answer(struct evhttp_request *request, void *arg)
{
	struct evbuffer *body = evhttp_request_get_input_buffer(request);

	(void) arg;
	evbuffer_drain(body, evbuffer_get_length(body));
	evhttp_add_header(evhttp_request_get_output_headers(request), "Content-Type", ANSWER_TYPE);
	evbuffer_add_reference(evhttp_request_get_output_buffer(request), ANSWER_BODY, strlen(ANSWER_BODY), NULL, NULL);
	evhttp_send_reply(request, 200, "OK", NULL);
}

/* A new connection's buffer: TLS, accepting. */
static struct bufferevent *
tls_buffer(struct event_base *base, void *arg)
{
	(void) arg;
	return bufferevent_openssl_socket_new(base, -1, SSL_new(tls), BUFFEREVENT_SSL_ACCEPTING, BEV_OPT_CLOSE_ON_FREE);
}

/* One thread: its event base, its evhttp on its listening socket. */
static void *
serve(void *arg)
{
	struct event_base *base = event_base_new();
	struct evhttp *http = base ? evhttp_new(base) : NULL;

	(void) arg;
	if (http == NULL || evhttp_accept_socket(http, listen_socket(options.port, 1)) != 0)
		fail("evhttp");
	evhttp_set_allowed_methods(http, EVHTTP_REQ_POST);
	evhttp_set_gencb(http, answer, NULL);
	if (tls != NULL)
		evhttp_set_bevcb(http, tls_buffer, NULL);
	event_base_dispatch(base);
	return NULL;
}

int
main(int argc, char **argv)
{
	static void *args[256];

	parse_options(argc, argv, 1, "", &options);
	if (options.cert != NULL)
		tls = tls_context(options.cert, options.key);
	fprintf(stderr, "evhttp_server: %d threads, serving on %d\n", options.threads, options.port);
	run_threads(options.threads, serve, args);
	return 0;
}
