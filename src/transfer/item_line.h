/*
 * item_line.h — the check of one line of a data file of DynamoDB's export
 * format, {"Item": {...}}: what import and read-items both take.
 */
#ifndef DDB_TRANSFER_ITEM_LINE_H
#define DDB_TRANSFER_ITEM_LINE_H

#include <stddef.h>

#include "line_reader.h"

/* The item of a good line: its text in the line, or printed again (malloc'd) when the line spells "Item" otherwise. */
typedef struct ItemLine
{
	const char *text;
	size_t		len;
	char	   *printed;
} ItemLine;

/*
 * Checks a line that line_reader_next returned with status (LINE_OK or
 * LINE_TOO_LONG): 0 with its item, or -1 with why it is bad in message
 * (size bytes), in the words docs/transfer.md lists.  An item's own
 * validity (keys, types, sizes) is the server's to check.
 */
extern int	item_line_parse(const char *line, size_t len, LineStatus status, ItemLine *item, char *message,
							size_t size);

/* Whether a line holds nothing but JSON whitespace (a blank line, which is skipped). */
extern int	item_line_blank(const char *line, size_t len);

/* Frees what item_line_parse kept. */
extern void item_line_free(ItemLine *item);

#endif
