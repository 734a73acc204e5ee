/*
 * sources.c — the data files of an import.  A DynamoDB export to S3,
 * downloaded (aws s3 cp --recursive s3://bucket/prefix/AWSDynamoDB/<ExportId>/ DIR),
 * is a directory holding manifest-summary.json (the export's format and
 * type), manifest-files.json (one JSON line per data file: dataFileS3Key,
 * itemCount, md5Checksum, etag) and data/<name>.json.gz.  The keys in the
 * manifest are S3 keys; their data/<name> tail is the file in DIR.
 */
#include "sources.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "line_reader.h"

/* The list being built. */
typedef struct FileList
{
	DataFile   *files;
	int			count;
	int			cap;
} FileList;

/* Appends dir/name (or name alone when dir is NULL); 0, or -1 when out of memory. */
static int
add_file(FileList *list, const char *dir, const char *name, long expected_items)
{
	char	   *path;

	if (list->count == list->cap)
	{
		int			cap = list->cap ? list->cap * 2 : 16;
		DataFile   *grown = realloc(list->files, cap * sizeof(DataFile));

		if (grown == NULL)
			return -1;
		list->files = grown;
		list->cap = cap;
	}
	if (dir == NULL)
		path = strdup(name);
	else if ((path = malloc(strlen(dir) + strlen(name) + 2)) != NULL)
		sprintf(path, "%s/%s", dir, name);
	if (path == NULL)
		return -1;
	list->files[list->count].path = path;
	list->files[list->count].expected_items = expected_items;
	list->count++;
	return 0;
}

/* Whether dir/name exists. */
static int
exists_in(const char *dir, const char *name)
{
	char		path[4096];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return stat(path, &st) == 0;
}

/* Refuses an export that holds no items as lines of DynamoDB JSON; 0 or -1. */
static int
check_summary(const char *dir)
{
	char		path[4096];
	json_error_t error;
	json_t	   *summary;
	const char *format;
	const char *type;
	int			status = 0;

	snprintf(path, sizeof(path), "%s/manifest-summary.json", dir);
	summary = json_load_file(path, 0, &error);
	if (!json_is_object(summary))
	{
		fprintf(stderr, "ddb-transfer: %s: not a manifest (%s)\n", path, summary ? "not an object" : error.text);
		json_decref(summary);
		return -1;
	}
	format = json_string_value(json_object_get(summary, "outputFormat"));
	type = json_string_value(json_object_get(summary, "exportType"));
	if (format && strcmp(format, "DYNAMODB_JSON") != 0)
	{
		fprintf(stderr, "ddb-transfer: %s: the export is in %s; only DYNAMODB_JSON exports can be imported\n",
				dir, format);
		status = -1;
	}
	else if (type && strcmp(type, "FULL_EXPORT") != 0)
	{
		fprintf(stderr, "ddb-transfer: %s: the export type is %s: it holds changes, not items; import a FULL_EXPORT\n",
				dir, type);
		status = -1;
	}
	json_decref(summary);
	return status;
}

