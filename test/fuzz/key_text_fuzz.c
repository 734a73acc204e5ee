/*
 * key_text_fuzz.c — libFuzzer harness for the ddb_key codec (key_codec.c).
 *
 * Feeds the raw input to key_parse_text, key_encode_number,
 * key_validate_encoded and key_encode_binary, and the two halves of the input
 * to key_parse_text as a pair, and aborts when an invariant of the codec does
 * not hold.  Every buffer is allocated at the size the codec's contract
 * promises, so that AddressSanitizer reports a write or read one byte past
 * it.  Build with test/fuzz/build.sh.
 */
#include "key_codec.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reports a broken invariant on stderr and aborts (libFuzzer saves the input). */
#define CHECK(cond) \
	do { \
		if (!(cond)) \
		{ \
			fprintf(stderr, "key_text_fuzz: invariant failed at line %d: %s\n", \
					__LINE__, #cond); \
			abort(); \
		} \
	} while (0)

/* A parsed key: its status and, when KEY_OK, its encoded bytes. */
typedef struct ParsedKey
{
	KeyStatus	status;
	uint8_t    *enc;
	size_t		len;
} ParsedKey;

/* Returns a heap copy of n bytes (at least one byte allocated). */
static char *
copy_bytes(const uint8_t *data, size_t n)
{
	char	   *p = malloc(n ? n : 1);

	CHECK(p != NULL);
	if (n)
		memcpy(p, data, n);
	return p;
}

/* Returns -1, 0 or 1 for the sign of c. */
static int
sign_of(int c)
{
	return (c > 0) - (c < 0);
}

/* Parses text of length n into a freshly allocated KEY_MAX_ENCODED buffer. */
static ParsedKey
parse_key(const uint8_t *data, size_t n)
{
	ParsedKey	k;
	char	   *text = copy_bytes(data, n);

	k.enc = malloc(KEY_MAX_ENCODED);
	CHECK(k.enc != NULL);
	k.len = 0;
	k.status = key_parse_text(text, n, k.enc, &k.len);
	/* a success yields a tagged key that fits the maximum encoded size */
	if (k.status == KEY_OK)
		CHECK(k.len >= 2 && k.len <= KEY_MAX_ENCODED);
	free(text);
	return k;
}

/* Checks that formatting an N key and encoding the text again gives the same bytes. */
static void
check_number_round_trip(const uint8_t *enc, size_t len)
{
	char	   *text = malloc(KEY_MAX_NUMBER_TEXT);
	uint8_t    *again = malloc(KEY_MAX_ENCODED);
	size_t		textlen;
	size_t		againlen = 0;

	CHECK(text != NULL && again != NULL);
	/* the canonical text is non-empty and within its documented maximum */
	textlen = key_format_number(enc, len, text);
	CHECK(textlen > 0 && textlen <= KEY_MAX_NUMBER_TEXT);
	/* re-encoding the canonical text reproduces the key byte for byte */
	CHECK(key_encode_number(text, textlen, again, &againlen) == KEY_OK);
	CHECK(againlen == len && memcmp(again, enc, len) == 0);
	free(again);
	free(text);
}

/* Checks that key_format_text then key_parse_text reproduces the key. */
static void
check_text_round_trip(const uint8_t *enc, size_t len)
{
	size_t		cap = key_text_size(enc, len);
	char	   *text = malloc(cap);
	uint8_t    *again = malloc(KEY_MAX_ENCODED);
	size_t		textlen;
	size_t		againlen = 0;

	CHECK(text != NULL && again != NULL);
	/* the text fits the size key_text_size promised */
	textlen = key_format_text(enc, len, text);
	CHECK(textlen > 0 && textlen <= cap);
	/* parsing the text gives back the same encoded bytes */
	CHECK(key_parse_text(text, textlen, again, &againlen) == KEY_OK);
	CHECK(againlen == len && memcmp(again, enc, len) == 0);
	free(again);
	free(text);
}

/* Checks the prefix upper bound of an S or B key against the key itself. */
static void
check_prefix_bound(const uint8_t *enc, size_t len)
{
	uint8_t    *ub = malloc(len);
	size_t		ublen;

	CHECK(ub != NULL);
	/* a key begins with itself */
	CHECK(key_begins_with(enc, len, enc, len));
	CHECK(key_begins_with_segments(enc, len, enc, len));
	/* the bound is non-empty, no longer than the key, and above it */
	ublen = key_prefix_upper_bound(enc, len, ub);
	CHECK(ublen >= 1 && ublen <= len);
	CHECK(key_compare_encoded(enc, len, ub, ublen) < 0);
	/* the bound is not itself a key beginning with the prefix */
	CHECK(!key_begins_with(ub, ublen, enc, len));
	free(ub);
}

/* Checks key_segment_count and key_segment on an S payload. */
static void
check_segments(const uint8_t *payload, size_t len)
{
	int			count = key_segment_count(payload, len);
	size_t		total = 0;
	size_t		start;
	size_t		seglen;

	/* count is one more than the number of separators */
	CHECK(count >= 1 && (size_t) count <= len + 1);
	/* no segment 0, count+1 or -(count+1) */
	CHECK(!key_segment(payload, len, 0, &start, &seglen));
	CHECK(!key_segment(payload, len, count + 1, &start, &seglen));
	CHECK(!key_segment(payload, len, -count - 1, &start, &seglen));
	for (int n = 1; n <= count; n++)
	{
		size_t		s2;
		size_t		l2;

		/* segment n exists, lies inside the payload and holds no separator */
		CHECK(key_segment(payload, len, n, &start, &seglen));
		CHECK(start <= len && seglen <= len - start);
		CHECK(memchr(payload + start, KEY_SEGMENT_SEPARATOR, seglen) == NULL);
		/* it ends at the payload's end or at a separator */
		CHECK(start + seglen == len || payload[start + seglen] == KEY_SEGMENT_SEPARATOR);
		/* segment n counted from the end is the same segment */
		CHECK(key_segment(payload, len, n - count - 1, &s2, &l2));
		CHECK(s2 == start && l2 == seglen);
		total += seglen;
	}
	/* the segments and their separators cover the whole payload */
	CHECK(total + (size_t) (count - 1) == len);
}

/* Runs every single-key invariant on a successfully parsed key. */
static void
check_key(const uint8_t *enc, size_t len)
{
	/* what the parser produced is a valid, canonical encoded key */
	CHECK(key_validate_encoded(enc, len) == KEY_OK);
	CHECK(key_compare_encoded(enc, len, enc, len) == 0);
	check_text_round_trip(enc, len);
	switch (enc[0])
	{
		case KEY_TAG_N:
			check_number_round_trip(enc, len);
			break;
		case KEY_TAG_S:
			check_prefix_bound(enc, len);
			check_segments(enc + 1, len - 1);
			break;
		case KEY_TAG_B:
			check_prefix_bound(enc, len);
			break;
		default:
			CHECK(!"unknown tag on a parsed key");
	}
}

/* Checks ordering and prefix consistency of a with respect to prefix b. */
static void
check_prefix_pair(const ParsedKey *a, const ParsedKey *b)
{
	uint8_t    *ub;
	size_t		ublen;

	/* a segment-boundary prefix is a byte prefix that ends at a separator */
	if (key_begins_with_segments(a->enc, a->len, b->enc, b->len))
	{
		CHECK(key_begins_with(a->enc, a->len, b->enc, b->len));
		CHECK(a->len == b->len || b->enc[b->len - 1] == KEY_SEGMENT_SEPARATOR ||
			  a->enc[b->len] == KEY_SEGMENT_SEPARATOR);
	}
	if (!key_begins_with(a->enc, a->len, b->enc, b->len))
		return;
	/* a key that begins with a prefix has its type and is >= it */
	CHECK(a->enc[0] == b->enc[0]);
	CHECK(key_compare_encoded(a->enc, a->len, b->enc, b->len) >= 0);
	if (b->enc[0] != KEY_TAG_S && b->enc[0] != KEY_TAG_B)
		return;
	/* and it is below the prefix's upper bound */
	ub = malloc(b->len);
	CHECK(ub != NULL);
	ublen = key_prefix_upper_bound(b->enc, b->len, ub);
	CHECK(key_compare_encoded(a->enc, a->len, ub, ublen) < 0);
	free(ub);
}

/* Checks that two parsed keys compare antisymmetrically and agree with begins_with. */
static void
check_pair(const ParsedKey *a, const ParsedKey *b)
{
	int			ab = sign_of(key_compare_encoded(a->enc, a->len, b->enc, b->len));
	int			ba = sign_of(key_compare_encoded(b->enc, b->len, a->enc, a->len));
	bool		equal = a->len == b->len && memcmp(a->enc, b->enc, a->len) == 0;

	/* antisymmetric, and zero exactly for identical bytes */
	CHECK(ab == -ba);
	CHECK((ab == 0) == equal);
	/* keys of different types order by tag: N < S < B */
	if (a->enc[0] != b->enc[0])
		CHECK(ab == sign_of((int) a->enc[0] - (int) b->enc[0]));
	check_prefix_pair(a, b);
	check_prefix_pair(b, a);
}

/* Feeds the raw bytes to key_encode_number and checks its round trip. */
static void
check_raw_number(const uint8_t *data, size_t size)
{
	char	   *text = copy_bytes(data, size);
	uint8_t    *enc = malloc(KEY_MAX_ENCODED);
	size_t		len = 0;

	CHECK(enc != NULL);
	if (key_encode_number(text, size, enc, &len) == KEY_OK)
	{
		/* a number always encodes to a valid N key that round-trips */
		CHECK(len >= 2 && len <= KEY_MAX_ENCODED && enc[0] == KEY_TAG_N);
		CHECK(key_validate_encoded(enc, len) == KEY_OK);
		check_number_round_trip(enc, len);
		check_text_round_trip(enc, len);
	}
	free(enc);
	free(text);
}

/* Treats the raw bytes as an encoded key (binary receive) and as B key bytes. */
static void
check_raw_encoded(const uint8_t *data, size_t size)
{
	uint8_t    *enc = (uint8_t *) copy_bytes(data, size);
	uint8_t    *bin = malloc(KEY_MAX_ENCODED);
	size_t		binlen = 0;

	CHECK(bin != NULL);
	/* any encoded key the validator accepts passes every single-key check */
	if (key_validate_encoded(enc, size) == KEY_OK)
		check_key(enc, size);
	/* any 1..2048 bytes make a B key that passes them too */
	if (key_encode_binary(data, size, bin, &binlen) == KEY_OK)
	{
		CHECK(binlen == size + 1 && bin[0] == KEY_TAG_B);
		check_key(bin, binlen);
	}
	else
		CHECK(size == 0 || size > KEY_MAX_BYTES);
	free(bin);
	free(enc);
}

/* libFuzzer entry point: one input, every check. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ParsedKey	whole = parse_key(data, size);
	ParsedKey	first;
	ParsedKey	second;

	if (whole.status == KEY_OK)
		check_key(whole.enc, whole.len);
	/* a failure names a real status with a message */
	CHECK(key_status_message(whole.status) != NULL);
	free(whole.enc);

	check_raw_number(data, size);
	check_raw_encoded(data, size);

	/* the two halves of the input as a pair of keys */
	first = parse_key(data, size / 2);
	second = parse_key(data + size / 2, size - size / 2);
	if (first.status == KEY_OK)
		check_key(first.enc, first.len);
	if (second.status == KEY_OK)
		check_key(second.enc, second.len);
	if (first.status == KEY_OK && second.status == KEY_OK)
		check_pair(&first, &second);
	free(first.enc);
	free(second.enc);
	return 0;
}
