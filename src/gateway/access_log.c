/*
 * access_log.c — the access log (access_log.h).  A line is built in a
 * buffer and written with one write(2) on a descriptor opened O_APPEND, so
 * that the lines of concurrent requests never interleave.  Strings a client
 * chose (the operation, the key id, the path) are escaped as JSON, their
 * bytes outside ASCII as '?': the line stays valid JSON whatever was sent.
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

static int	log_fd = -1;
static char *log_path;			/* NULL for stderr */
/* writers hold it shared, so that a reopen never closes the descriptor under a write */
static pthread_rwlock_t fd_lock = PTHREAD_RWLOCK_INITIALIZER;

/* Opens the log: a file, "-" for stderr, or "off"; 0 on success. */
int
access_log_open(const char *target)
{
	if (strcmp(target, "off") == 0)
		return 0;
	if (strcmp(target, "-") == 0)
	{
		log_fd = STDERR_FILENO;
		return 0;
	}
	log_path = strdup(target);
	log_fd = open(target, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
	return log_fd < 0 ? -1 : 0;
}

/* Opens the file again, after a rotation; the old descriptor stays until the new one is open. */
int
access_log_reopen(void)
{
	int			fd;
	int			old;

	if (log_path == NULL)
		return 0;
	fd = open(log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
	if (fd < 0)
		return -1;
	pthread_rwlock_wrlock(&fd_lock);
	old = log_fd;
	log_fd = fd;
	pthread_rwlock_unlock(&fd_lock);
	close(old);
	return 0;
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
	ssize_t		written;

	if (log_fd < 0)
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
	pthread_rwlock_rdlock(&fd_lock);
	written = write(log_fd, buf, n);
	pthread_rwlock_unlock(&fd_lock);
	(void) written;				/* a full disk must not stop requests */
}
