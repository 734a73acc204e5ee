/*
 * export.c — ddb-transfer export: a table's items in the layout of
 * DynamoDB's export to S3 (the content of s3://bucket/prefix/AWSDynamoDB/<ExportId>/):
 *
 *   DIR/_started                   empty, written first
 *   DIR/data/<name>.json.gz        {"Item":{...}} lines, file_items per file
 *   DIR/manifest-files.json        a JSON line per data file: itemCount, md5Checksum, etag, dataFileS3Key
 *   DIR/manifest-files.checksum    the MD5 of manifest-files.json, in hex
 *   DIR/manifest-summary.json      the export: table, times, itemCount, billedSizeBytes, format
 *   DIR/manifest-summary.checksum  the MD5 of manifest-summary.json, in hex
 *
 * manifest-summary.json comes last: an export without it is incomplete.
 * The items are what a read of the table sees (TTL-expired ones are not),
 * read by one COPY, so from one snapshot.
 */
#include <errno.h>
#include <jansson.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <zlib.h>

#include "db.h"
#include "elapsed.h"
#include "progress.h"
#include "transfer.h"

/* The state of one export. */
typedef struct Export
{
	const ExportOptions *options;
	char		export_id[32];
	gzFile		file;			/* the data file being written, or NULL */
	char		file_name[64];
	long		file_count;		/* items in it */
	json_t	   *manifest;		/* the manifest-files.json lines so far */
	long		items;
	long long	bytes;			/* of the data lines, before gzip */
	long long	billed_bytes;
	char	   *line;			/* the line being built */
	size_t		line_cap;
} Export;

/* Fills buf with n random characters of DynamoDB's file names (lower case and digits). */
static void
random_name(char *buf, int n)
{
	const char	alphabet[] = "abcdefghijklmnopqrstuvwxyz234567";
	unsigned char bytes[64];

	if (getentropy(bytes, n) != 0)
	{
		for (int i = 0; i < n; i++)
			bytes[i] = (unsigned char) random();
	}
	for (int i = 0; i < n; i++)
		buf[i] = alphabet[bytes[i] & 31];
	buf[n] = '\0';
}

