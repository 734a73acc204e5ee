/*
 * exports.h — ExportTableToPointInTime's and ImportTable's work in the
 * server (docs/transfer.md, sql/exports.sql): S3 kept as directories (a
 * bucket B is <ddb.export_root>/B), and the ddb-transfer process a job's
 * worker runs to write an export's files or read an import's, so that
 * DynamoDB's export format is written and read by one program only.
 */
#ifndef DDB_EXPORTS_H
#define DDB_EXPORTS_H

#include "postgres.h"

#include "lib/stringinfo.h"

/* Defines ddb.export_root and ddb.transfer_program (from _PG_init). */
extern void exports_define_settings(void);

/*
 * Raises ValidationException for a key prefix that cannot name a
 * directory below its bucket's: a part (between slashes) that is . or ..
 * (member: where the request has it).
 */
extern void s3_check_prefix(const char *prefix, const char *member);

/*
 * The directory of a bucket (<ddb.export_root>/<bucket>), checked to
 * exist; raises the job's failure "S3NoSuchBucket: ..." when it does not,
 * and when no root is set.
 */
extern char *s3_bucket_dir(const char *bucket);

/* A message of ddb-transfer's with the root's path written as s3:// (a client reads it; the server's paths are not its business). */
extern char *s3_client_message(const char *message);

/*
 * Claims an export's directory in a bucket (prefix: S3Prefix, trailing
 * slashes dropped) for the current role; false, claiming nothing, when
 * another role's claim overlaps it (s3_claims.c).
 */
extern bool s3_claim_prefix(const char *bucket, const char *prefix);

/* True when no key an import reads (every key beginning with key_prefix) is under another role's claim. */
extern bool s3_source_readable(const char *bucket, const char *key_prefix);

/* The ddb-transfer program: ddb.transfer_program, or where `make install` put it. */
extern const char *transfer_program(void);

/* Makes the C code of export_job.c and import_job.c the steps of export and import jobs (from _PG_init). */
extern void export_define_job(void);
extern void import_define_job(void);

/* A running ddb-transfer. */
typedef struct TransferProcess
{
	pid_t		pid;
	int			to_child;		/* its standard input, or -1 */
	int			from_child;		/* its standard output and error */
	StringInfoData pending;		/* read from it and not yet taken */
	bool		eof;
} TransferProcess;

/*
 * Starts ddb-transfer with argv (argv[0] is left for the program; NULL
 * ends it), its standard output and error on a pipe, its standard input on
 * another when with_input.
 */
extern void transfer_start(TransferProcess *process, const char **argv, bool with_input);

/* Writes len bytes to its standard input; false when it is gone (it exited: its output says why). */
extern bool transfer_write(TransferProcess *process, const char *data, size_t len);

/* The next line of its output, without the newline (palloc'd), or NULL at its end. */
extern char *transfer_read_line(TransferProcess *process);

/*
 * Closes its input, reads the rest of its output (the first line of it
 * into *first_line when not NULL: what went wrong first, the cause of a
 * failure, before what follows from it), and waits for it to exit: true
 * when it exited 0.
 */
extern bool transfer_finish(TransferProcess *process, char **first_line);

/* Ends it, if it runs (after an error). */
extern void transfer_kill(TransferProcess *process);

#endif							/* DDB_EXPORTS_H */
