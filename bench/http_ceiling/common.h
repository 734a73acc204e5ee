/*
 * bench/http_ceiling/common.h — what the servers of bench/http_ceiling.sh
 * share: the answer they give, the listening socket, the command line and
 * the threads.
 */
#ifndef HTTP_CEILING_COMMON_H
#define HTTP_CEILING_COMMON_H

/* The body of every answer: about the size of a small GetItem's. */
#define ANSWER_BODY "{\"Item\":{\"pk\":{\"S\":\"USER#42\"},\"sk\":{\"S\":\"ORDER#2026-01-01#00000672\"},\"status\":{\"S\":\"SHIPPED\"}}}"
#define ANSWER_TYPE "application/x-amz-json-1.0"

/* What the command line gave: threads, port, and the TLS files (NULL for plain HTTP). */
typedef struct Options
{
	int			threads;
	int			port;
	const char *cert;
	const char *key;
} Options;

extern void parse_options(int argc, char **argv, int first, const char *usage, Options *options);
extern int	listen_socket(int port, int reuse_port);
extern char *read_file(const char *path);
extern void run_threads(int count, void *(*serve) (void *), void *const *args);
extern void fail(const char *what);

#endif
