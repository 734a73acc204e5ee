/*
 * import.c — ddb-transfer import: DynamoDB JSON lines ({"Item": {...}}, as
 * DynamoDB's export to S3 writes them) into a ddb_model table, in one
 * transaction.
 *
 * Each line is parsed with jansson, so that bad JSON and lines of the wrong
 * shape are reported with their number without asking the server.  Good
 * items go to the server in batches (their texts, one per line, as one
 * parameter), through a pipeline of three stages that work at once:
 *
 *   - the client parses the lines of batch n + 2;
 *   - a second connection converts batch n + 1 with ddb.from_dynamodb
 *     (CONVERT_SQL: natural JSON, one item per line); it writes nothing;
 *   - the writing connection writes batch n with ddb.put_item (WRITE_SQL),
 *     PutItem's semantics with GSIs, TTL, sizes and validation, in the one
 *     transaction of the import.
 *
 * The writer's work (parsing jsonb, put_item) bounds the speed; the
 * conversion moved off it is about a fifth of what it would do.  A batch the
 * server refuses says nothing of which line it refused, so only then is the
 * batch written again one item at a time to find it (IMPORT_ITEM_SQL: conversion
 * and write): in a fresh transaction that is rolled back, or with
 * --skip-bad-lines under savepoints that keep the good items.  Errors of the
 * server are item by item (the item, its keys, the table's schema), so the
 * replay finds the same line.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "db.h"
#include "elapsed.h"
#include "import_sql.h"
#include "item_line.h"
#include "line_reader.h"
#include "progress.h"
#include "sources.h"
#include "transfer.h"

/* A batch is sent when it holds batch_lines items or this many bytes. */
#define BATCH_MAX_BYTES (8 * 1024 * 1024)

#define CONVERT_SQL \
	"SELECT pg_catalog.string_agg(ddb.from_dynamodb(line::jsonb)::text, E'\\n' ORDER BY n) " \
	"FROM pg_catalog.string_to_table($1, E'\\n') WITH ORDINALITY AS items(line, n)"
#define WRITE_SQL \
	"SELECT pg_catalog.count(*) FROM (SELECT ddb.put_item($1, line::jsonb) " \
	"FROM pg_catalog.string_to_table($2, E'\\n') AS line) AS written"

/*
 * A line of a batch: an item (its text in Batch.text), or a bad line
 * (its message), kept in line order so that a batch's bad lines are
 * reported in order, the server's refusals among them.
 */
typedef struct Entry
{
	int			file;			/* index into Import.files */
	long		line;
	size_t		offset;			/* the item's text in Batch.text */
	size_t		len;
	char	   *message;		/* why the line is bad, or NULL for an item */
} Entry;

/* Lines for one statement: the items' texts, separated by newlines. */
typedef struct Batch
{
	char	   *text;
	size_t		len;
	size_t		cap;
	Entry	   *entries;
	int			count;
	int			cap_entries;
	int			items;			/* entries that are items */
	PGresult   *natural;		/* the converter's answer: the items as natural JSON, one per line */
	int			convert_failed;	/* the converter refused an item of the batch */
} Batch;

/* The state of one import. */
typedef struct Import
{
	const ImportOptions *options;
	PGconn	   *conn;			/* the writer: the import's transaction */
	PGconn	   *converter;		/* ddb.from_dynamodb in autocommit: writes nothing */
	DataFile   *files;
	int			nfiles;
	Batch		batches[3];
	Batch	   *filling;		/* the batch lines are added to */
	Batch	   *converting;		/* the batch the converter holds, or NULL */
	Batch	   *writing;		/* the batch the writer is writing, or NULL */
	long		loaded;
	long		skipped;
	long long	bytes_read;		/* of the files read to their end */
	int			stopped;		/* a bad line (without --skip-bad-lines) or a fatal error: roll back */
} Import;

/* Stops the import for a reason that is no line's (a lost connection, an unreadable file). */
static void
fatal(Import *import, const char *format,...)
{
	va_list		args;

	va_start(args, format);
	progress_vmessage(format, args);
	va_end(args);
	import->stopped = 1;
}