/* Adds the files manifest-files.json lists, with their item counts; 0 or -1. */
static int
add_manifest_files(FileList *list, const char *dir)
{
	char		path[4096];
	char		errbuf[256];
	LineReader *reader;
	const char *line;
	size_t		len;
	LineStatus	status;

	snprintf(path, sizeof(path), "%s/manifest-files.json", dir);
	reader = line_reader_open(path, errbuf, sizeof(errbuf));
	if (reader == NULL)
	{
		fprintf(stderr, "ddb-transfer: %s: %s\n", path, errbuf);
		return -1;
	}
	while ((status = line_reader_next(reader, &line, &len)) == LINE_OK)
	{
		json_error_t error;
		json_t	   *entry;
		const char *key;
		json_t	   *count;
		const char *tail = NULL;

		if (len == 0)
			continue;
		entry = json_loadb(line, len, 0, &error);
		key = json_string_value(json_object_get(entry, "dataFileS3Key"));
		count = json_object_get(entry, "itemCount");
		/* the key's data/<name> tail, where <name> is a plain file name */
		if (key != NULL && strncmp(key, "data/", 5) == 0)
			tail = key;
		for (const char *found = key; found && (found = strstr(found, "/data/")) != NULL; found++)
			tail = found + 1;
		if (tail == NULL || tail[5] == '\0' || tail[5] == '.' || strchr(tail + 5, '/') != NULL
			|| !json_is_integer(count) || json_integer_value(count) < 0)
		{
			fprintf(stderr, "ddb-transfer: %s:%ld: %s\n", path, line_reader_number(reader),
					entry ? "not a data file entry (dataFileS3Key .../data/<name>, itemCount)" : error.text);
			json_decref(entry);
			line_reader_close(reader);
			return -1;
		}
		if (add_file(list, dir, tail, (long) json_integer_value(count)) != 0)
		{
			json_decref(entry);
			line_reader_close(reader);
			fprintf(stderr, "ddb-transfer: out of memory\n");
			return -1;
		}
		json_decref(entry);
	}
	if (status != LINE_END)
		fprintf(stderr, "ddb-transfer: %s: %s\n", path,
				status == LINE_ERROR ? line_reader_error(reader) : "a line too long");
	line_reader_close(reader);
	return status == LINE_END ? 0 : -1;
}

/* Whether a directory entry is a data file: a name ending in .json or .json.gz. */
static int
is_data_file(const struct dirent *entry)
{
	size_t		len = strlen(entry->d_name);

	return (len > 5 && strcmp(entry->d_name + len - 5, ".json") == 0)
		|| (len > 8 && strcmp(entry->d_name + len - 8, ".json.gz") == 0);
}

/* Adds the data files of dir/data in name order; 0 or -1. */
static int
add_data_dir(FileList *list, const char *dir)
{
	char		data_dir[4096];
	struct dirent **entries;
	int			n;
	int			status = 0;

	snprintf(data_dir, sizeof(data_dir), "%s/data", dir);
	n = scandir(data_dir, &entries, is_data_file, alphasort);
	if (n < 0)
	{
		fprintf(stderr, "ddb-transfer: %s: %s\n", data_dir, strerror(errno));
		return -1;
	}
	for (int i = 0; i < n; i++)
	{
		if (status == 0 && add_file(list, data_dir, entries[i]->d_name, -1) != 0)
		{
			fprintf(stderr, "ddb-transfer: out of memory\n");
			status = -1;
		}
		free(entries[i]);
	}
	free(entries);
	return status;
}

/* Adds the data files of an export directory; 0 or -1. */
static int
add_export_dir(FileList *list, const char *dir)
{
	if (exists_in(dir, "manifest-summary.json") && check_summary(dir) != 0)
		return -1;
	if (exists_in(dir, "manifest-files.json"))
		return add_manifest_files(list, dir);
	if (exists_in(dir, "data"))
		return add_data_dir(list, dir);
	fprintf(stderr, "ddb-transfer: %s: a directory without manifest-files.json or data/ (not a DynamoDB export)\n",
			dir);
	return -1;
}

/* The data files of paths, in order; 0, or -1 with the reason on stderr. */
int
sources_resolve(char **paths, int npaths, DataFile **files, int *nfiles)
{
	FileList	list = {0};

	for (int i = 0; i < npaths; i++)
	{
		struct stat st;
		int			status;

		if (stat(paths[i], &st) != 0)
		{
			fprintf(stderr, "ddb-transfer: %s: %s\n", paths[i], strerror(errno));
			sources_free(list.files, list.count);
			return -1;
		}
		if (S_ISDIR(st.st_mode))
			status = add_export_dir(&list, paths[i]);
		else if ((status = add_file(&list, NULL, paths[i], -1)) != 0)
			fprintf(stderr, "ddb-transfer: out of memory\n");
		if (status != 0)
		{
			sources_free(list.files, list.count);
			return -1;
		}
	}
	/* a missing or unreadable file stops the import before anything is loaded */
	for (int i = 0; i < list.count; i++)
	{
		struct stat st;

		if (access(list.files[i].path, R_OK) != 0 || stat(list.files[i].path, &st) != 0)
		{
			fprintf(stderr, "ddb-transfer: %s: %s\n", list.files[i].path, strerror(errno));
			sources_free(list.files, list.count);
			return -1;
		}
		list.files[i].bytes = S_ISREG(st.st_mode) ? st.st_size : -1;
	}
	*files = list.files;
	*nfiles = list.count;
	return 0;
}

