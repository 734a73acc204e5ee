/*
 * transfer.c — ddb-transfer: DynamoDB's export to S3 format in and out of
 * ddb_model tables (docs/transfer.md).
 *
 *   ddb-transfer import [--dsn CONNINFO] --table NAME [--quiet] [--skip-bad-lines] [--batch N] PATH...
 *   ddb-transfer export [--dsn CONNINFO] --table NAME --out DIR [--quiet] [--no-gzip] [--file-items N]
 *   ddb-transfer --help | --version
 *
 * and the two commands the server runs for ExportTableToPointInTime and
 * ImportTable (src/exports/transfer_process.c), which touch files only:
 *
 *   ddb-transfer write-export --out DIR --export-id ID --table-arn ARN --table-id ID [export options]
 *   ddb-transfer read-items --bucket-dir DIR [--key-prefix PREFIX] [--max-files N]
 *
 * The arguments, and the command they run (import.c, export.c, read_items.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "transfer.h"

/* Prints the usage and exits with status (0: what the program is first, on stdout). */
static void
usage(int status)
{
	if (status == TRANSFER_OK)
		printf("ddb-transfer moves items between ddb_model tables and DynamoDB's export format (DynamoDB JSON lines).\n\n");
	fprintf(status ? stderr : stdout,
			"usage: ddb-transfer import [--dsn CONNINFO] --table NAME [--quiet] [--skip-bad-lines] [--batch N] PATH...\n"
			"       ddb-transfer export [--dsn CONNINFO] --table NAME --out DIR [--quiet] [--no-gzip] [--file-items N]\n"
			"\n"
			"  --dsn CONNINFO    a libpq connection string; without it, PGHOST, PGPORT, PGDATABASE, PGUSER,\n"
			"                    ... and libpq's defaults apply, as for psql\n"
			"  --quiet           no progress line (shown on standard error when it is a terminal)\n"
			"\n"
			"import loads DynamoDB JSON lines ({\"Item\": {...}}, gzip or plain) into a table in one\n"
			"transaction; a PATH is a .json or .json.gz file, or the directory of a DynamoDB export\n"
			"(manifest-files.json, data/).  At the first bad line it reports file:line and loads nothing.\n"
			"  --skip-bad-lines  load the good lines, report every bad one, exit with status 3 if any\n"
			"  --batch N         items sent to the server at once (default 10000)\n"
			"\n"
			"export writes the items a read of the table sees as a DynamoDB export in DIR (a new\n"
			"directory): data/*.json.gz, manifest-files.json, manifest-summary.json.\n"
			"  --no-gzip         plain .json data files\n"
			"  --file-items N    items per data file (default 100000)\n"
			"\n"
			"The server's ExportTableToPointInTime and ImportTable run two more (docs/transfer.md):\n"
			"       ddb-transfer write-export --out DIR --export-id ID --table-arn ARN --table-id ID\n"
			"                    [--s3-bucket B] [--s3-prefix P] [--s3-sse-algorithm A] [--s3-sse-kms-key-id K]\n"
			"                    [--export-time T | --incremental FROM TO VIEW] [--no-gzip] [--file-items N]\n"
			"writes the rows of standard input (the item's size, a tab, its DynamoDB JSON, as COPY writes\n"
			"them, ended by a line \\.) as an export in DIR;\n"
			"       ddb-transfer read-items --bucket-dir DIR [--key-prefix PREFIX] [--max-files N]\n"
			"writes the items of the files under DIR whose paths begin with PREFIX, checked, one per line.\n"
			"\n"
			"Exit status: 0 done, 1 failed (nothing loaded), 2 bad arguments, 3 loaded with bad lines skipped.\n");
	if (status == TRANSFER_OK)
		printf("\n"
			   "  --help            this text\n"
			   "  --version         the version\n"
			   "\n"
			   "Documentation: docs/transfer.md of the source (in /usr/share/doc/ with the Debian packages),\n"
			   "and the manual page ddb-transfer(1).\n");
	exit(status);
}

/* A positive number argument, or the usage. */
static long
positive(const char *text)
{
	char	   *end;
	long		value = strtol(text, &end, 10);

	if (*text == '\0' || *end != '\0' || value <= 0 || value > 100000000)
		usage(TRANSFER_USAGE);
	return value;
}

