/*
 * import_job.c — the step of an ImportTable job (sql/imports.sql): its
 * worker, as the role that asked, writes the items `ddb-transfer
 * read-items` reads from the files under the import's bucket and key
 * prefix (the job's spec's, read from ddb.jobs by the worker; no SQL
 * function reads them) into the new table (CREATING: this backend is its
 * restore, table_def_set_restoring), then makes the table ACTIVE.  As
 * DynamoDB's import does, a bad line or an item the table refuses is
 * counted and logged, and the import goes on.  The items are written in
 * batches, each in a subtransaction; a batch that fails is written again
 * item by item, each in its own, to find the items that fail.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/jsonb.h"

#include "../ddb_errors.h"
#include "../jobs/jobs.h"
#include "../request/request.h"
#include "../request/subtransaction.h"
#include "../table/table_access.h"
#include "../table/table_def.h"
#include "../transfer/import_sql.h"
#include "exports.h"

/* A batch is written when it holds this many items or this many bytes. */
#define BATCH_ITEMS 10000
#define BATCH_BYTES (8 * 1024 * 1024)
/* The errors the import's log keeps (DynamoDB's goes to CloudWatch). */
#define LOGGED_ERRORS 100
/* DynamoDB's limit of S3 objects per import job (its best practices for imports: "a maximum of 50,000 S3 objects"). */
#define MAX_FILES "50000"

#define BATCH_SQL \
	"SELECT pg_catalog.count(*) FROM (SELECT ddb.put_item($1, ddb.from_dynamodb(line::jsonb)) " \
	"FROM pg_catalog.string_to_table($2, E'\\n') AS line) AS written"

/* An item of the batch: where it came from. */
typedef struct BatchItem
{
	int			file;			/* index into Import.keys */
	long		index;
	int			offset;			/* its text in Import.batch */
	int			len;
} BatchItem;

/* The state of one import. */
typedef struct Import
{
	Datum		table;			/* text: the table's name */
	const char *bucket;
	const char *import_arn;
	SPIPlanPtr	batch_plan;
	SPIPlanPtr	item_plan;
	List	   *keys;			/* the files' keys, in order */
	StringInfoData batch;		/* the batch's items, one per line */
	BatchItem  *items;
	int			nitems;
	int64		processed;
	int64		imported;
	int64		errors;
	int64		bytes;
	StringInfoData log;			/* the logged errors, JSON objects separated by commas */
	int			logged;
	char	   *failure;		/* read-items' first message that is no record */
} Import;

/* Logs an error of an item (file's key, index) as DynamoDB's import logs it, and counts it. */
static void
log_error(Import *import, int file, long index, const char *message)
{
	import->errors++;
	if (import->logged++ >= LOGGED_ERRORS)
		return;
	if (import->log.len > 0)
		appendStringInfoString(&import->log, ", ");
	appendStringInfoString(&import->log, "{\"itemS3Pointer\": {\"bucket\": ");
	escape_json(&import->log, import->bucket);
	appendStringInfoString(&import->log, ", \"key\": ");
	escape_json(&import->log, file >= 0 ? (const char *) list_nth(import->keys, file) : "");
	appendStringInfo(&import->log, ", \"itemIndex\": %ld}, \"importArn\": ", index);
	escape_json(&import->log, import->import_arn);
	appendStringInfoString(&import->log, ", \"errorMessages\": [");
	escape_json(&import->log, message);
	appendStringInfoString(&import->log, "]}");
}

/* What one write in a subtransaction is handed. */
typedef struct Write
{
	Import	   *import;
	SPIPlanPtr	plan;
	Datum		text;			/* the batch's text, or an item's */
	int64		written;
} Write;

/* Runs a write's plan (in a subtransaction of api_subtransaction_run). */
static void
run_write(void *arg)
{
	Write	   *write = arg;
	Datum		args[2] = {write->import->table, write->text};
	bool		isnull;

	SPI_connect();
	if (SPI_execute_plan(write->plan, args, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "ddb_model: an import's write failed");
	write->written = write->plan == write->import->batch_plan
		? DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)) : 1;
	SPI_finish();
}

/*
 * True when an error is an item's, which the import counts and goes on:
 * DynamoDB's refusal of the item (ValidationException, SerializationException)
 * or its data's (a data exception, a size or nesting limit).  Any other
 * (a cancel, no memory or disk, a deadlock, a lock timeout, a trigger's
 * refusal) is the import's, and ends it.
 */
