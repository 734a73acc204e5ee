/* bench/http_ceiling/common.c — the listening socket, the command line and the threads of the servers. */
#include "common.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Prints what failed and why (errno), and exits. */
void
fail(const char *what)
{
	fprintf(stderr, "http_ceiling: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* Reads "THREADS PORT [CERT KEY]" from argv[first] on, or prints the usage and exits; ignores SIGPIPE. */
void
parse_options(int argc, char **argv, int first, const char *usage, Options *options)
{
	if (argc - first != 2 && argc - first != 4)
	{
		fprintf(stderr, "usage: %s %sTHREADS PORT [CERT.pem KEY.pem]\n", argv[0], usage);
		exit(2);
	}
	options->threads = atoi(argv[first]);
	options->port = atoi(argv[first + 1]);
	options->cert = argc - first == 4 ? argv[first + 2] : NULL;
	options->key = argc - first == 4 ? argv[first + 3] : NULL;
	/* a write to a connection the client closed fails, and does not end the server */
	signal(SIGPIPE, SIG_IGN);
	if (options->threads < 1 || options->threads > 256 || options->port < 1 || options->port > 65535)
	{
		fprintf(stderr, "%s: THREADS is 1 to 256, PORT 1 to 65535\n", argv[0]);
		exit(2);
	}
}

/* A non-blocking socket listening on 127.0.0.1:port; several may share the port with reuse_port. */
int
listen_socket(int port, int reuse_port)
{
	struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons(port)};
	int			fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int			on = 1;

	address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) != 0)
		fail("socket");
	if (reuse_port && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof(on)) != 0)
		fail("SO_REUSEPORT");
	/* inherited by the connections accepted (Linux): a response written in pieces (TLS records) goes out at once */
	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on)) != 0)
		fail("TCP_NODELAY");
	if (bind(fd, (struct sockaddr *) &address, sizeof(address)) != 0 || listen(fd, 4096) != 0)
		fail("listen");
	return fd;
}

/* A whole file, NUL-terminated (a PEM file for libmicrohttpd); exits when it cannot be read. */
char *
read_file(const char *path)
{
	FILE	   *file = fopen(path, "rb");
	char	   *text;
	long		size;

	if (file == NULL || fseek(file, 0, SEEK_END) != 0 || (size = ftell(file)) < 0 || fseek(file, 0, SEEK_SET) != 0)
		fail(path);
	if ((text = malloc(size + 1)) == NULL || fread(text, 1, size, file) != (size_t) size)
		fail(path);
	text[size] = '\0';
	fclose(file);
	return text;
}

/* Runs serve(args[i]) in count threads and waits for them (they serve until the process is killed). */
void
run_threads(int count, void *(*serve) (void *), void *const *args)
{
	pthread_t	threads[256];

	for (int i = 0; i < count; i++)
		if ((errno = pthread_create(&threads[i], NULL, serve, args[i])) != 0)
			fail("pthread_create");
	for (int i = 0; i < count; i++)
		pthread_join(threads[i], NULL);
}
