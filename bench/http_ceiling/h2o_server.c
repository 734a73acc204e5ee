/*
 * bench/http_ceiling/h2o_server.c — libh2o's own event loop (evloop)
 * answering POST / with ANSWER_BODY once its body is read (h2o reads a
 * request's whole body before its handler runs): THREADS threads, each
 * with its loop and its own listening socket on the port (SO_REUSEPORT);
 * TLS (OpenSSL) with CERT and KEY.  MODE "now" answers in the handler;
 * "later" keeps the request and answers it after the loop's turn, as a
 * request waiting for the database would be (h2o needs no suspending: the
 * connection stays in the loop's epoll set).
 */
#define H2O_USE_LIBUV 0
#include "common.h"
#include "tls_openssl.h"

#include <h2o.h>
#include <stdio.h>
#include <string.h>

/* The one configuration every thread's context serves. */
static h2o_globalconf_t config;
/* Given to every thread's loop. */
static Options options;
static SSL_CTX *tls;
/* Whether requests are answered after the loop's turn, and the thread's requests waiting for it. */
static int	later;
static __thread h2o_req_t *waiting[4096];
static __thread int waiting_count;

/* Sends the answer. */
static void
respond(h2o_req_t *req)
{
	req->res.status = 200;
	req->res.reason = "OK";
	h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_CONTENT_TYPE, NULL, H2O_STRLIT(ANSWER_TYPE));
	h2o_send_inline(req, H2O_STRLIT(ANSWER_BODY));
}

/* Answers a POST, at once or after the loop's turn; anything else goes on to h2o's 404. */
static int
answer(h2o_handler_t *self, h2o_req_t *req)
{
	(void) self;
	if (!h2o_memis(req->method.base, req->method.len, H2O_STRLIT("POST")))
		return -1;
	if (later && waiting_count < 4096)
		waiting[waiting_count++] = req;
	else
		respond(req);
	return 0;
}

/* Accepts what the listening socket has waiting, and hands each connection to h2o. */
static void
accept_connections(h2o_socket_t *listener, const char *error)
{
	h2o_socket_t *socket;

	if (error != NULL)
		return;
	while ((socket = h2o_evloop_socket_accept(listener)) != NULL)
		h2o_accept(listener->data, socket);
}

/* One thread: its context, its listening socket, its loop. */
static void *
serve(void *arg)
{
	h2o_context_t context;
	h2o_accept_ctx_t accept_context = {.ctx = &context, .hosts = config.hosts, .ssl_ctx = tls};
	h2o_socket_t *listener;

	(void) arg;
	h2o_context_init(&context, h2o_evloop_create(), &config);
	listener = h2o_evloop_socket_create(context.loop, listen_socket(options.port, 1), H2O_SOCKET_FLAG_DONT_READ);
	listener->data = &accept_context;
	h2o_socket_read_start(listener, accept_connections);
	/* h2o_evloop_run fails when a signal interrupts its wait (EINTR): that is no reason to stop */
	for (;;)
	{
		h2o_evloop_run(context.loop, INT32_MAX);
		for (int i = 0; i < waiting_count; i++)
			respond(waiting[i]);
		waiting_count = 0;
	}
	return NULL;
}

int
main(int argc, char **argv)
{
	h2o_pathconf_t *path;
	static void *args[256];

	parse_options(argc, argv, 2, "now|later ", &options);
	if (strcmp(argv[1], "now") != 0 && strcmp(argv[1], "later") != 0)
	{
		fprintf(stderr, "%s: MODE is now or later\n", argv[0]);
		return 2;
	}
	later = strcmp(argv[1], "later") == 0;
	h2o_config_init(&config);
	path = h2o_config_register_path(h2o_config_register_host(&config, h2o_iovec_init(H2O_STRLIT("default")), 65535), "/", 0);
	h2o_create_handler(path, sizeof(h2o_handler_t))->on_req = answer;
	if (options.cert != NULL)
		tls = tls_context(options.cert, options.key);
	fprintf(stderr, "h2o_server: %s, %d threads, serving on %d\n", argv[1], options.threads, options.port);
	run_threads(options.threads, serve, args);
	return 0;
}
