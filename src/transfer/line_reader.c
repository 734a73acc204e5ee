/*
 * line_reader.c — lines of gzip or plain files.  zlib's gzread inflates a
 * gzip file and reads any other file as it is; the lines are cut out of a
 * buffer that grows to hold the longest line, rather than read with
 * gzgets into a fixed one, so that a line of any length (and one holding a
 * NUL byte) comes out whole or is reported as too long, never split.
 */
#include "line_reader.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* How much one gzread asks for. */
#define READ_CHUNK (256 * 1024)

struct LineReader
{
	gzFile		file;
	char	   *buf;
	size_t		cap;
	size_t		start;			/* where the current line starts in buf */
	size_t		scanned;		/* buf[start, scanned) holds no newline */
	size_t		end;			/* buf[start, end) is read and not yet returned */
	int			at_eof;
	int			skipping;		/* discarding the rest of a line over LINE_MAX_BYTES */
	long		number;
	char	   *path;
	char		error[256];
};

/* Opens a file, gzip or plain; NULL (with the reason in errbuf) when it cannot. */
LineReader *
line_reader_open(const char *path, char *errbuf, size_t errlen)
{
	LineReader *reader;
	gzFile		file;

	errno = 0;
	file = gzopen(path, "rb");
	if (file == NULL)
	{
		snprintf(errbuf, errlen, "%s", errno ? strerror(errno) : "cannot open");
		return NULL;
	}
	gzbuffer(file, READ_CHUNK);
	reader = calloc(1, sizeof(LineReader));
	if (reader == NULL || (reader->buf = malloc(2 * READ_CHUNK)) == NULL)
	{
		free(reader);
		gzclose(file);
		snprintf(errbuf, errlen, "out of memory");
		return NULL;
	}
	reader->file = file;
	reader->cap = 2 * READ_CHUNK;
	reader->path = strdup(path);
	return reader;
}

/* Keeps zlib's message of an error, without the file name zlib puts first. */
static void
set_error(LineReader *reader, const char *message)
{
	size_t		len = reader->path ? strlen(reader->path) : 0;

	if (len > 0 && strncmp(message, reader->path, len) == 0 && strncmp(message + len, ": ", 2) == 0)
		message += len + 2;
	snprintf(reader->error, sizeof(reader->error), "%s", message);
}

/* Reads more of the file after buf[start, end); 0, or -1 with reader->error set. */
static int
fill(LineReader *reader)
{
	int			n;
	int			errnum;

	/* move the unfinished line to the front, then make room for a chunk */
	if (reader->start > 0)
	{
		memmove(reader->buf, reader->buf + reader->start, reader->end - reader->start);
		reader->end -= reader->start;
		reader->scanned -= reader->start;
		reader->start = 0;
	}
	if (reader->cap - reader->end < READ_CHUNK)
	{
		char	   *grown = realloc(reader->buf, reader->cap * 2);

		if (grown == NULL)
		{
			set_error(reader, "out of memory");
			return -1;
		}
		reader->buf = grown;
		reader->cap *= 2;
	}
	n = gzread(reader->file, reader->buf + reader->end, (unsigned) (reader->cap - reader->end));
	if (n < 0)
	{
		set_error(reader, gzerror(reader->file, &errnum));
		return -1;
	}
	if (n == 0)
	{
		/* a truncated gzip stream ends like a file, with the error kept aside */
		const char *message = gzerror(reader->file, &errnum);

		if (errnum != Z_OK)
		{
			set_error(reader, message);
			return -1;
		}
		reader->at_eof = 1;
	}
	reader->end += n;
	return 0;
}

/* The next line, without its newline (nor a carriage return before it); valid until the next call. */
LineStatus
line_reader_next(LineReader *reader, const char **line, size_t *len)
{
	for (;;)
	{
		char	   *newline = memchr(reader->buf + reader->scanned, '\n', reader->end - reader->scanned);
		size_t		line_end;

		if (newline == NULL && !reader->at_eof)
		{
			reader->scanned = reader->end;
			if (reader->skipping || reader->end - reader->start > LINE_MAX_BYTES)
			{
				/* too long: drop what is read of it and look for its end */
				reader->skipping = 1;
				reader->start = reader->scanned = reader->end = 0;
			}
			if (fill(reader) != 0)
				return LINE_ERROR;
			continue;
		}
		if (newline == NULL && reader->start == reader->end && !reader->skipping)
			return LINE_END;
		/* a line ends at its newline, or at the end of the file */
		line_end = newline ? (size_t) (newline - reader->buf) : reader->end;
		*line = reader->buf + reader->start;
		*len = line_end - reader->start;
		reader->start = reader->scanned = newline ? line_end + 1 : line_end;
		reader->number++;
		if (reader->skipping || *len > LINE_MAX_BYTES)
		{
			reader->skipping = 0;
			return LINE_TOO_LONG;
		}
		if (*len > 0 && (*line)[*len - 1] == '\r')
			(*len)--;
		return LINE_OK;
	}
}

/* The number of the line line_reader_next returned last. */
long
line_reader_number(const LineReader *reader)
{
	return reader->number;
}

/* The bytes of the file read so far (compressed bytes, for gzip; from a pipe, after gunzip). */
long long
line_reader_offset(const LineReader *reader)
{
	/* zlib's offset in the file, without what it read ahead and has not used; a pipe has none */
	long long	offset = gzoffset(reader->file);

	return offset >= 0 ? offset : gztell(reader->file);
}

/* Why the file could not be read on, after LINE_ERROR. */
const char *
line_reader_error(const LineReader *reader)
{
	return reader->error;
}

/* Closes the file and frees the reader. */
void
line_reader_close(LineReader *reader)
{
	if (reader == NULL)
		return;
	gzclose(reader->file);
	free(reader->path);
	free(reader->buf);
	free(reader);
}
