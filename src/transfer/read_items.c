/*
 * read_items.c — ddb-transfer read-items: the items of the files of a
 * bucket under a key prefix (DynamoDB's import from S3 takes every object
 * under its S3KeyPrefix), checked line by line, on standard output for the
 * server's imports (ImportTable, docs/transfer.md), which write them:
 *
 *   F <tab> key                         a file begins (its key: its path below the bucket)
 *   I <tab> index <tab> item            a good line: its index among the file's lines (from 0, blank
 *                                       ones left out), its item in DynamoDB JSON
 *   E <tab> index <tab> message         a bad line, and why
 *   S <tab> files <tab> bytes           last: the files read, and the bytes of their lines
 *
 * A file that cannot be read on (a gzip file cut short) is one bad line,
 * and the rest of it is skipped, as DynamoDB does with a malformed object.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "item_line.h"
#include "line_reader.h"
#include "sources.h"
#include "transfer.h"

/* Writes text as the last field of a record: a tab, a newline or a carriage return in it becomes a space. */
static void
print_field(const char *text)
{
	for (const char *c = text; *c; c++)
		putchar(*c == '\t' || *c == '\n' || *c == '\r' ? ' ' : *c);
	putchar('\n');
}

/* Writes a bad line's record: its index, why. */
static void
print_bad(long index, const char *message)
{
	printf("E\t%ld\t", index);
	print_field(message);
}

/* Reads one file's lines onto standard output; adds the bytes of its lines to *bytes. */
static void
read_file(const char *path, const char *key, long long *bytes)
{
	char		message[512];
	LineReader *reader = line_reader_open(path, message, sizeof(message));
	ItemLine	item;
	ItemLineKind kind;
	long		index = 0;

	fputs("F\t", stdout);
	print_field(key);
	if (reader == NULL)
	{
		print_bad(0, message);
		return;
	}
	while ((kind = item_line_next(reader, &item, message, sizeof(message), bytes)) != ITEM_LINE_END)
	{
		if (kind == ITEM_LINE_ERROR)
		{
			char		error[600];

			snprintf(error, sizeof(error), "the file cannot be read on: %s", message);
			print_bad(index, error);
			break;
		}
		if (kind == ITEM_LINE_GOOD)
		{
			printf("I\t%ld\t", index);
			fwrite(item.text, 1, item.len, stdout);
			putchar('\n');
		}
		else
			print_bad(index, message);
		item_line_free(&item);
		index++;
	}
	line_reader_close(reader);
}

/* Writes the items of the files under a bucket's key prefix; an exit status. */
int
read_items_run(const ReadItemsOptions *options)
{
	DataFile   *files;
	int			nfiles;
	long long	bytes = 0;
	size_t		root_len = strlen(options->bucket_dir) + 1;

	if (sources_under_prefix(options->bucket_dir, options->key_prefix, options->max_files, &files, &nfiles) != 0)
		return TRANSFER_FAILED;
	for (int i = 0; i < nfiles; i++)
		read_file(files[i].path, files[i].path + root_len, &bytes);
	printf("S\t%d\t%lld\n", nfiles, bytes);
	sources_free(files, nfiles);
	if (fflush(stdout) != 0 || ferror(stdout))
	{
		fprintf(stderr, "ddb-transfer: cannot write standard output\n");
		return TRANSFER_FAILED;
	}
	return TRANSFER_OK;
}
