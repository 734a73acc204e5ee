/*
 * export_writer.c — the layout of DynamoDB's export to S3, in a directory
 * (export_writer.h):
 *
 *   DIR/_started                   empty, written first
 *   DIR/data/<name>.json.gz        one line per item, file_items per file
 *   DIR/manifest-files.json        a JSON line per data file: itemCount, md5Checksum, etag, dataFileS3Key
 *   DIR/manifest-files.checksum    the MD5 of manifest-files.json, in hex
 *   DIR/manifest-summary.json      the export: table, times, itemCount, billedSizeBytes, format, type
 *   DIR/manifest-summary.checksum  the MD5 of manifest-summary.json, in hex
 *
 * A full export's line is {"Item":{...}}; an incremental export's is the
 * change's object ({"Metadata":...,"Keys":...,"NewImage":...,"OldImage":...}).
 */
#include "export_writer.h"

#include <errno.h>
#include <jansson.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <zlib.h>

#include "progress.h"

/* The state of one export. */
struct ExportWriter
{
	ExportTarget target;
	char		start_time[64];
	gzFile		file;			/* the data file being written, or NULL */
	char		file_name[64];
	long		file_count;		/* items in it */
	json_t	   *manifest;		/* the manifest-files.json lines so far */
	long		items;
	long long	bytes;			/* of the data lines, before gzip */
	long long	billed_bytes;
	char	   *line;			/* the line being built */
	size_t		line_cap;
};

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

/* A new export id; see export_writer.h. */
void
export_writer_new_id(char *id, size_t len)
{
	struct timespec now;
	unsigned char random_id[4] = {0};

	clock_gettime(CLOCK_REALTIME, &now);
	if (getentropy(random_id, sizeof(random_id)) != 0)
		random_id[0] = (unsigned char) random();
	snprintf(id, len, "%014lld-%02x%02x%02x%02x", (long long) now.tv_sec * 1000 + now.tv_nsec / 1000000,
			 random_id[0], random_id[1], random_id[2], random_id[3]);
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
data_path(const ExportWriter *writer, const char *name, char *path, size_t len)
{
	snprintf(path, len, "%s/data/%s", writer->target.out_dir, name);
}

/* Starts a data file; 0, or -1 with the reason on stderr. */
static int
open_data_file(ExportWriter *writer)
{
	char		path[4096];

	random_name(writer->file_name, 26);
	strcat(writer->file_name, writer->target.gzip ? ".json.gz" : ".json");
	data_path(writer, writer->file_name, path, sizeof(path));
	/* "T": zlib writes the bytes as they are, without gzip */
	writer->file = gzopen(path, writer->target.gzip ? "wb6" : "wbT");
	if (writer->file == NULL)
	{
		progress_message("%s: %s", path, strerror(errno));
		return -1;
	}
	gzbuffer(writer->file, 256 * 1024);
	writer->file_count = 0;
	return 0;
}

/* Finishes the data file being written and adds its line to the manifest; 0 or -1. */
static int
close_data_file(ExportWriter *writer)
{
	char		path[4096];
	char		key[256];
	unsigned char digest[16];
	unsigned char md5_base64[32];
	char		etag[33];
	int			closed = gzclose(writer->file);

	writer->file = NULL;
	data_path(writer, writer->file_name, path, sizeof(path));
	if (closed != Z_OK)
	{
		progress_message("%s: cannot write it: %s", path, closed == Z_ERRNO ? strerror(errno) : zError(closed));
		return -1;
	}
	if (file_md5(path, digest) != 0)
	{
		progress_message("%s: cannot read it back: %s", path, strerror(errno));
		return -1;
	}
	EVP_EncodeBlock(md5_base64, digest, 16);
	md5_hex(digest, etag);
	snprintf(key, sizeof(key), "AWSDynamoDB/%s/data/%s", writer->target.export_id, writer->file_name);
	json_array_append_new(writer->manifest,
						  json_pack("{s:I, s:s, s:s, s:s}", "itemCount", (json_int_t) writer->file_count,
									"md5Checksum", (const char *) md5_base64, "etag", etag, "dataFileS3Key", key));
	return 0;
}

/*
 * Builds a data line in writer->line from a row's JSON ({"Item":<item>}
 * around an item, the object itself for an incremental export's change):
 * COPY's text format doubles backslashes (and writes control characters as
 * \n, \t, ...), and jsonb's text has a space after each colon and comma,
 * which DynamoDB's lines have not.  Returns the line's length, or -1 when
 * out of memory.
 */
static long
build_line(ExportWriter *writer, const char *text, size_t len)
{
	size_t		n = 0;
	int			in_string = 0;
	int			escaped = 0;

	if (len + 16 > writer->line_cap)
	{
		char	   *grown = realloc(writer->line, len + 16);

		if (grown == NULL)
			return -1;
		writer->line = grown;
		writer->line_cap = len + 16;
	}
	if (!writer->target.incremental)
	{
		memcpy(writer->line, "{\"Item\":", 8);
		n = 8;
	}
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
		writer->line[n++] = c;
	}
	if (!writer->target.incremental)
		writer->line[n++] = '}';
	writer->line[n++] = '\n';
	return (long) n;
}