/* Frees what sources_resolve returned. */
void
sources_free(DataFile *files, int nfiles)
{
	for (int i = 0; i < nfiles; i++)
		free(files[i].path);
	free(files);
}

/* What sources_under_prefix gathers. */
typedef struct PrefixWalk
{
	FileList	list;
	size_t		root_len;		/* of bucket_dir, with the slash after it */
	const char *prefix;
	int			max_files;
	int			failed;
} PrefixWalk;

/* Adds the files below dir (a path within the bucket) whose keys begin with the prefix; 0 or -1. */
static int
walk_prefix(PrefixWalk *walk, const char *dir)
{
	DIR		   *handle = opendir(dir);
	struct dirent *entry;
	size_t		prefix_len = strlen(walk->prefix);

	if (handle == NULL)
	{
		fprintf(stderr, "ddb-transfer: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	while (walk->failed == 0 && (entry = readdir(handle)) != NULL)
	{
		char		path[4096];
		const char *key;
		size_t		key_len;
		struct stat st;

		if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0)
			continue;
		if ((size_t) snprintf(path, sizeof(path), "%s/%s", dir, entry->d_name) >= sizeof(path)
			|| lstat(path, &st) != 0)
			continue;
		key = path + walk->root_len;
		key_len = strlen(key);
		/* a directory is entered when its keys may begin with the prefix, a file taken when its key does */
		if (S_ISDIR(st.st_mode) && (key_len + 1 <= prefix_len ? strncmp(key, walk->prefix, key_len) == 0
									&& walk->prefix[key_len] == '/' : strncmp(key, walk->prefix, prefix_len) == 0))
			walk->failed = walk_prefix(walk, path);
		else if (S_ISREG(st.st_mode) && strncmp(key, walk->prefix, prefix_len) == 0)
		{
			if (walk->list.count == walk->max_files)
			{
				fprintf(stderr, "ddb-transfer: more than %d files under the prefix (an import takes at most %d)\n",
						walk->max_files, walk->max_files);
				walk->failed = -1;
			}
			else if (add_file(&walk->list, NULL, path, -1) != 0)
			{
				fprintf(stderr, "ddb-transfer: out of memory\n");
				walk->failed = -1;
			}
			else
				walk->list.files[walk->list.count - 1].bytes = st.st_size;
		}
	}
	closedir(handle);
	return walk->failed;
}

/* Orders data files by path (their keys: one bucket's). */
static int
by_path(const void *a, const void *b)
{
	return strcmp(((const DataFile *) a)->path, ((const DataFile *) b)->path);
}

/* The files of a bucket under a key prefix; see sources.h. */
int
sources_under_prefix(const char *bucket_dir, const char *prefix, int max_files, DataFile **files, int *nfiles)
{
	PrefixWalk	walk = {.prefix = prefix, .max_files = max_files, .root_len = strlen(bucket_dir) + 1};

	if (walk_prefix(&walk, bucket_dir) != 0)
	{
		sources_free(walk.list.files, walk.list.count);
		return -1;
	}
	if (walk.list.count > 0)
		qsort(walk.list.files, walk.list.count, sizeof(DataFile), by_path);
	*files = walk.list.files;
	*nfiles = walk.list.count;
	return 0;
}
