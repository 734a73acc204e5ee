/*
 * export_writer.h — the files of DynamoDB's export to S3 (the content of
 * s3://bucket/prefix/AWSDynamoDB/<ExportId>/), written from rows of items:
 * what `ddb-transfer export` writes from a table, and `ddb-transfer
 * write-export` from its standard input (the server's exports,
 * docs/transfer.md).  The one writer of the format.
 */
#ifndef DDB_TRANSFER_EXPORT_WRITER_H
#define DDB_TRANSFER_EXPORT_WRITER_H

#include <stddef.h>

/* What an export is, as its manifest-summary.json tells it. */
typedef struct ExportTarget
{
	const char *out_dir;		/* the export's directory (its parents are made when missing) */
	int			gzip;
	long		file_items;		/* items per data file */
	int			incremental;	/* rows are whole lines of an incremental export, not items */
	const char *export_id;		/* DynamoDB's shape: export_writer_new_id */
	const char *table_arn;
	const char *table_id;
	/* NULL when not given: null in the manifest */
	const char *s3_bucket;
	const char *s3_prefix;
	const char *s3_sse_algorithm;
	const char *s3_sse_kms_key_id;
	const char *export_time;	/* a full export's point in time, ISO 8601; NULL: when the export began */
	const char *from_time;		/* an incremental export's period, ISO 8601, and its view type */
	const char *to_time;
	const char *view;
} ExportTarget;

typedef struct ExportWriter ExportWriter;

/* A new export id: epoch milliseconds, a dash, 8 random hex digits (32 bytes is room enough). */
extern void export_writer_new_id(char *id, size_t len);

/* Makes the export's directory and data/ and writes _started; NULL (the reason on stderr) when it cannot. */
extern ExportWriter *export_writer_open(const ExportTarget *target);

/*
 * Writes one row as COPY's text format writes it: the item's size, a tab,
 * and the item in DynamoDB JSON (or, incremental, the whole line's object);
 * 0, or -1 with the reason on stderr.
 */
extern int	export_writer_row(ExportWriter *writer, const char *row, size_t len);

/* The items written so far, and the bytes of their lines before gzip. */
extern long export_writer_items(const ExportWriter *writer);
extern long long export_writer_bytes(const ExportWriter *writer);

/*
 * Finishes the export: the last data file, manifest-files.json,
 * manifest-summary.json and their checksums (the summary last: an export
 * without it is incomplete); frees the writer.  The number of data files,
 * or -1 with the reason on stderr.
 */
extern int	export_writer_finish(ExportWriter *writer);

/* Frees a writer that failed; what it wrote stays, without a manifest-summary.json. */
extern void export_writer_discard(ExportWriter *writer);

#endif
