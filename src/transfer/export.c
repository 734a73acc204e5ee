/*
 * export.c — the two commands that write DynamoDB's export to S3 format
 * (export_writer.c):
 *
 *   ddb-transfer export: a table's items, read from the database by one
 *   COPY, so from one snapshot: what a read of the table sees (TTL-expired
 *   items are not);
 *   ddb-transfer write-export: rows the server's exports write on its
 *   standard input (ExportTableToPointInTime, docs/transfer.md), as COPY's
 *   text format writes them, ended by COPY's end-of-data marker \. (rows
 *   that end without it were cut short: no manifest-summary.json).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "db.h"
#include "elapsed.h"
#include "export_writer.h"
#include "progress.h"
#include "transfer.h"

/* Writes one row, drawing the progress line when due; 0 or -1. */
static int
write_row(ExportWriter *writer, const char *row, size_t len)
{
	if (export_writer_row(writer, row, len) != 0)
		return -1;
	if (progress_due())
		progress_draw(export_writer_items(writer), export_writer_bytes(writer));
	return 0;
}

/* Streams the table's visible items into the writer; 0, or -1 with the reason on stderr. */
static int
copy_items(ExportWriter *writer, PGconn *conn, const TableInfo *table)
{
	char	   *sql = malloc(strlen(table->relation) + 200);
	PGresult   *result;
	char	   *row;
	int			len;
	int			status = 0;

	if (sql == NULL)
		return -1;
	sprintf(sql, "COPY (SELECT item_size, ddb.to_dynamodb(item) FROM %s WHERE ddb.ttl_visible(expires_at)) TO STDOUT",
			table->relation);
	result = PQexec(conn, sql);
	free(sql);
	if (PQresultStatus(result) != PGRES_COPY_OUT)
	{
		progress_message("%s", db_message(result));
		PQclear(result);
		return -1;
	}
	PQclear(result);
	while ((len = PQgetCopyData(conn, &row, 0)) > 0)
	{
		/* after a failed write, the rest is read and dropped, so that the connection ends cleanly */
		if (status == 0 && write_row(writer, row, (size_t) len) != 0)
			status = -1;
		PQfreemem(row);
	}
	while ((result = PQgetResult(conn)) != NULL)
	{
		if (PQresultStatus(result) != PGRES_COMMAND_OK && status == 0)
		{
			progress_message("%s", db_message(result));
			status = -1;
		}
		PQclear(result);
	}
	if (len == -2 && status == 0)
	{
		progress_message("%.*s", (int) strcspn(PQerrorMessage(conn), "\n"), PQerrorMessage(conn));
		status = -1;
	}
	return status;
}

/*
 * About how many items the table holds, for the progress line's time left,
 * without reading them: the planner's estimate from each partition's
 * reltuples and relpages (of its last VACUUM or ANALYZE) scaled to its size
 * now; 0 (unknown) when a partition that has pages has neither.
 */
static long
estimate_items(PGconn *conn, const TableInfo *table)
{
	const char *sql =
		"SELECT pg_catalog.sum(n)::bigint FROM ("
		"  SELECT CASE WHEN pg_catalog.pg_relation_size(c.oid) = 0 THEN 0"
		"              WHEN c.reltuples >= 0 AND c.relpages > 0"
		"              THEN c.reltuples / c.relpages * pg_catalog.pg_relation_size(c.oid)"
		"                   / pg_catalog.current_setting('block_size')::float8 END AS n"
		"  FROM pg_catalog.pg_partition_tree($1::pg_catalog.regclass) AS p"
		"  JOIN pg_catalog.pg_class AS c ON c.oid = p.relid WHERE p.isleaf) AS leaves "
		"HAVING pg_catalog.count(n) = pg_catalog.count(*)";
	PGresult   *result = PQexecParams(conn, sql, 1, NULL, (const char *const *) &table->relation, NULL, NULL, 0);
	long		estimate = 0;

	if (PQresultStatus(result) == PGRES_TUPLES_OK && PQntuples(result) == 1 && !PQgetisnull(result, 0, 0))
		estimate = atol(PQgetvalue(result, 0, 0));
	PQclear(result);
	return estimate;
}

/* Finishes an export and prints its summary, or says it is incomplete; an exit status. */
static int
finish(ExportWriter *writer, int ok, const char *what, const char *out_dir, const struct timespec *started)
{
	long		items = export_writer_items(writer);
	long long	bytes = export_writer_bytes(writer);
	int			files;
	double		seconds;

	if (!ok)
	{
		export_writer_discard(writer);
		progress_message("the export in %s is incomplete (it has no manifest-summary.json)", out_dir);
		return TRANSFER_FAILED;
	}
	if ((files = export_writer_finish(writer)) < 0)
	{
		progress_message("the export in %s is incomplete (it has no manifest-summary.json)", out_dir);
		return TRANSFER_FAILED;
	}
	seconds = seconds_since(started);
	progress_finish(items, bytes);
	printf("ddb-transfer: exported %ld items of %s to %s (%d file%s) in %.1f s (%.0f items/s)\n",
		   items, what, out_dir, files, files == 1 ? "" : "s", seconds, seconds > 0 ? items / seconds : 0.0);
	return TRANSFER_OK;
}

/* Writes a table's items as a DynamoDB export; an exit status. */
int
export_run(const ExportOptions *options)
{
	ExportTarget target = options->target;
	TableInfo	table = {0};
	ExportWriter *writer;
	PGconn	   *conn;
	struct timespec started;
	char		export_id[32];
	int			status;

	clock_gettime(CLOCK_MONOTONIC, &started);
	conn = db_connect(options->conninfo);
	if (conn == NULL)
		return TRANSFER_FAILED;
	if (db_find_table(conn, options->table, &table) != 0)
	{
		PQfinish(conn);
		return TRANSFER_FAILED;
	}
	export_writer_new_id(export_id, sizeof(export_id));
	target.export_id = export_id;
	target.table_arn = table.arn;
	target.table_id = table.table_id;
	status = TRANSFER_FAILED;
	if ((writer = export_writer_open(&target)) != NULL)
	{
		progress_start(options->progress, 0, options->progress ? estimate_items(conn, &table) : 0);
		status = finish(writer, copy_items(writer, conn, &table) == 0, options->table, target.out_dir, &started);
	}
	db_free_table(&table);
	PQfinish(conn);
	return status;
}

/* Writes the rows of standard input as a DynamoDB export; an exit status. */
int
write_export_run(const ExportOptions *options)
{
	ExportWriter *writer;
	struct timespec started;
	char	   *row = NULL;
	size_t		cap = 0;
	ssize_t		len;
	int			ok = 1;
	int			ended = 0;

	clock_gettime(CLOCK_MONOTONIC, &started);
	if ((writer = export_writer_open(&options->target)) == NULL)
		return TRANSFER_FAILED;
	progress_start(options->progress, 0, 0);
	while (ok && !ended && (len = getline(&row, &cap, stdin)) > 0)
	{
		/* COPY's end-of-data marker ends the rows */
		if (strcmp(row, "\\.\n") == 0 || strcmp(row, "\\.") == 0)
			ended = 1;
		else
			ok = write_row(writer, row, (size_t) len) == 0;
	}
	if (ok && ferror(stdin))
	{
		progress_message("cannot read standard input");
		ok = 0;
	}
	else if (ok && !ended)
	{
		/* the writer stopped (it was terminated): the export must not look complete */
		progress_message("the rows ended without the end-of-data marker \\.");
		ok = 0;
	}
	free(row);
	return finish(writer, ok, options->target.table_arn, options->target.out_dir, &started);
}
