/*
 * export_job.c — the step of an ExportTableToPointInTime job (sql/exports.sql):
 * its worker, as the role that asked, opens the rows of the export
 * (ddb.open_export_rows: a full export's items at a moment, or an
 * incremental export's changes) and streams them to `ddb-transfer
 * write-export`, which writes the export's files under the bucket's
 * directory in DynamoDB's format.  Where the files go is the job's spec's
 * (read from ddb.jobs by the worker), checked again here: no SQL function
 * writes files, so no code the role controls can name another place.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "../ddb_errors.h"
#include "../jobs/jobs.h"
#include "../request/request.h"
#include "../table/table_access.h"
#include "exports.h"

/* Rows fetched from the cursor at once, and the bytes sent to ddb-transfer at once. */
#define FETCH_ROWS 1000
#define SEND_BYTES (256 * 1024)
/* The name of the cursor of the rows. */
#define EXPORT_CURSOR "export rows"

/* What an export has written. */
typedef struct ExportCounts
{
	int64		items;
	int64		billed_bytes;
} ExportCounts;

/* True when an export id has the shape ddb.transfer_id makes: 14 digits, a dash, 8 hex digits. */
static bool
valid_export_id(const char *id)
{
	if (strlen(id) != 23 || id[14] != '-')
		return false;
	for (int i = 0; i < 23; i++)
		if (i != 14 && !(isdigit((unsigned char) id[i]) || (i > 14 && id[i] >= 'a' && id[i] <= 'f')))
			return false;
	return true;
}

/* The export's directory: <bucket>/<prefix>/AWSDynamoDB/<export id>, each part checked. */
static char *
export_dir(Jsonb *spec)
{
	char	   *id = api_required_string(spec, "ExportId", "exportId");
	char	   *prefix = api_string(spec, "S3Prefix");
	char	   *bucket_dir;
	size_t		len;

	if (!valid_export_id(id))
		elog(ERROR, "ddb_model: \"%s\" is no export id", id);
	if (prefix)
		s3_check_prefix(prefix, "s3Prefix");
	bucket_dir = s3_bucket_dir(api_required_string(spec, "S3Bucket", "s3Bucket"));
	if (prefix == NULL || prefix[0] == '\0')
		return psprintf("%s/AWSDynamoDB/%s", bucket_dir, id);
	len = strlen(prefix);
	while (len > 0 && prefix[len - 1] == '/')
		len--;
	return psprintf("%s/%.*s/AWSDynamoDB/%s", bucket_dir, (int) len, prefix, id);
}

/* Adds "--option value" to argv at *n when the target has the member. */
static void
add_option(const char **argv, int *n, const char *option, Jsonb *target, const char *member)
{
	char	   *value = api_string(target, member);

	if (value)
	{
		argv[(*n)++] = option;
		argv[(*n)++] = value;
	}
}

/*
 * The arguments of write-export for an export (argv[0] left for the
 * program): spec is the job's, dir its directory, times what
 * ddb.open_export_rows says of its moments, as the manifests write them.
 */
static const char **
export_arguments(Jsonb *spec, char *dir, Jsonb *times)
{
	const char **argv = palloc0(32 * sizeof(char *));
	int			n = 1;

	argv[n++] = "write-export";
	argv[n++] = "--quiet";
	argv[n++] = "--out";
	argv[n++] = dir;
	add_option(argv, &n, "--export-id", spec, "ExportId");
	add_option(argv, &n, "--table-arn", spec, "TableArn");
	add_option(argv, &n, "--table-id", spec, "TableId");
	add_option(argv, &n, "--s3-bucket", spec, "S3Bucket");
	add_option(argv, &n, "--s3-prefix", spec, "S3Prefix");
	add_option(argv, &n, "--s3-sse-algorithm", spec, "S3SseAlgorithm");
	add_option(argv, &n, "--s3-sse-kms-key-id", spec, "S3SseKmsKeyId");
	if (api_string(times, "ExportFromTime"))
	{
		argv[n++] = "--incremental";
		argv[n++] = api_required_string(times, "ExportFromTime", "exportFromTime");
		argv[n++] = api_required_string(times, "ExportToTime", "exportToTime");
		argv[n++] = api_required_string(times, "ExportViewType", "exportViewType");
	}
	else
		add_option(argv, &n, "--export-time", times, "ExportTime");
	return argv;
}

/* Appends a row as COPY's text format writes it: the size, a tab, the JSON with its backslashes doubled. */
static void
append_row(StringInfo out, int32 size, Jsonb *line)
{
	char	   *text = JsonbToCString(NULL, &line->root, VARSIZE(line));
	const char *span = text;
	const char *backslash;

	appendStringInfo(out, "%d\t", size);
	/* jsonb's text has no raw control character (JSON escapes them): only backslashes are doubled */
	while ((backslash = strchr(span, '\\')) != NULL)
	{
		appendBinaryStringInfo(out, span, backslash - span + 1);
		appendStringInfoChar(out, '\\');
		span = backslash + 1;
	}
	appendStringInfoString(out, span);
	appendStringInfoChar(out, '\n');
	pfree(text);
}

/* Raises the export's failure: ddb-transfer's first line says why. */
static pg_attribute_noreturn() void
raise_failure(const char *cause)
{
	ereport(ERROR,
			(errcode(ERRCODE_EXTERNAL_ROUTINE_EXCEPTION),
			 errmsg("UNKNOWN: the export's files could not be written: %s",
					cause ? s3_client_message(cause) : "ddb-transfer stopped")));
}

