/*
 * transfer.c — ddb-transfer: DynamoDB's export to S3 format in and out of
 * ddb_model tables (docs/transfer.md).
 *
 *   ddb-transfer import [--dsn CONNINFO] --table NAME [--quiet] [--skip-bad-lines] [--batch N] PATH...
 *   ddb-transfer export [--dsn CONNINFO] --table NAME --out DIR [--quiet] [--no-gzip] [--file-items N]
 *
 * The arguments, and the command they run (import.c, export.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "transfer.h"

/* Prints the usage and exits with status. */
static void
usage(int status)
{
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
			"Exit status: 0 done, 1 failed (nothing loaded), 2 bad arguments, 3 loaded with bad lines skipped.\n");
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

/* Runs the command the arguments name. */
int
main(int argc, char **argv)
{
	ImportOptions import = {.batch_lines = 10000};
	ExportOptions export = {.gzip = 1, .file_items = 100000};
	const char *conninfo = "";
	const char *table = NULL;
	int			progress = isatty(STDERR_FILENO);
	int			is_import;

	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0))
		usage(TRANSFER_OK);
	if (argc < 2 || (strcmp(argv[1], "import") != 0 && strcmp(argv[1], "export") != 0))
		usage(TRANSFER_USAGE);
	is_import = strcmp(argv[1], "import") == 0;
	import.paths = calloc(argc, sizeof(char *));
	if (import.paths == NULL)
		return TRANSFER_FAILED;
	for (int i = 2; i < argc; i++)
	{
		const char *arg = argv[i];
		int			has_value = i + 1 < argc;

		if (strcmp(arg, "--help") == 0)
			usage(TRANSFER_OK);
		else if (has_value && strcmp(arg, "--dsn") == 0)
			conninfo = argv[++i];
		else if (has_value && strcmp(arg, "--table") == 0)
			table = argv[++i];
		else if (strcmp(arg, "--quiet") == 0)
			progress = 0;
		else if (is_import && strcmp(arg, "--skip-bad-lines") == 0)
			import.skip_bad_lines = 1;
		else if (is_import && has_value && strcmp(arg, "--batch") == 0)
			import.batch_lines = (int) positive(argv[++i]);
		else if (!is_import && has_value && strcmp(arg, "--out") == 0)
			export.out_dir = argv[++i];
		else if (!is_import && strcmp(arg, "--no-gzip") == 0)
			export.gzip = 0;
		else if (!is_import && has_value && strcmp(arg, "--file-items") == 0)
			export.file_items = positive(argv[++i]);
		else if (is_import && arg[0] != '-')
			import.paths[import.npaths++] = argv[i];
		else
			usage(TRANSFER_USAGE);
	}
	if (table == NULL || (is_import ? import.npaths == 0 : export.out_dir == NULL))
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
