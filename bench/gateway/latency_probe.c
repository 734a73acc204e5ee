/*
 * bench/gateway/latency_probe.c — one keep-alive connection that sends the
 * requests bench/gateway/presign.js signed, one after another, for a number
 * of seconds, and times each from its write to the end of its response with
 * the monotonic clock.  It is one of the benchmark's connections (wrk makes
 * the others), so what it sees is what every connection sees, measured
 * without wrk's correction for coordinated omission (wrk adds samples for
 * the requests a slow one held back, which makes its p99 follow its slowest
 * request).  Prints "probe requests N p50 US p99 US max US", or fails on a
 * response that is not a 200.
 *
 *   cc -O2 -o probe bench/gateway/latency_probe.c
 *   ./probe PORT FILE OPERATION SECONDS
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_REQUESTS 100000
#define MAX_SAMPLES 2000000

/* Microseconds of the monotonic clock. */
static double
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* Orders doubles, for qsort. */
static int
compare(const void *a, const void *b)
{
	double		x = *(const double *) a,
				y = *(const double *) b;

	return (x > y) - (x < y);
}

/* Reads one response (headers, then Content-Length bytes); 0 on a 200. */
static int
read_response(int fd, char *buf, size_t size)
{
	size_t		have = 0;
	char	   *end = NULL;
	long		length = 0;
	int			ok;

	while (end == NULL)
	{
		ssize_t		n = recv(fd, buf + have, size - 1 - have, 0);

		if (n <= 0)
			return -1;
		have += n;
		buf[have] = '\0';
		end = strstr(buf, "\r\n\r\n");
	}
	for (char *line = strstr(buf, "\r\n"); line && line < end; line = strstr(line + 2, "\r\n"))
		if (strncasecmp(line + 2, "Content-Length:", 15) == 0)
			length = strtol(line + 17, NULL, 10);
	ok = strncmp(buf, "HTTP/1.1 200", 12) == 0;
	for (size_t body = have - (end + 4 - buf); body < (size_t) length;)
	{
		ssize_t		n = recv(fd, buf, size - 1, 0);

		if (n <= 0)
			return -1;
		body += n;
	}
	return ok ? 0 : -1;
}

int
main(int argc, char **argv)
{
	static char *requests[MAX_REQUESTS];
	static double samples[MAX_SAMPLES];
	static char line[65536], response[1 << 20];
	struct sockaddr_in addr = {.sin_family = AF_INET};
	int			nrequests = 0, nsamples = 0, one = 1, fd;
	FILE	   *file;
	double		until;

	if (argc != 5)
	{
		fprintf(stderr, "usage: %s PORT FILE OPERATION SECONDS\n", argv[0]);
		return 2;
	}
	if ((file = fopen(argv[2], "r")) == NULL)
	{
		perror(argv[2]);
		return 2;
	}
	while (nrequests < MAX_REQUESTS && fgets(line, sizeof(line), file))
	{
		char	   *date = strtok(line, "\t"), *auth = strtok(NULL, "\t"), *body = strtok(NULL, "\n");
		size_t		size;

		if (date == NULL || auth == NULL || body == NULL)
			continue;
		size = strlen(body) + strlen(auth) + 512;
		requests[nrequests] = malloc(size);
		snprintf(requests[nrequests++], size,
				 "POST / HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nContent-Type: application/x-amz-json-1.0\r\n"
				 "X-Amz-Target: DynamoDB_20120810.%s\r\nX-Amz-Date: %s\r\nAuthorization: %s\r\n"
				 "Content-Length: %zu\r\n\r\n%s", argv[1], argv[3], date, auth, strlen(body), body);
	}
	fclose(file);
	addr.sin_port = htons((unsigned short) atoi(argv[1]));
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (nrequests == 0 || fd < 0 || connect(fd, (struct sockaddr *) &addr, sizeof(addr)) != 0)
	{
		fprintf(stderr, "probe: no requests, or no connection\n");
		return 1;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	until = now_us() + atof(argv[4]) * 1e6;
	while (nsamples < MAX_SAMPLES && now_us() < until)
	{
		const char *request = requests[nsamples % nrequests];
		double		start = now_us();

		if (send(fd, request, strlen(request), 0) != (ssize_t) strlen(request) ||
			read_response(fd, response, sizeof(response)) != 0)
		{
			fprintf(stderr, "probe: request %d failed: %.200s\n", nsamples, response);
			return 1;
		}
		samples[nsamples++] = now_us() - start;
	}
	close(fd);
	qsort(samples, nsamples, sizeof(double), compare);
	printf("probe requests %d p50 %.0f p99 %.0f max %.0f us\n", nsamples, samples[nsamples / 2],
		   samples[(int) (nsamples * 0.99)], samples[nsamples - 1]);
	return 0;
}
