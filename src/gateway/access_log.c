/*
 * access_log.c — the access log (access_log.h).  A request's line is
 * formatted in its own thread and appended to a queue; a writer thread
 * writes the queue out (every 100 ms, or at once past 64 kB) with one
 * write(2) for many lines, on a descriptor opened O_APPEND, so that a
 * request costs a copy, not a system call, and lines never interleave.
 * When the writer falls a megabyte behind, requests wait for it: no line is
 * dropped.  Strings a client chose (the operation, the key id, the path)
 * are escaped as JSON, their bytes outside ASCII as '?': the line stays
 * valid JSON whatever was sent.
 */
#include "access_log.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define LINE_MAX_BYTES 4096
#define QUEUE_BYTES (1024 * 1024)	/* past this, requests wait for the writer */
#define WRITE_AT_BYTES (64 * 1024)	/* past this, the writer is woken at once */
#define WRITE_EVERY_MS 100

static int	log_fd = -1;
static char *log_path;			/* NULL for stderr */

/* The queue of lines not yet written, under queue_lock. */
static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t queue_filled = PTHREAD_COND_INITIALIZER;	/* the writer waits on it */
static pthread_cond_t queue_drained = PTHREAD_COND_INITIALIZER;	/* requests wait on it when full */
static char *queue;
static char *spare;				/* the writer's: the buffer it writes from */
static size_t queued;
static int	reopened_fd = -1;	/* a descriptor the writer takes before its next write */
static int	closing;
static pthread_t writer;

/* Writes all of buf to fd, across partial writes; errors are dropped (a full disk must not stop requests). */
static void
write_all(int fd, const char *buf, size_t len)
{
	while (len > 0)
	{
		ssize_t		n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		buf += n;
		len -= (size_t) n;
	}
}

/* The writer thread: takes the queue, writes it, until the log is closed and the queue empty. */
static void *
writer_main(void *arg)
{
	(void) arg;
	pthread_mutex_lock(&queue_lock);
	for (;;)
	{
		char	   *full;
		size_t		len;
		int			fd;

		if (queued == 0 && !closing)
		{
			struct timespec until;

			clock_gettime(CLOCK_REALTIME, &until);
			until.tv_nsec += WRITE_EVERY_MS * 1000000L;
			if (until.tv_nsec >= 1000000000L)
			{
				until.tv_sec++;
				until.tv_nsec -= 1000000000L;
			}
			pthread_cond_timedwait(&queue_filled, &queue_lock, &until);
		}
		if (reopened_fd >= 0)
		{
			close(log_fd);
			log_fd = reopened_fd;
			reopened_fd = -1;
		}
		if (queued == 0)
		{
			if (closing)
				break;
			continue;
		}
		/* swap the queue for the spare buffer: requests go on appending while this one is written */
		full = queue;
		len = queued;
		queue = spare;
		queued = 0;
		fd = log_fd;
		pthread_cond_broadcast(&queue_drained);
		pthread_mutex_unlock(&queue_lock);
		write_all(fd, full, len);
		spare = full;
		pthread_mutex_lock(&queue_lock);
	}
	pthread_mutex_unlock(&queue_lock);
	return NULL;
}

