/*
 * key_tuple.h — tuple keys: several typed key values in one ddb_key, the
 * keys of multi-attribute GSIs (docs/tables.md), in plain C.
 *
 * A tuple is the tag KEY_TAG_TUPLE followed by its elements in order; an
 * element is an encoded key (key_codec.h) whose payload has each 0x00 byte
 * written as 0x00 0xFF, closed by 0x00 0x00.  The escape keeps the order of
 * the payloads and makes each element end where its terminator is, so that
 * memcmp orders tuples element by element, in DynamoDB's order for each.
 * Tuples are compared only with tuples: a GSI column holds one or the other.
 *
 * Text form: \( then each element's text form (key_codec.h) preceded by its
 * length in bytes and a colon, separated by commas, then ).  For example
 * \(6:USER#1,4:\d42) is the tuple of the string USER#1 and the number 42.
 */
#ifndef DDB_KEY_TUPLE_H
#define DDB_KEY_TUPLE_H

#include "key_codec.h"

/* The tag of a tuple: after every single key's, and after KEY_TAG_ABOVE_ALL. */
#define KEY_TAG_TUPLE 0x05

/* A multi-attribute key has up to four attributes on each side. */
#define KEY_TUPLE_MAX_ELEMENTS 4

/* Largest encoded element: a tag, a payload of zeros each escaped, the terminator. */
#define KEY_TUPLE_MAX_ELEMENT (1 + 2 * KEY_MAX_BYTES + 2)
/* Largest encoded tuple. */
#define KEY_TUPLE_MAX_ENCODED (1 + KEY_TUPLE_MAX_ELEMENTS * KEY_TUPLE_MAX_ELEMENT)
/* Longest text form of a tuple: \( ), and per element its text (a B in hex at most), length, colon and comma. */
#define KEY_TUPLE_MAX_TEXT (3 + KEY_TUPLE_MAX_ELEMENTS * (2 * KEY_MAX_BYTES + 2 + 8))

/*
 * Appends one encoded key (enc, len) as an element to out, which must hold
 * KEY_TUPLE_MAX_ELEMENT bytes; returns the bytes written.  An open element
 * has no terminator: tuples whose element begins with this key's payload
 * begin with it (the bound of begins_with on the last attribute).
 */
extern size_t key_tuple_append(const uint8_t *enc, size_t len, bool open, uint8_t *out);

/*
 * Reads the element of tuple (len bytes, tag included) at *pos into out
 * (KEY_MAX_ENCODED bytes) as an encoded key and advances *pos past it.
 * Returns false when the bytes there are not a closed element.
 */
extern bool key_tuple_next(const uint8_t *tuple, size_t len, size_t *pos,
						   uint8_t *out, size_t *outlen);

/* Checks that an encoded tuple is well formed: one to four valid, canonical elements. */
extern KeyStatus key_tuple_validate(const uint8_t *enc, size_t len);

/* Parses the text form of a tuple (it starts with \( ) into out (KEY_TUPLE_MAX_ENCODED bytes). */
extern KeyStatus key_tuple_parse_text(const char *str, size_t len, uint8_t *out, size_t *outlen);

/* Writes the text form of a valid tuple into out (KEY_TUPLE_MAX_TEXT bytes); returns its length. */
extern size_t key_tuple_format_text(const uint8_t *enc, size_t len, char *out);

#endif							/* DDB_KEY_TUPLE_H */
