/*
 * key_codec.h — the ddb_key value codec, in plain C.
 *
 * A key is stored as an "encoded key": one tag byte followed by a payload,
 * chosen so that comparing two encoded keys with memcmp (shorter first on a
 * tie) gives DynamoDB's order.  The codec never calls the server: it writes
 * into caller buffers and reports a status, so that the fuzzer and unit
 * tests can drive it outside PostgreSQL.  src/key/key_io.c is its adapter.
 */
#ifndef DDB_KEY_CODEC_H
#define DDB_KEY_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Tag bytes; their numeric order is the order across types: N < S < B. */
#define KEY_TAG_N 0x01
#define KEY_TAG_S 0x02
#define KEY_TAG_B 0x03
/* Never stored: an exclusive upper bound above every B key (prefix scans). */
#define KEY_TAG_ABOVE_ALL 0x04

/* DynamoDB's limits on one key value. */
#define KEY_MAX_BYTES 2048			/* S (UTF-8 bytes) and B payloads */
#define KEY_MAX_DIGITS 38			/* significant digits of an N */
#define KEY_MIN_EXPONENT (-130)		/* smallest magnitude 1E-130 */
#define KEY_MAX_EXPONENT 125		/* largest magnitude 9.99..E+125 */

/* Largest encoded key: a tag and a 2048-byte payload. */
#define KEY_MAX_ENCODED (1 + KEY_MAX_BYTES)
/* Largest plain text of a number: sign, "0.", 129 zeros, 38 digits. */
#define KEY_MAX_NUMBER_TEXT 176

/* The separator of composite S keys. */
#define KEY_SEGMENT_SEPARATOR '#'

/* The text form's escape: "\x..." is B in hex, "\d..." is N, "\\..." is S. */
#define KEY_TEXT_ESCAPE '\\'

typedef enum KeyStatus
{
	KEY_OK = 0,
	KEY_EMPTY_STRING,
	KEY_EMPTY_BINARY,
	KEY_TOO_LONG,
	KEY_INVALID_UTF8,
	KEY_NUMBER_SYNTAX,
	KEY_NUMBER_PRECISION,
	KEY_NUMBER_OVERFLOW,
	KEY_NUMBER_UNDERFLOW,
	KEY_BAD_HEX,
	KEY_BAD_ESCAPE,
	KEY_BAD_ENCODING,
	KEY_SEPARATOR_IN_SEGMENT,
	KEY_BAD_TUPLE				/* key_tuple.h */
} KeyStatus;

/* A human-readable message for a status (DynamoDB's wording where it has one). */
extern const char *key_status_message(KeyStatus status);

/* Encodes a UTF-8 string as an S key. */
extern KeyStatus key_encode_string(const char *str, size_t len,
								   uint8_t *out, size_t *outlen);

/* Encodes DynamoDB number text ("-1.5e3") as a canonical N key. */
extern KeyStatus key_encode_number(const char *str, size_t len,
								   uint8_t *out, size_t *outlen);

/* Encodes raw bytes as a B key. */
extern KeyStatus key_encode_binary(const uint8_t *bytes, size_t len,
								   uint8_t *out, size_t *outlen);

/* Parses the text form of a key: plain text is S, \d is N, \x is B, \\ escapes. */
extern KeyStatus key_parse_text(const char *str, size_t len,
								uint8_t *out, size_t *outlen);

/* Checks that an encoded key is well formed (for binary receive and the fuzzer). */
extern KeyStatus key_validate_encoded(const uint8_t *enc, size_t len);

/* Writes the canonical plain decimal text of an encoded N; returns its length. */
extern size_t key_format_number(const uint8_t *enc, size_t len, char *out);

/* Upper bound on the length of key_format_text's output for an encoded key. */
extern size_t key_text_size(const uint8_t *enc, size_t len);

/* Writes the text form of an encoded key (inverse of key_parse_text). */
extern size_t key_format_text(const uint8_t *enc, size_t len, char *out);

/* Compares two encoded keys in DynamoDB order: <0, 0 or >0. */
static inline int
key_compare_encoded(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	size_t		n = alen < blen ? alen : blen;
	int			c = n ? __builtin_memcmp(a, b, n) : 0;

	if (c != 0)
		return c;
	return (alen > blen) - (alen < blen);
}

/* True when key begins with prefix (same type, payload byte prefix). */
extern bool key_begins_with(const uint8_t *key, size_t keylen,
							const uint8_t *prefix, size_t prefixlen);

/* True when key equals prefix or continues it at a segment boundary. */
extern bool key_begins_with_segments(const uint8_t *key, size_t keylen,
									 const uint8_t *prefix, size_t prefixlen);

/*
 * Writes the smallest encoded value greater than every key that begins with
 * prefix (an exclusive upper bound for range scans); returns its length.
 * out must hold prefixlen bytes.
 */
extern size_t key_prefix_upper_bound(const uint8_t *prefix, size_t prefixlen,
									 uint8_t *out);

/* Counts the segments of an S payload. */
extern int	key_segment_count(const uint8_t *payload, size_t len);

/*
 * Finds segment n (1-based; negative counts from the end) of an S payload.
 * Returns false when there is no such segment.
 */
extern bool key_segment(const uint8_t *payload, size_t len, int n,
						size_t *start, size_t *seglen);

#endif							/* DDB_KEY_CODEC_H */