/* Writes one row; see export_writer.h. */
int
export_writer_row(ExportWriter *writer, const char *row, size_t len)
{
	const char *tab = memchr(row, '\t', len);
	long		line_len;

	if (tab == NULL)
	{
		progress_message("a row without a tab (a row is the item's size, a tab, and its JSON)");
		return -1;
	}
	if (writer->file == NULL && open_data_file(writer) != 0)
		return -1;
	writer->billed_bytes += atoll(row);
	line_len = build_line(writer, tab + 1, row + len - (tab + 1) - (row[len - 1] == '\n'));
	if (line_len < 0)
	{
		progress_message("out of memory");
		return -1;
	}
	if (gzwrite(writer->file, writer->line, (unsigned) line_len) != (int) line_len)
	{
		int			error;
		const char *reason = gzerror(writer->file, &error);

		progress_message("%s: cannot write it: %s", writer->file_name, error == Z_ERRNO ? strerror(errno) : reason);
		return -1;
	}
	writer->items++;
	writer->bytes += line_len;
	if (++writer->file_count >= writer->target.file_items)
		return close_data_file(writer);
	return 0;
}

/* The items written so far. */
long
export_writer_items(const ExportWriter *writer)
{
	return writer->items;
}

/* The bytes of the lines written so far, before gzip. */
long long
export_writer_bytes(const ExportWriter *writer)
{
	return writer->bytes;
}

/* A string member of the summary: the value, or null. */
static void
set_string(json_t *object, const char *key, const char *value)
{
	json_object_set_new(object, key, value ? json_string(value) : json_null());
}

