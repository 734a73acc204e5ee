/*
 * item_line.c — one line of a data file, checked: JSON (parsed with
 * jansson, so that bad JSON is told without asking a server), an object
 * with the one member "Item" holding an object; its item's text found in
 * the line as it is, so that the common line costs no printing.
 */
#include "item_line.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_arena.h"

/* Whether c is JSON whitespace. */
static int
is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Skips JSON whitespace from i on. */
static size_t
skip_space(const char *text, size_t i, size_t len)
{
	while (i < len && is_space(text[i]))
		i++;
	return i;
}

/*
 * The item's text in a line that parsed as {"Item": {...}}: what lies
 * between the colon and the closing brace.  0, or -1 when the line spells
 * the key otherwise (with escapes); the caller then prints the item again.
 */
static int
item_span(const char *line, size_t len, size_t *start, size_t *end)
{
	size_t		i = skip_space(line, 0, len);
	size_t		j = len;

	if (i >= len || line[i] != '{')
		return -1;
	i = skip_space(line, i + 1, len);
	if (len - i < 6 || memcmp(line + i, "\"Item\"", 6) != 0)
		return -1;
	i = skip_space(line, i + 6, len);
	if (i >= len || line[i] != ':')
		return -1;
	i = skip_space(line, i + 1, len);
	while (j > i && is_space(line[j - 1]))
		j--;
	if (j == i || line[j - 1] != '}')
		return -1;
	j--;
	while (j > i && is_space(line[j - 1]))
		j--;
	*start = i;
	*end = j;
	return 0;
}

/*
 * Checks a line that line_reader_next returned with status (LINE_OK or
 * LINE_TOO_LONG): 0 with its item, or -1 with why it is bad in message.
 */
static int
item_line_parse(const char *line, size_t len, LineStatus status, ItemLine *item, char *message, size_t size)
{
	json_error_t error;
	json_t	   *root = NULL;
	json_t	   *value = NULL;
	const char *nul;
	size_t		start;
	size_t		end;

	memset(item, 0, sizeof(ItemLine));
	message[0] = '\0';
	json_arena_begin();
	if (status == LINE_TOO_LONG)
		snprintf(message, size, "a line longer than %d bytes", LINE_MAX_BYTES);
	else if ((nul = memchr(line, '\0', len)) != NULL)
		snprintf(message, size, "a NUL byte (at byte %zu)", (size_t) (nul - line) + 1);
	else if ((root = json_loadb(line, len, JSON_REJECT_DUPLICATES, &error)) == NULL)
		snprintf(message, size, "invalid JSON: %s (column %d)", error.text, error.column);
	else if (!json_is_object(root))
		snprintf(message, size, "not a JSON object (a line is {\"Item\": {...}})");
	else if ((value = json_object_get(root, "Item")) == NULL)
		snprintf(message, size, "no \"Item\" (a line is {\"Item\": {...}})");
	else if (json_object_size(root) != 1)
		snprintf(message, size, "members besides \"Item\" (a line is {\"Item\": {...}})");
	else if (!json_is_object(value))
		snprintf(message, size, "\"Item\" is not an object");
	else if (item_span(line, len, &start, &end) == 0)
	{
		item->text = line + start;
		item->len = end - start;
	}
	else
	{
		char	   *printed = json_dumps(value, JSON_COMPACT);

		item->printed = printed ? strdup(printed) : NULL;
		json_arena_free(printed);
		if (item->printed == NULL)
			snprintf(message, size, "out of memory");
		else
		{
			item->text = item->printed;
			item->len = strlen(item->printed);
		}
	}
	json_decref(root);
	json_arena_end();
	return message[0] == '\0' ? 0 : -1;
}

/* Whether a line holds nothing but JSON whitespace (a blank line, which is skipped). */
static int
item_line_blank(const char *line, size_t len)
{
	return skip_space(line, 0, len) == len;
}

/* The next line, checked; see item_line.h. */
ItemLineKind
item_line_next(LineReader *reader, ItemLine *item, char *message, size_t size, long long *bytes)
{
	const char *line;
	size_t		len;
	LineStatus	status;

	memset(item, 0, sizeof(ItemLine));
	while ((status = line_reader_next(reader, &line, &len)) != LINE_END)
	{
		if (status == LINE_ERROR)
		{
			snprintf(message, size, "%s", line_reader_error(reader));
			return ITEM_LINE_ERROR;
		}
		if (bytes)
			*bytes += (long long) len + 1;
		if (status == LINE_OK && item_line_blank(line, len))
			continue;
		return item_line_parse(line, len, status, item, message, size) == 0 ? ITEM_LINE_GOOD : ITEM_LINE_BAD;
	}
	return ITEM_LINE_END;
}

/* Frees what item_line_parse kept. */
void
item_line_free(ItemLine *item)
{
	free(item->printed);
	memset(item, 0, sizeof(ItemLine));
}
