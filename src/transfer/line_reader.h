/*
 * line_reader.h — the lines of a data file, gzip or plain, one at a time,
 * numbered from 1, of any length up to LINE_MAX_BYTES.
 */
#ifndef DDB_TRANSFER_LINE_READER_H
#define DDB_TRANSFER_LINE_READER_H

#include <stddef.h>

/* The longest line kept: a 400 KB item in DynamoDB JSON, with every character escaped, fits many times over. */
#define LINE_MAX_BYTES (16 * 1024 * 1024)

typedef struct LineReader LineReader;

/* What line_reader_next found. */
typedef enum LineStatus
{
	LINE_OK,					/* a line, in *line and *len */
	LINE_TOO_LONG,				/* a line over LINE_MAX_BYTES, skipped; its number is line_reader_number */
	LINE_END,					/* no more lines */
	LINE_ERROR					/* the file cannot be read on (line_reader_error says why) */
} LineStatus;

/* Opens a file, gzip or plain; NULL (with the reason in errbuf) when it cannot. */
extern LineReader *line_reader_open(const char *path, char *errbuf, size_t errlen);

/* The next line, without its newline (nor a carriage return before it); valid until the next call. */
extern LineStatus line_reader_next(LineReader *reader, const char **line, size_t *len);

/* The number of the line line_reader_next returned last. */
extern long line_reader_number(const LineReader *reader);

/* The bytes of the file read so far (compressed bytes, for gzip; from a pipe, after gunzip). */
extern long long line_reader_offset(const LineReader *reader);

/* Why the file could not be read on, after LINE_ERROR. */
extern const char *line_reader_error(const LineReader *reader);

/* Closes the file and frees the reader. */
extern void line_reader_close(LineReader *reader);

#endif
