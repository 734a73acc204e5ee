/*
 * item_line.h — the lines of a data file of DynamoDB's export format,
 * {"Item": {...}}, one after the other, checked: what import and
 * read-items both take.
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

/* What item_line_next found. */
typedef enum ItemLineKind
{
	ITEM_LINE_END,				/* no more lines */
	ITEM_LINE_GOOD,				/* a good line: its item */
	ITEM_LINE_BAD,				/* a bad line: why, in message */
	ITEM_LINE_ERROR				/* the file cannot be read on: why, in message */
} ItemLineKind;

/*
 * The next line of a data file that is not blank (blank lines are
 * skipped), checked: a good line's item (for item_line_free), or why the
 * line is bad in message (size bytes), in the words docs/transfer.md
 * lists; an item's own validity (keys, types, sizes) is the server's to
 * check.  *bytes, when not NULL, grows by the bytes of the lines read,
 * blank ones too, with their newlines.  The line's number is
 * line_reader_number's.
 */
extern ItemLineKind item_line_next(LineReader *reader, ItemLine *item, char *message, size_t size,
								   long long *bytes);

/* Frees what item_line_next kept of a good line. */
extern void item_line_free(ItemLine *item);

#endif