/* Runs a statement without rows; a failure stops the import. */
static void
command(Import *import, const char *sql)
{
	if (db_command(import->conn, sql) != 0)
		import->stopped = 1;
}

/* A new entry at the end of a batch; NULL when out of memory. */
static Entry *
batch_entry(Batch *batch, int file, long line)
{
	Entry	   *entry;

	if (batch->count == batch->cap_entries)
	{
		int			cap = batch->cap_entries ? batch->cap_entries * 2 : 1024;
		Entry	   *grown = realloc(batch->entries, cap * sizeof(Entry));

		if (grown == NULL)
			return NULL;
		batch->entries = grown;
		batch->cap_entries = cap;
	}
	entry = &batch->entries[batch->count++];
	memset(entry, 0, sizeof(Entry));
	entry->file = file;
	entry->line = line;
	return entry;
}

/* Appends an item's text to a batch; 0, or -1 when out of memory. */
static int
batch_add_item(Batch *batch, int file, long line, const char *text, size_t len)
{
	size_t		need = batch->len + len + 2;	/* a newline before it, a NUL after it */
	Entry	   *entry;

	if (need > batch->cap)
	{
		size_t		cap = batch->cap ? batch->cap : BATCH_MAX_BYTES + 1024;
		char	   *grown;

		while (cap < need)
			cap *= 2;
		if ((grown = realloc(batch->text, cap)) == NULL)
			return -1;
		batch->text = grown;
		batch->cap = cap;
	}
	if ((entry = batch_entry(batch, file, line)) == NULL)
		return -1;
	if (batch->items++ > 0)
		batch->text[batch->len++] = '\n';
	entry->offset = batch->len;
	entry->len = len;
	memcpy(batch->text + batch->len, text, len);
	batch->len += len;
	batch->text[batch->len] = '\0';
	return 0;
}

/* Appends a bad line to a batch; 0, or -1 when out of memory. */
static int
batch_add_bad(Batch *batch, int file, long line, const char *message)
{
	Entry	   *entry = batch_entry(batch, file, line);

	return entry != NULL && (entry->message = strdup(message)) != NULL ? 0 : -1;
}

/* Empties a batch. */
static void
batch_reset(Batch *batch)
{
	for (int i = 0; i < batch->count; i++)
		free(batch->entries[i].message);
	PQclear(batch->natural);
	batch->natural = NULL;
	batch->convert_failed = 0;
	batch->len = 0;
	batch->count = 0;
	batch->items = 0;
}

/* Prints "file:line: message" for an entry. */
static void
report(const Import *import, const Entry *entry, const char *message)
{
	progress_clear();
	fprintf(stderr, "%s:%ld: %s\n", import->files[entry->file].path, entry->line, message);
}

/* Writes one item of a batch alone; NULL on success, else the failed result (the caller clears it). */
static PGresult *
put_one(Import *import, Batch *batch, Entry *entry)
{
	char	   *item = batch->text + entry->offset;
	char		after = item[entry->len];	/* the newline before the next item, or the NUL */
	const char *params[2] = {import->options->table, item};
	PGresult   *result;

	item[entry->len] = '\0';
	result = PQexecPrepared(import->conn, "item", 2, params, NULL, NULL, 0);
	item[entry->len] = after;
	if (PQresultStatus(result) == PGRES_TUPLES_OK)
	{
		PQclear(result);
		return NULL;
	}
	return result;
}

/*
 * Without --skip-bad-lines: a batch failed, and everything is rolled back.
 * Replays its lines in order in a fresh transaction (rolled back in the
 * end) until one is bad, and reports that line.
 */
static void
report_first_bad(Import *import, Batch *batch, const char *batch_message)
{
	command(import, "ROLLBACK");
	command(import, "BEGIN");
	import->stopped = 1;
	for (int i = 0; i < batch->count; i++)
	{
		Entry	   *entry = &batch->entries[i];
		PGresult   *result = entry->message ? NULL : put_one(import, batch, entry);

		if (entry->message != NULL || result != NULL)
		{
			report(import, entry, entry->message ? entry->message : db_message(result));
			PQclear(result);
			return;
		}
	}
	/* no item fails alone (a conflict with another session, a timeout) */
	progress_clear();
	fprintf(stderr, "%s:%ld: %s (in the batch of %d lines from here)\n", import->files[batch->entries[0].file].path,
			batch->entries[0].line, batch_message, batch->count);
}

