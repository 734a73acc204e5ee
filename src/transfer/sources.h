/*
 * sources.h — the data files an import reads: files named on the command
 * line, the files of DynamoDB export directories, and the objects of a
 * bucket under a key prefix.
 */
#ifndef DDB_TRANSFER_SOURCES_H
#define DDB_TRANSFER_SOURCES_H

/* One data file of DynamoDB JSON lines, gzip or plain. */
typedef struct DataFile
{
	char	   *path;
	long		expected_items;	/* the item count its export's manifest gives, or -1 */
	long long	bytes;			/* its size (compressed, for gzip), or -1 for no regular file (a pipe) */
} DataFile;

/*
 * The data files of paths, in order: a file is itself; a directory is an
 * export (the files its manifest-files.json lists, else the .json.gz and
 * .json files of its data/ directory).
 * Every file is checked readable, and its size taken.  0, or -1 with the
 * reason on stderr.
 */
extern int	sources_resolve(char **paths, int npaths, DataFile **files, int *nfiles);

/*
 * The files of an S3 bucket kept as a directory whose keys begin with
 * prefix (the path below bucket_dir, '/' between its parts), in key
 * order, as DynamoDB's import from S3 takes them; symbolic links and what
 * is not a regular file are left out.  At most max_files.  0, or -1 with
 * the reason on stderr.
 */
extern int	sources_under_prefix(const char *bucket_dir, const char *prefix, int max_files, DataFile **files,
								 int *nfiles);

/* Frees what sources_resolve returned. */
extern void sources_free(DataFile *files, int nfiles);

#endif
