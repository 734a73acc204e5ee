/*
 * sources.h — the data files an import reads: files named on the command
 * line, and the files of DynamoDB export directories.
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

/* Frees what sources_resolve returned. */
extern void sources_free(DataFile *files, int nfiles);

#endif