/*
 * With --skip-bad-lines: a batch failed, and its savepoint is rolled back.
 * Writes its items one by one, each under a savepoint, reporting and
 * skipping those that fail.
 */
static void
skip_bad_items(Import *import, Batch *batch)
{
	command(import, "ROLLBACK TO SAVEPOINT batch");
	for (int i = 0; i < batch->count && !import->stopped; i++)
	{
		Entry	   *entry = &batch->entries[i];
		PGresult   *result;

		if (entry->message != NULL)
		{
			report(import, entry, entry->message);
			import->skipped++;
			continue;
		}
		command(import, "SAVEPOINT item");
		if (import->stopped)
			break;
		result = put_one(import, batch, entry);
		if (result == NULL)
		{
			import->loaded++;
			command(import, "RELEASE SAVEPOINT item");
			continue;
		}
		if (PQstatus(import->conn) != CONNECTION_OK)
			fatal(import, "%s", db_message(result));
		else
		{
			report(import, entry, db_message(result));
			import->skipped++;
			command(import, "ROLLBACK TO SAVEPOINT item");
		}
		PQclear(result);
	}
	if (!import->stopped)
		command(import, "RELEASE SAVEPOINT batch");
}

/* Reports the bad lines of a batch whose items were all written (without --skip-bad-lines, the first only). */
static void
report_client_bad(Import *import, Batch *batch)
{
	for (int i = 0; i < batch->count; i++)
	{
		if (batch->entries[i].message == NULL)
			continue;
		report(import, &batch->entries[i], batch->entries[i].message);
		import->skipped++;
		if (!import->options->skip_bad_lines)
		{
			import->stopped = 1;
			return;
		}
	}
}

/* Settles a batch the server refused: its bad lines found by writing its items one by one. */
static void
settle_refused(Import *import, Batch *batch, const char *message)
{
	if (import->options->skip_bad_lines)
		skip_bad_items(import, batch);
	else
		report_first_bad(import, batch, message);
}

/* Waits for the converter's answer on the batch it holds. */
static void
wait_conversion(Import *import)
{
	Batch	   *batch = import->converting;
	PGresult   *result;

	if (batch == NULL || batch->items == 0)
		return;
	while ((result = PQgetResult(import->converter)) != NULL)
	{
		if (PQresultStatus(result) == PGRES_TUPLES_OK && PQntuples(result) == 1 && batch->natural == NULL)
		{
			batch->natural = result;
			continue;
		}
		if (PQresultStatus(result) != PGRES_TUPLES_OK)
		{
			if (PQstatus(import->converter) != CONNECTION_OK)
				fatal(import, "%s", db_message(result));
			/* which item it refused is found when the batch is written item by item */
			batch->convert_failed = 1;
		}
		PQclear(result);
	}
}

/* Waits for the batch the writer is writing, and settles it: its items counted, its bad lines reported. */
static void
wait_write(Import *import)
{
	Batch	   *batch = import->writing;
	PGresult   *result;
	PGresult   *failed = NULL;

	if (batch == NULL)
		return;
	while ((result = PQgetResult(import->conn)) != NULL)
	{
		if (PQresultStatus(result) == PGRES_TUPLES_OK && PQntuples(result) == 1)
			import->loaded += atol(PQgetvalue(result, 0, 0));
		else if (failed == NULL)
		{
			failed = result;
			continue;
		}
		PQclear(result);
	}
	if (failed != NULL)
	{
		if (PQstatus(import->conn) != CONNECTION_OK)
			fatal(import, "%s", db_message(failed));
		else
			settle_refused(import, batch, db_message(failed));
		PQclear(failed);
	}
	else
	{
		if (import->options->skip_bad_lines)
			command(import, "RELEASE SAVEPOINT batch");
		report_client_bad(import, batch);
	}
	batch_reset(batch);
	import->writing = NULL;
}