/* The content of manifest-summary.json (JSON text, malloc'd), or NULL. */
static char *
summary_text(const ExportWriter *writer)
{
	const ExportTarget *t = &writer->target;
	char		end_time[64];
	char		export_arn[1024];
	char		files_key[128];
	json_t	   *summary = json_object();
	char	   *text;

	iso_time(end_time, sizeof(end_time));
	snprintf(export_arn, sizeof(export_arn), "%s/export/%s", t->table_arn, t->export_id);
	snprintf(files_key, sizeof(files_key), "AWSDynamoDB/%s/manifest-files.json", t->export_id);
	/* DynamoDB's members in DynamoDB's order; an incremental export's summary is of a later version */
	set_string(summary, "version", t->incremental ? "2023-08-01" : "2020-06-30");
	set_string(summary, "exportArn", export_arn);
	set_string(summary, "startTime", writer->start_time);
	set_string(summary, "endTime", end_time);
	set_string(summary, "tableArn", t->table_arn);
	set_string(summary, "tableId", t->table_id);
	if (t->incremental)
	{
		set_string(summary, "exportFromTime", t->from_time);
		set_string(summary, "exportToTime", t->to_time);
	}
	else
		set_string(summary, "exportTime", t->export_time ? t->export_time : writer->start_time);
	set_string(summary, "s3Bucket", t->s3_bucket);
	set_string(summary, "s3Prefix", t->s3_prefix);
	set_string(summary, "s3SseAlgorithm", t->s3_sse_algorithm);
	set_string(summary, "s3SseKmsKeyId", t->s3_sse_kms_key_id);
	set_string(summary, "manifestFilesS3Key", files_key);
	json_object_set_new(summary, "billedSizeBytes", json_integer(writer->billed_bytes));
	json_object_set_new(summary, "itemCount", json_integer(writer->items));
	set_string(summary, "outputFormat", "DYNAMODB_JSON");
	if (t->incremental)
		set_string(summary, "outputView", t->view);
	set_string(summary, "exportType", t->incremental ? "INCREMENTAL_EXPORT" : "FULL_EXPORT");
	text = json_dumps(summary, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(summary);
	return text;
}

/* Writes manifest-files.json, manifest-summary.json and their checksums; 0 or -1. */
static int
write_manifests(const ExportWriter *writer)
{
	const char *dir = writer->target.out_dir;
	size_t		i;
	json_t	   *entry;
	char	   *lines = NULL;
	size_t		size = 0;
	FILE	   *stream = open_memstream(&lines, &size);
	char	   *text;
	int			status;

	if (stream == NULL)
		return -1;
	json_array_foreach(writer->manifest, i, entry)
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
	text = summary_text(writer);
	status = text ? write_with_checksum(dir, "manifest-summary.json", "manifest-summary.checksum", text) : -1;
	free(text);
	return status;
}

/* Makes a directory and its missing parents; 0, or -1 with the reason on stderr. */
static int
make_dirs(const char *dir)
{
	char		path[4096];

	snprintf(path, sizeof(path), "%s", dir);
	for (char *slash = strchr(path + 1, '/');; slash = strchr(slash + 1, '/'))
	{
		if (slash)
			*slash = '\0';
		if (mkdir(path, 0777) != 0 && errno != EEXIST)
		{
			progress_message("%s: %s", path, strerror(errno));
			return -1;
		}
		if (slash == NULL)
			return 0;
		*slash = '/';
	}
}

/* Makes DIR and DIR/data, refusing a DIR that holds an export already; 0 or -1. */
static int
prepare_dir(const char *dir)
{
	const char *const taken[] = {"manifest-summary.json", "manifest-files.json", "data"};
	char		path[4096];
	struct stat st;

	if (make_dirs(dir) != 0)
		return -1;
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

/* Opens an export; see export_writer.h. */
ExportWriter *
export_writer_open(const ExportTarget *target)
{
	ExportWriter *writer;

	if (prepare_dir(target->out_dir) != 0 || write_text(target->out_dir, "_started", "") != 0)
		return NULL;
	writer = calloc(1, sizeof(ExportWriter));
	if (writer == NULL || (writer->manifest = json_array()) == NULL)
	{
		free(writer);
		progress_message("out of memory");
		return NULL;
	}
	writer->target = *target;
	iso_time(writer->start_time, sizeof(writer->start_time));
	return writer;
}

/* Finishes an export; see export_writer.h. */
int
export_writer_finish(ExportWriter *writer)
{
	int			files;

	/* an empty table is exported as one empty file, as DynamoDB does for an empty partition */
	if (writer->file == NULL && writer->items == 0 && open_data_file(writer) != 0)
	{
		export_writer_discard(writer);
		return -1;
	}
	if ((writer->file != NULL && close_data_file(writer) != 0) || write_manifests(writer) != 0)
	{
		export_writer_discard(writer);
		return -1;
	}
	files = (int) json_array_size(writer->manifest);
	export_writer_discard(writer);
	return files;
}

/* Frees a writer; see export_writer.h. */
void
export_writer_discard(ExportWriter *writer)
{
	if (writer == NULL)
		return;
	if (writer->file != NULL)
		gzclose(writer->file);
	json_decref(writer->manifest);
	free(writer->line);
	free(writer);
}