/* The time now as DynamoDB's manifests write it: 2020-11-04T07:28:34.028Z. */
static void
iso_time(char *buf, size_t len)
{
	struct timespec now;
	struct tm	tm;
	char		seconds[24];

	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	strftime(seconds, sizeof(seconds), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%03dZ", seconds, (int) (now.tv_nsec / 1000000) % 1000);
}

/* The MD5 of a file; 0, or -1 when it cannot be read. */
static int
file_md5(const char *path, unsigned char digest[16])
{
	FILE	   *file = fopen(path, "rb");
	EVP_MD_CTX *context = EVP_MD_CTX_new();
	unsigned char buf[65536];
	size_t		n;
	int			ok;

	ok = file != NULL && context != NULL && EVP_DigestInit_ex(context, EVP_md5(), NULL);
	while (ok && (n = fread(buf, 1, sizeof(buf), file)) > 0)
		ok = EVP_DigestUpdate(context, buf, n);
	ok = ok && !ferror(file) && EVP_DigestFinal_ex(context, digest, NULL);
	if (file)
		fclose(file);
	EVP_MD_CTX_free(context);
	return ok ? 0 : -1;
}

/* Writes text to dir/name; 0, or -1 with the reason on stderr. */
static int
write_text(const char *dir, const char *name, const char *text)
{
	char		path[4096];
	FILE	   *file;
	size_t		len = strlen(text);
	int			ok;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	file = fopen(path, "wb");
	ok = file != NULL && fwrite(text, 1, len, file) == len;
	if (file != NULL && fclose(file) != 0)
		ok = 0;
	if (!ok)
		progress_message("%s: %s", path, strerror(errno));
	return ok ? 0 : -1;
}

/* An MD5 digest in hex (33 bytes with the NUL). */
static void
md5_hex(const unsigned char digest[16], char hex[33])
{
	for (int i = 0; i < 16; i++)
		sprintf(hex + 2 * i, "%02x", digest[i]);
}

/* Writes text to dir/name, and its MD5 in hex to dir/checksum_name; 0 or -1. */
static int
write_with_checksum(const char *dir, const char *name, const char *checksum_name, const char *text)
{
	unsigned char digest[16];
	char		hex[33];

	if (!EVP_Digest(text, strlen(text), digest, NULL, EVP_md5(), NULL))
		return -1;
	md5_hex(digest, hex);
	return write_text(dir, name, text) == 0 && write_text(dir, checksum_name, hex) == 0 ? 0 : -1;
}

/* The path of a data file. */
static void
data_path(const Export *export, const char *name, char *path, size_t len)
{
	snprintf(path, len, "%s/data/%s", export->options->out_dir, name);
}

/* Starts a data file; 0, or -1 with the reason on stderr. */
static int
open_data_file(Export *export)
{
	char		path[4096];

	random_name(export->file_name, 26);
	strcat(export->file_name, export->options->gzip ? ".json.gz" : ".json");
	data_path(export, export->file_name, path, sizeof(path));
	/* "T": zlib writes the bytes as they are, without gzip */
	export->file = gzopen(path, export->options->gzip ? "wb6" : "wbT");
	if (export->file == NULL)
	{
		progress_message("%s: %s", path, strerror(errno));
		return -1;
	}
	gzbuffer(export->file, 256 * 1024);
	export->file_count = 0;
	return 0;
}

/* Finishes the data file being written and adds its line to the manifest; 0 or -1. */
static int
close_data_file(Export *export)
{
	char		path[4096];
	char		key[256];
	unsigned char digest[16];
	unsigned char md5_base64[32];
	char		etag[33];
	int			closed = gzclose(export->file);

	export->file = NULL;
	data_path(export, export->file_name, path, sizeof(path));
	if (closed != Z_OK || file_md5(path, digest) != 0)
	{
		progress_message("%s: cannot write it", path);
		return -1;
	}
	EVP_EncodeBlock(md5_base64, digest, 16);
	md5_hex(digest, etag);
	snprintf(key, sizeof(key), "AWSDynamoDB/%s/data/%s", export->export_id, export->file_name);
	json_array_append_new(export->manifest,
						  json_pack("{s:I, s:s, s:s, s:s}", "itemCount", (json_int_t) export->file_count,
									"md5Checksum", (const char *) md5_base64, "etag", etag, "dataFileS3Key", key));
	return 0;
}

/*
 * Builds {"Item":<item>}\n in export->line from a COPY row's item: COPY's
 * text format doubles backslashes (and writes control characters as \n,
 * \t, ...), and jsonb's text has a space after each colon and comma, which
 * DynamoDB's lines have not.  Returns the line's length, or -1 when out of memory.
 */
static long
build_line(Export *export, const char *text, size_t len)
{
	size_t		n = 0;
	int			in_string = 0;
	int			escaped = 0;

	if (len + 16 > export->line_cap)
	{
		char	   *grown = realloc(export->line, len + 16);

		if (grown == NULL)
			return -1;
		export->line = grown;
		export->line_cap = len + 16;
	}
	memcpy(export->line, "{\"Item\":", 8);
	n = 8;
	for (size_t i = 0; i < len; i++)
	{
		char		c = text[i];

		if (c == '\\' && i + 1 < len)
		{
			c = text[++i];
			c = c == 'b' ? '\b' : c == 'f' ? '\f' : c == 'n' ? '\n' : c == 'r' ? '\r' : c == 't' ? '\t' : c == 'v' ? '\v' : c;
		}
		if (in_string)
		{
			if (escaped)
				escaped = 0;
			else if (c == '\\')
				escaped = 1;
			else if (c == '"')
				in_string = 0;
		}
		else if (c == '"')
			in_string = 1;
		else if (c == ' ')
			continue;
		export->line[n++] = c;
	}
	export->line[n++] = '}';
	export->line[n++] = '\n';
	return (long) n;
}

/* Writes one COPY row (item_size, a tab, the item in DynamoDB JSON, a newline); 0 or -1. */
static int
write_row(Export *export, const char *row, int len)
{
	const char *tab = memchr(row, '\t', len);
	long		line_len;

	if (tab == NULL)
	{
		progress_message("an unexpected row from COPY");
		return -1;
	}
	if (export->file == NULL && open_data_file(export) != 0)
		return -1;
	export->billed_bytes += atoll(row);
	line_len = build_line(export, tab + 1, row + len - (tab + 1) - (row[len - 1] == '\n'));
	if (line_len < 0 || gzwrite(export->file, export->line, (unsigned) line_len) != (int) line_len)
	{
		progress_message("%s: cannot write it", export->file_name);
		return -1;
	}
	export->items++;
	export->bytes += line_len;
	if (progress_due())
		progress_draw(export->items, export->bytes);
	if (++export->file_count >= export->options->file_items)
		return close_data_file(export);
	return 0;
}

/* Streams the table's visible items into data files; 0, or -1 with the reason on stderr. */
static int
copy_items(Export *export, PGconn *conn, const TableInfo *table)
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
		if (status == 0 && write_row(export, row, len) != 0)
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
	/* an empty table is exported as one empty file, as DynamoDB does for an empty partition */
	if (status == 0 && export->file == NULL && export->items == 0)
		status = open_data_file(export);
	if (status == 0 && export->file != NULL)
		status = close_data_file(export);
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

/* Writes manifest-files.json, manifest-summary.json and their checksums; 0 or -1. */
static int
write_manifests(Export *export, const TableInfo *table, const char *start_time)
{
	const char *dir = export->options->out_dir;
	char		end_time[64];
	char		export_arn[1024];
	char		files_key[128];
	size_t		i;
	json_t	   *entry;
	json_t	   *summary;
	char	   *lines = NULL;
	size_t		size = 0;
	FILE	   *stream = open_memstream(&lines, &size);
	char	   *text;
	int			status;

	if (stream == NULL)
		return -1;
	json_array_foreach(export->manifest, i, entry)
	{
		char	   *line = json_dumps(entry, JSON_COMPACT | JSON_PRESERVE_ORDER);

		fprintf(stream, "%s\n", line ? line : "");
		free(line);
	}
	fclose(stream);
	status = write_with_checksum(dir, "manifest-files.json", "manifest-files.checksum", lines);
	free(lines);
	if (status != 0)
		return -1;

	iso_time(end_time, sizeof(end_time));
	snprintf(export_arn, sizeof(export_arn), "%s/export/%s", table->arn, export->export_id);
	snprintf(files_key, sizeof(files_key), "AWSDynamoDB/%s/manifest-files.json", export->export_id);
	summary = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:n, s:n, s:n, s:n, s:s, s:I, s:I, s:s, s:s}",
						"version", "2020-06-30", "exportArn", export_arn, "startTime", start_time,
						"endTime", end_time, "tableArn", table->arn, "tableId", table->table_id,
						"exportTime", start_time, "s3Bucket", "s3Prefix", "s3SseAlgorithm", "s3SseKmsKeyId",
						"manifestFilesS3Key", files_key, "billedSizeBytes", (json_int_t) export->billed_bytes,
						"itemCount", (json_int_t) export->items, "outputFormat", "DYNAMODB_JSON",
						"exportType", "FULL_EXPORT");
	text = summary ? json_dumps(summary, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
	status = text ? write_with_checksum(dir, "manifest-summary.json", "manifest-summary.checksum", text) : -1;
	free(text);
	json_decref(summary);
	return status;
}