/* Hands a converted batch to the idle writer (or settles at once a batch that has nothing to write). */
static void
start_write(Import *import, Batch *batch)
{
	const char *params[2];

	if (batch->items > 0 && import->options->skip_bad_lines)
		command(import, "SAVEPOINT batch");
	if (import->stopped || batch->items == 0 || batch->convert_failed)
	{
		if (!import->stopped && batch->items == 0)
			report_client_bad(import, batch);
		else if (!import->stopped)
			settle_refused(import, batch, "ddb.from_dynamodb refused an item");
		batch_reset(batch);
		return;
	}
	params[0] = import->options->table;
	params[1] = PQgetvalue(batch->natural, 0, 0);
	if (!PQsendQueryPrepared(import->conn, "write", 2, params, NULL, NULL, 0))
	{
		fatal(import, "%s", PQerrorMessage(import->conn));
		batch_reset(batch);
		return;
	}
	import->writing = batch;
}

/*
 * Moves the batches one stage on: the one written is settled, the one
 * converted goes to the writer, the one filled to the converter, and an
 * empty one is filled next.
 */
static void
advance(Import *import)
{
	Batch	   *batch;
	const char *param;

	wait_conversion(import);
	wait_write(import);
	if (import->stopped)
		return;
	if ((batch = import->converting) != NULL)
	{
		import->converting = NULL;
		start_write(import, batch);
		if (import->stopped)
			return;
	}
	batch = import->filling;
	if (batch->count == 0)
		return;
	param = batch->text;
	if (batch->items > 0 && !PQsendQueryPrepared(import->converter, "convert", 1, &param, NULL, NULL, 0))
	{
		fatal(import, "%s", PQerrorMessage(import->converter));
		return;
	}
	import->converting = batch;
	for (int i = 0; i < 3; i++)
	{
		if (&import->batches[i] != import->converting && &import->batches[i] != import->writing)
			import->filling = &import->batches[i];
	}
}

/* Writes and settles every batch there is. */
static void
drain(Import *import)
{
	advance(import);
	advance(import);
	wait_write(import);
}

/*
 * Adds a line to the batch, as an item (a good line's) or as a bad line
 * (message); passes the batch on when it is full.  Without
 * --skip-bad-lines, a bad line stops the reading, and every line before it
 * is written first, so that a bad item among them is the one reported.
 */
static void
take_line(Import *import, int file, long line_number, const ItemLine *item, const char *message)
{
	int			bad = item == NULL;
	int			added;

	if (bad)
		added = batch_add_bad(import->filling, file, line_number, message);
	else
		added = batch_add_item(import->filling, file, line_number, item->text, item->len);
	if (added != 0)
		fatal(import, "out of memory");
	else if (bad && !import->options->skip_bad_lines)
		drain(import);
	/* a batch goes when it has batch_lines lines or BATCH_MAX_BYTES of text */
	else if (import->filling->count >= import->options->batch_lines
			 || import->filling->len >= BATCH_MAX_BYTES)
		advance(import);
}

/* Reads one data file to its end (or until the import stops). */
static void
read_file(Import *import, int file)
{
	char		message[512];
	LineReader *reader = line_reader_open(import->files[file].path, message, sizeof(message));
	ItemLine	item;
	ItemLineKind kind;
	long		lines = 0;		/* lines that are not blank, good or bad */

	if (reader == NULL)
	{
		fatal(import, "%s: %s", import->files[file].path, message);
		return;
	}
	while (!import->stopped && (kind = item_line_next(reader, &item, message, sizeof(message), NULL)) != ITEM_LINE_END)
	{
		if (kind == ITEM_LINE_ERROR)
		{
			fatal(import, "%s: %s (after line %ld)", import->files[file].path, message, line_reader_number(reader));
			break;
		}
		lines++;
		take_line(import, file, line_reader_number(reader), kind == ITEM_LINE_GOOD ? &item : NULL, message);
		item_line_free(&item);
		/* once stopped, the messages stay last */
		if (!import->stopped && progress_due())
			progress_draw(import->loaded, import->bytes_read + line_reader_offset(reader));
	}
	/* a manifest's count tells a truncated or mixed-up download */
	if (!import->stopped && import->files[file].expected_items >= 0 && lines != import->files[file].expected_items)
		fatal(import, "%s: the export's manifest lists %ld items, the file holds %ld lines",
			  import->files[file].path, import->files[file].expected_items, lines);
	import->bytes_read += line_reader_offset(reader);
	line_reader_close(reader);
}