/* Opens the log: a file, "-" for stderr, or "off"; 0 on success, else -1 with errno. */
int
access_log_open(const char *target)
{
	if (strcmp(target, "off") == 0)
		return 0;
	if (strcmp(target, "-") == 0)
		log_fd = STDERR_FILENO;
	else
	{
		log_path = strdup(target);
		log_fd = open(target, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
		if (log_fd < 0)
			return -1;
	}
	queue = malloc(QUEUE_BYTES);
	spare = malloc(QUEUE_BYTES);
	if (queue == NULL || spare == NULL || pthread_create(&writer, NULL, writer_main, NULL) != 0)
	{
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

/* Opens the file again, after a rotation; the writer takes the new descriptor before its next write. */
int
access_log_reopen(void)
{
	int			fd;

	if (log_path == NULL)
		return 0;
	fd = open(log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
	if (fd < 0)
		return -1;
	pthread_mutex_lock(&queue_lock);
	if (reopened_fd >= 0)
		close(reopened_fd);
	reopened_fd = fd;
	pthread_cond_signal(&queue_filled);
	pthread_mutex_unlock(&queue_lock);
	return 0;
}

/* Writes out what is queued and stops the writer (at exit). */
void
access_log_close(void)
{
	if (queue == NULL)
		return;
	pthread_mutex_lock(&queue_lock);
	closing = 1;
	pthread_cond_signal(&queue_filled);
	pthread_mutex_unlock(&queue_lock);
	pthread_join(writer, NULL);
}

/* Appends to buf at *len, within LINE_MAX_BYTES (what does not fit is cut). */
static void
put(char *buf, size_t *len, const char *format,...)
{
	va_list		args;
	int			n;

	va_start(args, format);
	n = vsnprintf(buf + *len, LINE_MAX_BYTES - *len, format, args);
	va_end(args);
	if (n > 0)
		*len = *len + n < LINE_MAX_BYTES ? *len + n : LINE_MAX_BYTES - 1;
}

/*
 * Appends text to buf as a JSON string (or null).  A string is cut at
 * LINE_MAX_BYTES - 256, which leaves room for the fixed fields after it.
 */
static void
put_string(char *buf, size_t *len, const char *text)
{
	size_t		n = *len;

	if (text == NULL || n >= LINE_MAX_BYTES - 256)
	{
		put(buf, len, "null");
		return;
	}
	buf[n++] = '"';
	for (const unsigned char *c = (const unsigned char *) text; *c && n < LINE_MAX_BYTES - 256; c++)
	{
		if (*c == '"' || *c == '\\')
		{
			buf[n++] = '\\';
			buf[n++] = *c;
		}
		else if (*c < 0x20)
			n += snprintf(buf + n, 7, "\\u%04x", *c);
		else
			buf[n++] = *c > 0x7E ? '?' : *c;
	}
	buf[n++] = '"';
	buf[n] = '\0';
	*len = n;
}

/* Writes one request's line. */
void
access_log_write(const AccessRecord *r)
{
	char		buf[LINE_MAX_BYTES];
	size_t		n = 0;
	struct timeval now;
	struct tm	tm;

	if (queue == NULL)
		return;
	gettimeofday(&now, NULL);
	gmtime_r(&now.tv_sec, &tm);
	n = strftime(buf, sizeof(buf), "{\"time\":\"%Y-%m-%dT%H:%M:%S", &tm);
	put(buf, &n, ".%03ldZ\",\"request_id\":", (long) now.tv_usec / 1000);
	put_string(buf, &n, r->request_id);
	put(buf, &n, ",\"client\":");
	put_string(buf, &n, r->client);
	put(buf, &n, ",\"key_id\":");
	put_string(buf, &n, r->key_id && r->key_id[0] ? r->key_id : NULL);
	put(buf, &n, ",\"method\":");
	put_string(buf, &n, r->method);
	put(buf, &n, ",\"path\":");
	put_string(buf, &n, r->path);
	put(buf, &n, ",\"operation\":");
	put_string(buf, &n, r->operation);
	put(buf, &n, ",\"table\":");
	put_string(buf, &n, r->tables);
	put(buf, &n, ",\"status\":%u,\"error\":", r->status);
	put_string(buf, &n, r->error_type);
	put(buf, &n, ",\"bytes_in\":%zu,\"bytes_out\":%zu,\"duration_ms\":%.3f}\n",
		r->bytes_in, r->bytes_out, r->seconds * 1000.0);
	pthread_mutex_lock(&queue_lock);
	while (queued + n > QUEUE_BYTES)
		pthread_cond_wait(&queue_drained, &queue_lock);
	memcpy(queue + queued, buf, n);
	queued += n;
	if (queued >= WRITE_AT_BYTES)
		pthread_cond_signal(&queue_filled);
	pthread_mutex_unlock(&queue_lock);
}