/* Creates DIR and DIR/data, refusing a DIR that holds an export already; 0 or -1. */
static int
prepare_dir(const char *dir)
{
	const char *const taken[] = {"manifest-summary.json", "manifest-files.json", "data"};
	char		path[4096];
	struct stat st;

	if (mkdir(dir, 0777) != 0 && errno != EEXIST)
	{
		progress_message("%s: %s", dir, strerror(errno));
		return -1;
	}
	for (int i = 0; i < 3; i++)
	{
		snprintf(path, sizeof(path), "%s/%s", dir, taken[i]);
		if (stat(path, &st) == 0)
		{
			progress_message("%s holds an export already (%s); choose another directory", dir, taken[i]);
			return -1;
		}
	}
	snprintf(path, sizeof(path), "%s/data", dir);
	if (mkdir(path, 0777) != 0)
	{
		progress_message("%s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* Writes a table's items as a DynamoDB export; an exit status. */
int
export_run(const ExportOptions *options)
{
	Export		export = {0};
	TableInfo	table = {0};
	PGconn	   *conn;
	struct timespec started;
	struct timespec now;
	char		start_time[64];
	unsigned char random_id[4] = {0};
	double		seconds;
	int			status;

	export.options = options;
	clock_gettime(CLOCK_MONOTONIC, &started);
	conn = db_connect(options->conninfo);
	if (conn == NULL)
		return TRANSFER_FAILED;
	if (db_find_table(conn, options->table, &table) != 0 || prepare_dir(options->out_dir) != 0)
	{
		PQfinish(conn);
		return TRANSFER_FAILED;
	}
	/* DynamoDB's export ids: epoch milliseconds, a dash, 8 hex digits */
	clock_gettime(CLOCK_REALTIME, &now);
	if (getentropy(random_id, sizeof(random_id)) != 0)
		random_id[0] = (unsigned char) random();
	snprintf(export.export_id, sizeof(export.export_id), "%014lld-%02x%02x%02x%02x",
			 (long long) now.tv_sec * 1000 + now.tv_nsec / 1000000,
			 random_id[0], random_id[1], random_id[2], random_id[3]);
	iso_time(start_time, sizeof(start_time));
	export.manifest = json_array();
	progress_start(options->progress, 0, options->progress ? estimate_items(conn, &table) : 0);
	status = write_text(options->out_dir, "_started", "") == 0
		&& copy_items(&export, conn, &table) == 0
		&& write_manifests(&export, &table, start_time) == 0 ? TRANSFER_OK : TRANSFER_FAILED;
	seconds = seconds_since(&started);
	if (status == TRANSFER_OK)
	{
		progress_finish(export.items, export.bytes);
		printf("ddb-transfer: exported %ld items of %s to %s (%zu file%s) in %.1f s (%.0f items/s)\n",
			   export.items, options->table, options->out_dir, json_array_size(export.manifest),
			   json_array_size(export.manifest) == 1 ? "" : "s", seconds, seconds > 0 ? export.items / seconds : 0.0);
	}
	else
	{
		if (export.file != NULL)
			gzclose(export.file);
		progress_message("the export in %s is incomplete (it has no manifest-summary.json)", options->out_dir);
	}
	json_decref(export.manifest);
	free(export.line);
	db_free_table(&table);
	PQfinish(conn);
	return status;
}