/* Connects the writer and the converter, checks the table, and begins the transaction; 0 or -1. */
static int
start(Import *import)
{
	TableInfo	table;

	import->conn = db_connect(import->options->conninfo);
	if (import->conn == NULL || db_find_table(import->conn, import->options->table, &table) != 0)
		return -1;
	db_free_table(&table);
	import->converter = db_connect(import->options->conninfo);
	if (import->converter == NULL)
		return -1;
	/* string_to_table keeps a whole batch in memory (work_mem), not in a temporary file */
	if (db_command(import->conn, "SET work_mem = '64MB'") != 0
		|| db_command(import->converter, "SET work_mem = '64MB'") != 0
		|| db_prepare(import->converter, "convert", CONVERT_SQL, 1) != 0
		|| db_prepare(import->conn, "write", WRITE_SQL, 2) != 0
		|| db_prepare(import->conn, "item", IMPORT_ITEM_SQL, 2) != 0)
		return -1;
	return db_command(import->conn, "BEGIN");
}

/* Loads the items of DynamoDB JSON files into a table; an exit status. */
int
import_run(const ImportOptions *options)
{
	Import		import = {0};
	struct timespec started;
	double		seconds;
	long long	total_bytes = 0;
	int			status;

	import.options = options;
	import.filling = &import.batches[0];
	clock_gettime(CLOCK_MONOTONIC, &started);
	if (sources_resolve(options->paths, options->npaths, &import.files, &import.nfiles) != 0)
		return TRANSFER_FAILED;
	if (start(&import) != 0)
	{
		PQfinish(import.conn);
		PQfinish(import.converter);
		sources_free(import.files, import.nfiles);
		return TRANSFER_FAILED;
	}
	/* the time left needs the size of every file: none when one is a pipe */
	for (int i = 0; i < import.nfiles && total_bytes >= 0; i++)
		total_bytes = import.files[i].bytes >= 0 ? total_bytes + import.files[i].bytes : -1;
	progress_start(options->progress, total_bytes, 0);
	for (int i = 0; i < import.nfiles && !import.stopped; i++)
		read_file(&import, i);
	if (!import.stopped)
		drain(&import);
	if (!import.stopped)
		command(&import, "COMMIT");
	seconds = seconds_since(&started);
	if (import.stopped)
	{
		/* a lost connection rolls back by itself */
		if (import.conn != NULL && PQstatus(import.conn) == CONNECTION_OK)
		{
			PGresult   *result;

			while (import.writing && (result = PQgetResult(import.conn)) != NULL)
				PQclear(result);
			PQclear(PQexec(import.conn, "ROLLBACK"));
		}
		progress_message("nothing loaded into %s", options->table);
		status = TRANSFER_FAILED;
	}
	else
	{
		progress_finish(import.loaded, import.bytes_read);
		printf("ddb-transfer: loaded %ld items into %s from %d file%s in %.1f s (%.0f items/s)", import.loaded,
			   options->table, import.nfiles, import.nfiles == 1 ? "" : "s", seconds,
			   seconds > 0 ? import.loaded / seconds : 0.0);
		if (import.skipped > 0)
			printf("; skipped %ld bad lines", import.skipped);
		printf("\n");
		status = import.skipped > 0 ? TRANSFER_SKIPPED : TRANSFER_OK;
	}
	PQfinish(import.conn);
	PQfinish(import.converter);
	sources_free(import.files, import.nfiles);
	for (int i = 0; i < 3; i++)
	{
		batch_reset(&import.batches[i]);
		free(import.batches[i].text);
		free(import.batches[i].entries);
	}
	return status;
}
