/*
 * key_tuple.c — tuple keys (key_tuple.h): the elements of a multi-attribute
 * GSI key in one order-preserving ddb_key, and their text form.  Plain C,
 * like key_codec.c.
 */
#include "key_tuple.h"

#include <string.h>

/* The escape of a 0x00 payload byte, and the terminator of an element. */
#define TUPLE_ZERO 0x00
#define TUPLE_ESCAPED_ZERO 0xFF
#define TUPLE_END 0x00

/* Appends one encoded key as an element (open: without its terminator). */
size_t
key_tuple_append(const uint8_t *enc, size_t len, bool open, uint8_t *out)
{
	size_t		n = 0;

	out[n++] = enc[0];
	for (size_t i = 1; i < len; i++)
	{
		out[n++] = enc[i];
		if (enc[i] == TUPLE_ZERO)
			out[n++] = TUPLE_ESCAPED_ZERO;
	}
	if (!open)
	{
		out[n++] = TUPLE_ZERO;
		out[n++] = TUPLE_END;
	}
	return n;
}

/* Reads the element at *pos into out as an encoded key; false if malformed. */
bool
key_tuple_next(const uint8_t *tuple, size_t len, size_t *pos, uint8_t *out, size_t *outlen)
{
	size_t		i = *pos;
	size_t		n = 0;

	if (i >= len)
		return false;
	out[n++] = tuple[i++];
	while (i < len)
	{
		uint8_t		c = tuple[i++];

		if (c == TUPLE_ZERO)
		{
			if (i >= len)
				return false;
			if (tuple[i] == TUPLE_END)
			{
				*pos = i + 1;
				*outlen = n;
				return true;
			}
			if (tuple[i] != TUPLE_ESCAPED_ZERO)
				return false;
			i++;
		}
		if (n >= KEY_MAX_ENCODED)
			return false;
		out[n++] = c;
	}
	return false;
}

/* Checks an encoded tuple: the tag, then one to four valid elements. */
KeyStatus
key_tuple_validate(const uint8_t *enc, size_t len)
{
	uint8_t		element[KEY_MAX_ENCODED];
	size_t		elen;
	size_t		pos = 1;
	int			count = 0;

	if (len < 1 || enc[0] != KEY_TAG_TUPLE)
		return KEY_BAD_ENCODING;
	while (pos < len)
	{
		KeyStatus	status;

		if (++count > KEY_TUPLE_MAX_ELEMENTS || !key_tuple_next(enc, len, &pos, element, &elen))
			return KEY_BAD_ENCODING;
		status = key_validate_encoded(element, elen);
		if (status != KEY_OK)
			return status;
	}
	return count > 0 ? KEY_OK : KEY_BAD_ENCODING;
}

/* Parses the text form \(len:key,len:key) into an encoded tuple. */
KeyStatus
key_tuple_parse_text(const char *str, size_t len, uint8_t *out, size_t *outlen)
{
	uint8_t		element[KEY_MAX_ENCODED];
	size_t		elen;
	size_t		i = 2;
	size_t		n = 0;
	int			count = 0;

	if (len < 3 || str[0] != KEY_TEXT_ESCAPE || str[1] != '(' || str[len - 1] != ')')
		return KEY_BAD_TUPLE;
	out[n++] = KEY_TAG_TUPLE;
	for (;;)
	{
		size_t		textlen = 0;
		KeyStatus	status;

		if (++count > KEY_TUPLE_MAX_ELEMENTS || i >= len || str[i] < '0' || str[i] > '9')
			return KEY_BAD_TUPLE;
		while (i < len && str[i] >= '0' && str[i] <= '9')
		{
			textlen = textlen * 10 + (size_t) (str[i++] - '0');
			if (textlen > len)
				return KEY_BAD_TUPLE;
		}
		if (i >= len || str[i++] != ':' || textlen > len - 1 - i)
			return KEY_BAD_TUPLE;
		status = key_parse_text(str + i, textlen, element, &elen);
		if (status != KEY_OK)
			return status;
		n += key_tuple_append(element, elen, false, out + n);
		i += textlen;
		if (str[i] == ')' && i == len - 1)
			break;
		if (str[i++] != ',')
			return KEY_BAD_TUPLE;
	}
	*outlen = n;
	return KEY_OK;
}

/* Writes the text form of a valid tuple. */
size_t
key_tuple_format_text(const uint8_t *enc, size_t len, char *out)
{
	uint8_t		element[KEY_MAX_ENCODED];
	size_t		elen;
	size_t		pos = 1;
	size_t		n = 0;

	out[n++] = KEY_TEXT_ESCAPE;
	out[n++] = '(';
	while (pos < len && key_tuple_next(enc, len, &pos, element, &elen))
	{
		char		text[2 * KEY_MAX_BYTES + 2 + KEY_MAX_NUMBER_TEXT];
		size_t		textlen = key_format_text(element, elen, text);
		char		digits[24];
		int			ndigits = 0;

		if (n > 2)
			out[n++] = ',';
		for (size_t rest = textlen; rest > 0 || ndigits == 0; rest /= 10)
			digits[ndigits++] = (char) ('0' + rest % 10);
		while (ndigits > 0)
			out[n++] = digits[--ndigits];
		out[n++] = ':';
		memcpy(out + n, text, textlen);
		n += textlen;
	}
	out[n++] = ')';
	return n;
}