/* Takes one of export's and write-export's options at argv[*i]; 0 when it is none of them. */
static int
export_option(ExportOptions *export, int server, int argc, char **argv, int *i)
{
	const char *arg = argv[*i];
	const char *value = *i + 1 < argc ? argv[*i + 1] : NULL;
	const struct
	{
		const char *name;
		const char **field;
	}			strings[] = {
		{"--out", &export->target.out_dir},
		{"--export-id", &export->target.export_id},
		{"--table-arn", &export->target.table_arn},
		{"--table-id", &export->target.table_id},
		{"--s3-bucket", &export->target.s3_bucket},
		{"--s3-prefix", &export->target.s3_prefix},
		{"--s3-sse-algorithm", &export->target.s3_sse_algorithm},
		{"--s3-sse-kms-key-id", &export->target.s3_sse_kms_key_id},
		{"--export-time", &export->target.export_time},
	};

	if (strcmp(arg, "--no-gzip") == 0)
		export->target.gzip = 0;
	else if (value && strcmp(arg, "--file-items") == 0)
		export->target.file_items = positive(argv[++*i]);
	else if (server && *i + 3 < argc && strcmp(arg, "--incremental") == 0)
	{
		export->target.incremental = 1;
		export->target.from_time = argv[++*i];
		export->target.to_time = argv[++*i];
		export->target.view = argv[++*i];
	}
	else
	{
		/* export takes --out alone of these; the others are the server's */
		for (size_t k = 0; k < sizeof(strings) / sizeof(strings[0]); k++)
			if (value && strcmp(arg, strings[k].name) == 0 && (server || k == 0))
			{
				*strings[k].field = argv[++*i];
				return 1;
			}
		return 0;
	}
	return 1;
}

/* Runs the command the arguments name. */
int
main(int argc, char **argv)
{
	ImportOptions import = {.batch_lines = 10000};
	ExportOptions export = {.target = {.gzip = 1, .file_items = 100000}};
	ReadItemsOptions read = {.key_prefix = "", .max_files = 50000};
	const char *conninfo = "";
	const char *table = NULL;
	int			progress = isatty(STDERR_FILENO);
	const char *command = argc >= 2 ? argv[1] : "";
	int			is_import = strcmp(command, "import") == 0;
	int			is_export = strcmp(command, "export") == 0;
	int			is_write = strcmp(command, "write-export") == 0;
	int			is_read = strcmp(command, "read-items") == 0;

	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0))
		usage(TRANSFER_OK);
	if (argc >= 2 && strcmp(argv[1], "--version") == 0)
	{
		printf("ddb-transfer %s\n", DDB_MODEL_VERSION);
		return TRANSFER_OK;
	}
	if (!is_import && !is_export && !is_write && !is_read)
		usage(TRANSFER_USAGE);
	import.paths = calloc(argc, sizeof(char *));
	if (import.paths == NULL)
		return TRANSFER_FAILED;
	for (int i = 2; i < argc; i++)
	{
		const char *arg = argv[i];
		int			has_value = i + 1 < argc;

		if (strcmp(arg, "--help") == 0)
			usage(TRANSFER_OK);
		else if (is_read && has_value && strcmp(arg, "--bucket-dir") == 0)
			read.bucket_dir = argv[++i];
		else if (is_read && has_value && strcmp(arg, "--key-prefix") == 0)
			read.key_prefix = argv[++i];
		else if (is_read && has_value && strcmp(arg, "--max-files") == 0)
			read.max_files = (int) positive(argv[++i]);
		else if (is_read)
			usage(TRANSFER_USAGE);
		else if (strcmp(arg, "--quiet") == 0)
			progress = 0;
		else if ((is_export || is_write) && export_option(&export, is_write, argc, argv, &i))
			continue;
		else if (is_write)
			usage(TRANSFER_USAGE);
		else if (has_value && strcmp(arg, "--dsn") == 0)
			conninfo = argv[++i];
		else if (has_value && strcmp(arg, "--table") == 0)
			table = argv[++i];
		else if (is_import && strcmp(arg, "--skip-bad-lines") == 0)
			import.skip_bad_lines = 1;
		else if (is_import && has_value && strcmp(arg, "--batch") == 0)
			import.batch_lines = (int) positive(argv[++i]);
		else if (is_import && arg[0] != '-')
			import.paths[import.npaths++] = argv[i];
		else
			usage(TRANSFER_USAGE);
	}
	if (is_read)
		return read.bucket_dir ? read_items_run(&read) : (usage(TRANSFER_USAGE), TRANSFER_USAGE);
	if (is_write)
	{
		if (!export.target.out_dir || !export.target.export_id || !export.target.table_arn || !export.target.table_id)
			usage(TRANSFER_USAGE);
		export.progress = progress;
		return write_export_run(&export);
	}
	if (table == NULL || (is_import ? import.npaths == 0 : export.target.out_dir == NULL))
		usage(TRANSFER_USAGE);
	if (is_import)
	{
		import.conninfo = conninfo;
		import.table = table;
		import.progress = progress;
		return import_run(&import);
	}
	export.conninfo = conninfo;
	export.table = table;
	export.progress = progress;
	return export_run(&export);
}
