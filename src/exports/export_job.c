/*
 * export_job.c — ddb.write_export_files: the worker of an
 * ExportTableToPointInTime job (sql/exports.sql) streams the rows the job
 * chose (a full export's items at a moment, or an incremental export's
 * changes) to `ddb-transfer write-export`, which writes the export's files
 * under the bucket's directory in DynamoDB's format.
 */
#include "postgres.h"

#include "executor/spi.h"
#include "miscadmin.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "../api/api.h"
#include "exports.h"

PG_FUNCTION_INFO_V1(ddb_write_export_files);

/* Rows fetched from the cursor at once, and the bytes sent to ddb-transfer at once. */
#define FETCH_ROWS 1000
#define SEND_BYTES (256 * 1024)

/* What an export has written. */
typedef struct ExportCounts
{
	int64		items;
	int64		billed_bytes;
} ExportCounts;

/* The export's directory: <bucket>/<prefix>/AWSDynamoDB/<export id>. */
static char *
export_dir(Jsonb *target)
{
	char	   *bucket_dir = s3_bucket_dir(api_required_string(target, "S3Bucket", "s3Bucket"));
	char	   *prefix = api_string(target, "S3Prefix");
	char	   *id = api_required_string(target, "ExportId", "exportId");
	size_t		len;

	if (prefix == NULL || prefix[0] == '\0')
		return psprintf("%s/AWSDynamoDB/%s", bucket_dir, id);
	s3_check_prefix(prefix, "s3Prefix");
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

/* The arguments of write-export for an export (argv[0] left for the program). */
static const char **
export_arguments(Jsonb *target)
{
	const char **argv = palloc0(32 * sizeof(char *));
	int			n = 1;

	argv[n++] = "write-export";
	argv[n++] = "--quiet";
	argv[n++] = "--out";
	argv[n++] = export_dir(target);
	add_option(argv, &n, "--export-id", target, "ExportId");
	add_option(argv, &n, "--table-arn", target, "TableArn");
	add_option(argv, &n, "--table-id", target, "TableId");
	add_option(argv, &n, "--s3-bucket", target, "S3Bucket");
	add_option(argv, &n, "--s3-prefix", target, "S3Prefix");
	add_option(argv, &n, "--s3-sse-algorithm", target, "S3SseAlgorithm");
	add_option(argv, &n, "--s3-sse-kms-key-id", target, "S3SseKmsKeyId");
	if (api_string(target, "ExportFromTime"))
	{
		argv[n++] = "--incremental";
		argv[n++] = api_required_string(target, "ExportFromTime", "exportFromTime");
		argv[n++] = api_required_string(target, "ExportToTime", "exportToTime");
		argv[n++] = api_required_string(target, "ExportViewType", "exportViewType");
	}
	else
		add_option(argv, &n, "--export-time", target, "ExportTime");
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

/* Raises the export's failure: ddb-transfer's last line says why. */
static pg_attribute_noreturn() void
raise_failure(const char *last)
{
	ereport(ERROR,
			(errcode(ERRCODE_EXTERNAL_ROUTINE_EXCEPTION),
			 errmsg("UNKNOWN: the export's files could not be written: %s",
					last ? s3_client_message(last) : "ddb-transfer stopped")));
}

/* Raises the failure of a ddb-transfer that stopped reading its rows. */
static pg_attribute_noreturn() void
report_failure(TransferProcess *process)
{
	char	   *last = NULL;

	(void) transfer_finish(process, &last);
	raise_failure(last);
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
 * ddb.write_export_files(job_id, rows, target): writes the rows of the open
 * cursor rows (item_size integer, line jsonb: an item in DynamoDB JSON, or
 * an incremental export's change) as the export target describes it
 * (S3Bucket, S3Prefix, ExportId, TableArn, TableId, S3SseAlgorithm,
 * S3SseKmsKeyId, ExportTime, or ExportFromTime, ExportToTime and
 * ExportViewType; times in ISO 8601); returns {"ItemCount": n,
 * "BilledSizeBytes": n}.  Only the worker of job job_id may.  A failure
 * raises "<FailureCode>: <message>".
 */
Datum
ddb_write_export_files(PG_FUNCTION_ARGS)
{
	int32		job_id = PG_GETARG_INT32(0);
	char	   *cursor = text_to_cstring(PG_GETARG_TEXT_PP(1));
	Jsonb	   *target = PG_GETARG_JSONB_P(2);
	const char **argv;
	TransferProcess process;
	ExportCounts counts = {0, 0};
	Portal		portal;
	char	   *last = NULL;

	transfer_check_job_worker(job_id, "ddb.write_export_files");
	argv = export_arguments(target);
	SPI_connect();
	portal = SPI_cursor_find(cursor);
	if (portal == NULL)
		elog(ERROR, "ddb_model: no cursor \"%s\"", cursor);
	transfer_start(&process, argv, true);
	PG_TRY();
	{
		stream_rows(&process, portal, &counts);
		if (!transfer_finish(&process, &last))
			raise_failure(last);
	}
	PG_CATCH();
	{
		transfer_kill(&process);
		PG_RE_THROW();
	}
	PG_END_TRY();
	SPI_finish();
	PG_RETURN_DATUM(DirectFunctionCall1(jsonb_in, CStringGetDatum(psprintf(
		"{\"ItemCount\": " INT64_FORMAT ", \"BilledSizeBytes\": " INT64_FORMAT "}", counts.items, counts.billed_bytes))));
}