static bool
item_error(const ErrorData *error)
{
	int			code = error->sqlerrcode;

	return code == ERRCODE_DDB_VALIDATION || code == ERRCODE_DDB_SERIALIZATION
		|| ERRCODE_TO_CATEGORY(code) == ERRCODE_DATA_EXCEPTION
		|| code == ERRCODE_PROGRAM_LIMIT_EXCEEDED || code == ERRCODE_STATEMENT_TOO_COMPLEX;
}

/* Writes len bytes of the batch from offset with write's plan in a subtransaction: NULL, or an item's error (any other is raised). */
static ErrorData *
write_part(Write *write, int offset, int len)
{
	ErrorData  *error;

	write->text = PointerGetDatum(cstring_to_text_with_len(write->import->batch.data + offset, len));
	error = api_subtransaction_run(run_write, write);
	pfree(DatumGetPointer(write->text));
	if (error != NULL && !item_error(error))
		ReThrowError(error);
	return error;
}

/* Writes the batch: at once, or, when that fails with an item's error, item by item, logging those that fail. */
static void
write_batch(Import *import)
{
	Write		write = {import, import->batch_plan, 0, 0};
	ErrorData  *error;

	if (import->nitems == 0)
		return;
	error = write_part(&write, 0, import->batch.len);
	if (error == NULL)
		import->imported += write.written;
	else
	{
		FreeErrorData(error);
		write.plan = import->item_plan;
		for (int i = 0; i < import->nitems; i++)
		{
			BatchItem  *item = &import->items[i];

			error = write_part(&write, item->offset, item->len);
			if (error == NULL)
				import->imported++;
			else
			{
				log_error(import, item->file, item->index, error->message);
				FreeErrorData(error);
			}
			CHECK_FOR_INTERRUPTS();
		}
	}
	resetStringInfo(&import->batch);
	import->nitems = 0;
}

/* Adds a good line's item ("<index>\t<item>") to the batch, writing the batch when it is full. */
static void
add_item(Import *import, int file, const char *record)
{
	char	   *tab = strchr(record, '\t');
	BatchItem  *item = &import->items[import->nitems++];

	if (tab == NULL)
		elog(ERROR, "ddb_model: a malformed item record from ddb-transfer");
	if (import->batch.len > 0)
		appendStringInfoChar(&import->batch, '\n');
	item->file = file;
	item->index = strtol(record, NULL, 10);
	item->offset = import->batch.len;
	item->len = (int) strlen(tab + 1);
	appendStringInfoString(&import->batch, tab + 1);
	import->processed++;
	if (import->nitems == BATCH_ITEMS || import->batch.len >= BATCH_BYTES)
		write_batch(import);
}

/* Takes one record of read-items' output. */
static void
take_record(Import *import, char *line)
{
	int			file = list_length(import->keys) - 1;

	if (strncmp(line, "F\t", 2) == 0)
		import->keys = lappend(import->keys, pstrdup(line + 2));
	else if (strncmp(line, "I\t", 2) == 0 && file >= 0)
		add_item(import, file, line + 2);
	else if (strncmp(line, "E\t", 2) == 0 && file >= 0)
	{
		char	   *tab = strchr(line + 2, '\t');

		import->processed++;
		log_error(import, file, strtol(line + 2, NULL, 10), tab ? tab + 1 : "a bad line");
	}
	else if (strncmp(line, "S\t", 2) == 0)
	{
		char	   *tab = strchr(line + 2, '\t');

		import->bytes = tab ? strtoll(tab + 1, NULL, 10) : 0;
	}
	else if (line[0] != '\0' && import->failure == NULL)
		import->failure = line;	/* the first: the cause, before what follows from it */
}

/* Prepares and keeps a plan of (table name, text). */
static SPIPlanPtr
keep_plan(const char *sql)
{
	Oid			argtypes[2] = {TEXTOID, TEXTOID};
	SPIPlanPtr	plan;

	SPI_connect();
	plan = SPI_prepare(sql, 2, argtypes);
	if (plan == NULL || SPI_keepplan(plan) != 0)
		elog(ERROR, "ddb_model: could not prepare an import's write");
	SPI_finish();
	return plan;
}

/* Reads read-items' output to its end, writing the items. */
static void
read_records(Import *import, TransferProcess *process)
{
	char	   *line;

	while ((line = transfer_read_line(process)) != NULL)
	{
		take_record(import, line);
		if (line != import->failure)
			pfree(line);
	}
	write_batch(import);
	if (!transfer_finish(process, NULL))
		ereport(ERROR,
				(errcode(ERRCODE_EXTERNAL_ROUTINE_EXCEPTION),
				 errmsg("UNKNOWN: the import's files could not be read: %s",
						import->failure ? s3_client_message(import->failure) : "ddb-transfer failed")));
}