/* Raises the failure of a ddb-transfer that stopped reading its rows. */
static pg_attribute_noreturn() void
report_failure(TransferProcess *process)
{
	char	   *cause = NULL;

	(void) transfer_finish(process, &cause);
	raise_failure(cause);
}

/* Streams the cursor's rows to ddb-transfer, counting them. */
static void
stream_rows(TransferProcess *process, Portal portal, ExportCounts *counts)
{
	StringInfoData out;

	initStringInfo(&out);
	for (;;)
	{
		SPI_cursor_fetch(portal, true, FETCH_ROWS);
		if (SPI_processed == 0)
			break;
		for (uint64 r = 0; r < SPI_processed; r++)
		{
			bool		size_null;
			bool		line_null;
			Datum		size = SPI_getbinval(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, 1, &size_null);
			Datum		line = SPI_getbinval(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, 2, &line_null);

			if (size_null || line_null)
				elog(ERROR, "ddb_model: an export's row has no size or no line");
			append_row(&out, DatumGetInt32(size), DatumGetJsonbP(line));
			counts->items++;
			counts->billed_bytes += DatumGetInt32(size);
			if (out.len >= SEND_BYTES)
			{
				if (!transfer_write(process, out.data, out.len))
					report_failure(process);
				resetStringInfo(&out);
			}
		}
		SPI_freetuptable(SPI_tuptable);
		CHECK_FOR_INTERRUPTS();
	}
	/* COPY's end-of-data marker: without it, ddb-transfer takes the rows as cut short */
	appendStringInfoString(&out, "\\.\n");
	if (!transfer_write(process, out.data, out.len))
		report_failure(process);
	pfree(out.data);
}

/*
 * Opens the export's rows (the cursor EXPORT_CURSOR) as the job's role;
 * what ddb.open_export_rows says of their moments.
 */
static Jsonb *
open_rows(const Job *job)
{
	Oid			argtypes[2] = {TEXTOID, JSONBOID};
	Datum		args[2] = {CStringGetTextDatum(EXPORT_CURSOR), JsonbPGetDatum(job->spec)};
	bool		isnull;
	Datum		times;

	if (SPI_execute_with_args("SELECT ddb.open_export_rows($1::pg_catalog.refcursor, $2)", 2, argtypes, args, NULL,
							  false, 1) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "ddb_model: could not open the rows of export job %d", job->id);
	times = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	if (isnull)
		elog(ERROR, "ddb_model: export job %d has no times", job->id);
	return DatumGetJsonbPCopy(times);
}

/*
 * The step of an export job (jobs.h): writes the rows of
 * ddb.open_export_rows (item_size integer, line jsonb: an item in DynamoDB
 * JSON, or an incremental export's change) as the job's spec describes the
 * export (S3Bucket, S3Prefix, ExportId, TableArn, TableId, S3SseAlgorithm,
 * S3SseKmsKeyId); returns {"ItemCount": n, "BilledSizeBytes": n, "done":
 * true}.  A failure raises "<FailureCode>: <message>".
 */
static Jsonb *
export_job_step(const Job *job)
{
	MemoryContext caller = CurrentMemoryContext;
	const char **argv;
	TransferProcess process;
	ExportCounts counts = {0, 0};
	Portal		portal;
	char	   *cause = NULL;
	char	   *dir;
	Jsonb	   *progress;

	if (job->spec == NULL || strcmp(job->kind, "export") != 0)
		elog(ERROR, "ddb_model: job %d is no export", job->id);
	/* as ExportTableToPointInTime checks it: the job may have been started otherwise (ddb.start_job) */
	table_access_check_operation(api_required_string(job->spec, "TableName", "tableName"),
								 "ExportTableToPointInTime", "own");
	/* and its directory is its role's (src/exports/s3_claims.c), as the request claimed it */
	if (!s3_claim_prefix(api_required_string(job->spec, "S3Bucket", "s3Bucket"),
						 api_string(job->spec, "S3Prefix") ? api_string(job->spec, "S3Prefix") : ""))
		ereport(ERROR,
				(errcode(ERRCODE_DDB_ACCESS_DENIED),
				 errmsg("S3AccessDenied: Access denied to s3://%s/%s: another role's exports are there (docs/transfer.md)",
						api_required_string(job->spec, "S3Bucket", "s3Bucket"),
						api_string(job->spec, "S3Prefix") ? api_string(job->spec, "S3Prefix") : "")));
	SPI_connect();
	/* the paths are checked before the rows are read */
	dir = export_dir(job->spec);
	argv = export_arguments(job->spec, dir, open_rows(job));
	portal = SPI_cursor_find(EXPORT_CURSOR);
	if (portal == NULL)
		elog(ERROR, "ddb_model: no cursor \"%s\"", EXPORT_CURSOR);
	transfer_start(&process, argv, true);
	PG_TRY();
	{
		stream_rows(&process, portal, &counts);
		if (!transfer_finish(&process, &cause))
			raise_failure(cause);
	}
	PG_CATCH();
	{
		transfer_kill(&process);
		PG_RE_THROW();
	}
	PG_END_TRY();
	SPI_finish();
	MemoryContextSwitchTo(caller);
	progress = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(psprintf(
		"{\"ItemCount\": " INT64_FORMAT ", \"BilledSizeBytes\": " INT64_FORMAT ", \"done\": true}",
		counts.items, counts.billed_bytes))));
	return progress;
}

/* Makes export_job_step the step of export jobs; see exports.h. */
void
export_define_job(void)
{
	job_define_step("export", export_job_step);
}
