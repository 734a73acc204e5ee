/*
 * access_log.h — one JSON line per request (docs/operations.md): when, the
 * request id, the client, the access key, the operation, the tables, the
 * status and error type, the bytes in and out and the duration.
 */
#ifndef DDB_GATEWAY_ACCESS_LOG_H
#define DDB_GATEWAY_ACCESS_LOG_H

#include <stddef.h>

typedef struct AccessRecord
{
	const char *request_id;
	const char *client;			/* the peer's address */
	const char *key_id;			/* "" when unsigned */
	const char *method;
	const char *path;
	const char *operation;		/* NULL when none */
	const char *tables;			/* comma-separated; NULL when unknown */
	unsigned int status;
	const char *error_type;		/* DynamoDB's __type, NULL on success */
	size_t		bytes_in;		/* the body's */
	size_t		bytes_out;
	double		seconds;
} AccessRecord;

/* Opens the log: a file (appended to), "-" for stderr, or "off"; 0 on success, else -1 with errno. */
extern int	access_log_open(const char *target);

/* Opens the file again (after a log rotation: SIGHUP); 0 on success. */
extern int	access_log_reopen(void);

/* Queues one request's line; a writer thread writes the lines out within 100 ms. */
extern void access_log_write(const AccessRecord *record);

/* Writes out what is queued and stops the writer (at exit). */
extern void access_log_close(void);

#endif