/*
 * Writes the items of the files under source's S3Bucket and S3KeyPrefix
 * into the table; returns ProcessedItemCount, ImportedItemCount,
 * ErrorCount, ProcessedSizeBytes and ErrorLog (the first 100 errors, as
 * DynamoDB logs them to CloudWatch).  A failure raises "<FailureCode>:
 * <message>" (S3NoSuchBucket, ...).
 */
static Import *
write_items(char *table, Jsonb *source, char *import_arn)
{
	Import	   *import = palloc0(sizeof(Import));
	const char *argv[10] = {NULL, "read-items", "--max-files", MAX_FILES, "--bucket-dir"};
	TransferProcess process;
	const char *outer;

	import->table = CStringGetTextDatum(table);
	import->bucket = api_required_string(source, "S3Bucket", "s3BucketSource.s3Bucket");
	import->import_arn = import_arn;
	import->items = palloc(BATCH_ITEMS * sizeof(BatchItem));
	initStringInfo(&import->batch);
	initStringInfo(&import->log);
	argv[7] = api_string(source, "S3KeyPrefix") ? api_string(source, "S3KeyPrefix") : "";
	s3_check_prefix(argv[7], "s3BucketSource.s3KeyPrefix");
	/* as ImportTable checks it: the job may have been started otherwise (src/exports/s3_claims.c) */
	if (!s3_source_readable(import->bucket, argv[7]))
		ereport(ERROR,
				(errcode(ERRCODE_DDB_ACCESS_DENIED),
				 errmsg("S3AccessDenied: Access denied to s3://%s/%s: another role's exports are there (docs/transfer.md)",
						import->bucket, argv[7])));
	argv[5] = s3_bucket_dir(import->bucket);
	argv[6] = "--key-prefix";
	import->batch_plan = keep_plan(BATCH_SQL);
	import->item_plan = keep_plan(IMPORT_ITEM_SQL);
	/* started first: the table is named the restoring one only where PG_FINALLY names the outer one again */
	transfer_start(&process, argv, false);
	outer = table_def_set_restoring(table);
	PG_TRY();
	{
		read_records(import, &process);
	}
	PG_FINALLY();
	{
		transfer_kill(&process);
		table_def_set_restoring(outer);
		SPI_freeplan(import->batch_plan);
		SPI_freeplan(import->item_plan);
	}
	PG_END_TRY();
	return import;
}

/* Makes the import's table ACTIVE (ddb.table_restores written as its owner: the role needs no privilege on it). */
static void
end_restoring(const Job *job, char *table)
{
	SPI_connect();
	job_restore_done(CStringGetTextDatum(table), job->id);
	SPI_finish();
}

/*
 * The step of an import job (jobs.h): the first writes every item and
 * makes the table ACTIVE, in one transaction; when some items failed, a
 * second ends the import FAILED (ItemValidationError), the counts and the
 * items written kept, as DynamoDB's import ends.
 */
static Jsonb *
import_job_step(const Job *job)
{
	JsonbValue	source;
	char	   *table;
	Import	   *import;

	if (job->spec == NULL || strcmp(job->kind, "import") != 0)
		elog(ERROR, "ddb_model: job %d is no import", job->id);
	if (api_int(job->progress, "ErrorCount", 0, PG_INT64_MAX) > 0)
		ereport(ERROR,
				(errcode(ERRCODE_DDB_VALIDATION),
				 errmsg("ItemValidationError: Some of the items failed validation checks and were not imported. "
						"Please check the import's error log for more details (docs/transfer.md).")));
	table = api_required_string(job->spec, "TableName", "tableName");
	/* as ImportTable checks it: the job may have been started otherwise (ddb.start_job) */
	table_access_check_operation(table, "ImportTable", "import");
	if (!api_field(job->spec, "S3BucketSource", &source) || source.type != jbvBinary)
		elog(ERROR, "ddb_model: import job %d has no S3BucketSource", job->id);
	import = write_items(table, JsonbValueToJsonb(&source),
						 api_required_string(job->spec, "ImportArn", "importArn"));
	if (import->errors == 0)
		end_restoring(job, table);
	return DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(psprintf(
		"{\"ProcessedItemCount\": " INT64_FORMAT ", \"ImportedItemCount\": " INT64_FORMAT ", "
		"\"ErrorCount\": " INT64_FORMAT ", \"ProcessedSizeBytes\": " INT64_FORMAT ", \"ErrorLog\": [%s], "
		"\"done\": %s}",
		import->processed, import->imported, import->errors, import->bytes, import->log.data,
		import->errors == 0 ? "true" : "false"))));
}

/* Makes import_job_step the step of import jobs; see exports.h. */
void
import_define_job(void)
{
	job_define_step("import", import_job_step);
}
