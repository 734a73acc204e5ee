/*
 * transfer.h — ddb-transfer's commands: import and export of DynamoDB's S3
 * export format (docs/transfer.md), and the two the server's exports and
 * imports run (write-export, read-items); the exit statuses they return.
 */
#ifndef DDB_TRANSFER_TRANSFER_H
#define DDB_TRANSFER_TRANSFER_H

#include "export_writer.h"

/* Exit statuses. */
#define TRANSFER_OK 0			/* everything done */
#define TRANSFER_FAILED 1		/* nothing done: a bad line, a bad file, a database error */
#define TRANSFER_USAGE 2		/* bad arguments */
#define TRANSFER_SKIPPED 3		/* import --skip-bad-lines: the good lines loaded, some bad ones skipped */

/* What `ddb-transfer import` was asked. */
typedef struct ImportOptions
{
	const char *conninfo;		/* "" for libpq's defaults (PGHOST, PGDATABASE, ...) */
	const char *table;
	int			progress;		/* show the progress line (stderr is a terminal, no --quiet) */
	int			skip_bad_lines;
	int			batch_lines;	/* items sent to the server at once */
	char	  **paths;
	int			npaths;
} ImportOptions;

/* What `ddb-transfer export` or `ddb-transfer write-export` was asked. */
typedef struct ExportOptions
{
	const char *conninfo;		/* "" for libpq's defaults (PGHOST, PGDATABASE, ...) */
	const char *table;
	int			progress;		/* show the progress line (stderr is a terminal, no --quiet) */
	ExportTarget target;		/* export: the table's ARN and id and a new export id are filled in */
} ExportOptions;

/* What `ddb-transfer read-items` was asked. */
typedef struct ReadItemsOptions
{
	const char *bucket_dir;
	const char *key_prefix;
	int			max_files;
} ReadItemsOptions;

/* Loads the items of DynamoDB JSON files into a table; an exit status. */
extern int	import_run(const ImportOptions *options);

/* Writes a table's items as a DynamoDB export; an exit status. */
extern int	export_run(const ExportOptions *options);

/* Writes the rows of standard input (item_size, a tab, the item's DynamoDB JSON) as a DynamoDB export; an exit status. */
extern int	write_export_run(const ExportOptions *options);

/* Writes the items of the files under a bucket's key prefix on standard output; an exit status. */
extern int	read_items_run(const ReadItemsOptions *options);

#endif
