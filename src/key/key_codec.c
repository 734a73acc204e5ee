/*
 * key_codec.c — encoding, decoding and text form of ddb_key values.
 *
 * Encoded layout (see key_codec.h): tag byte, then
 *   S: the UTF-8 bytes;  B: the raw bytes;
 *   N: a sign byte (0x01 negative, 0x02 zero, 0x03 positive), then for a
 *      non-zero number a biased exponent byte and the significant digits
 *      packed two per byte.  Negative numbers store the complement of the
 *      exponent and of each digit, pad with 0xF and end with 0xFF, so that
 *      memcmp orders them in reverse magnitude.
 * Plain C: no server calls, so that the fuzzer can link it alone.
 */
#include "key_codec.h"

#include <string.h>

#define NUM_NEGATIVE 0x01
#define NUM_ZERO 0x02
#define NUM_POSITIVE 0x03
#define NUM_NEGATIVE_END 0xFF

static const char hex_digits[] = "0123456789abcdef";

/* A human-readable message for a status. */
const char *
key_status_message(KeyStatus status)
{
	switch (status)
	{
		case KEY_OK:
			return "ok";
		case KEY_EMPTY_STRING:
			return "One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty string value.";
		case KEY_EMPTY_BINARY:
			return "One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty binary value.";
		case KEY_TOO_LONG:
			return "One or more parameter values were invalid: Size of a key value has exceeded the maximum size limit of 2048 bytes";
		case KEY_INVALID_UTF8:
			return "One or more parameter values were invalid: a string key must be valid UTF-8 without NUL characters";
		case KEY_NUMBER_SYNTAX:
			return "A value provided cannot be converted into a number";
		case KEY_NUMBER_PRECISION:
			return "Attempting to store more than 38 significant digits in a Number";
		case KEY_NUMBER_OVERFLOW:
			return "Number overflow. Attempting to store a number with magnitude larger than supported range";
		case KEY_NUMBER_UNDERFLOW:
			return "Number underflow. Attempting to store a number with magnitude smaller than supported range";
		case KEY_BAD_HEX:
			return "invalid binary key: \\x must be followed by an even number of hexadecimal digits";
		case KEY_BAD_ESCAPE:
			return "invalid key text: a leading backslash must start \\\\ (string), \\d (number) or \\x (binary)";
		case KEY_BAD_ENCODING:
			return "invalid encoded key";
		case KEY_SEPARATOR_IN_SEGMENT:
			return "a key segment cannot contain the separator \"#\"";
		case KEY_BAD_TUPLE:
			return "invalid tuple key: the text form is \\( then one to four elements, each its length in bytes, a colon and a key, separated by commas, then )";
	}
	return "unknown key status";
}

/* Length of the valid UTF-8 sequence at s (at most len bytes), or 0 if invalid. */
static size_t
utf8_sequence_length(const uint8_t *s, size_t len)
{
	uint8_t		c = s[0];
	size_t		n;
	uint32_t	cp;

	if (c < 0x80)
		return c == 0 ? 0 : 1;
	if (c >= 0xC2 && c <= 0xDF)
	{
		n = 2;
		cp = c & 0x1F;
	}
	else if (c >= 0xE0 && c <= 0xEF)
	{
		n = 3;
		cp = c & 0x0F;
	}
	else if (c >= 0xF0 && c <= 0xF4)
	{
		n = 4;
		cp = c & 0x07;
	}
	else
		return 0;
	if (len < n)
		return 0;
	for (size_t i = 1; i < n; i++)
	{
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3F);
	}
	/* reject overlong forms, surrogates and code points past U+10FFFF */
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
		(cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
		return 0;
	return n;
}

/* True when s[0..len) is valid UTF-8 without NUL. */
static bool
utf8_is_valid(const uint8_t *s, size_t len)
{
	size_t		i = 0;

	while (i < len)
	{
		size_t		n;

		if (s[i] >= 0x01 && s[i] < 0x80)
		{
			i++;
			continue;
		}
		n = utf8_sequence_length(s + i, len - i);
		if (n == 0)
			return false;
		i += n;
	}
	return true;
}

/* Encodes bytes under a type tag, after DynamoDB's length checks (if_empty: the status of none). */
static KeyStatus
encode_bytes(uint8_t tag, const uint8_t *bytes, size_t len, KeyStatus if_empty, uint8_t *out,
			 size_t *outlen)
{
	if (len == 0)
		return if_empty;
	if (len > KEY_MAX_BYTES)
		return KEY_TOO_LONG;
	out[0] = tag;
	memcpy(out + 1, bytes, len);
	*outlen = len + 1;
	return KEY_OK;
}

/* Encodes a UTF-8 string as an S key. */
KeyStatus
key_encode_string(const char *str, size_t len, uint8_t *out, size_t *outlen)
{
	/* the length checks come first: an empty or too long string is that, whatever its bytes */
	if (len > 0 && len <= KEY_MAX_BYTES && !utf8_is_valid((const uint8_t *) str, len))
		return KEY_INVALID_UTF8;
	return encode_bytes(KEY_TAG_S, (const uint8_t *) str, len, KEY_EMPTY_STRING, out, outlen);
}

/* Encodes raw bytes as a B key. */
KeyStatus
key_encode_binary(const uint8_t *bytes, size_t len, uint8_t *out, size_t *outlen)
{
	return encode_bytes(KEY_TAG_B, bytes, len, KEY_EMPTY_BINARY, out, outlen);
}

/* Packs digits (values 0-9) into the N payload after the exponent byte. */
static size_t
pack_digits(const uint8_t *digits, int ndigits, bool negative, uint8_t *out)
{
	size_t		n = 0;

	for (int i = 0; i < ndigits; i += 2)
	{
		uint8_t		hi = digits[i];
		uint8_t		lo = (i + 1 < ndigits) ? digits[i + 1] : (negative ? 0x0F : 0x00);

		if (negative)
		{
			hi = 9 - hi;
			if (i + 1 < ndigits)
				lo = 9 - lo;
		}
		out[n++] = (uint8_t) ((hi << 4) | lo);
	}
	if (negative)
		out[n++] = NUM_NEGATIVE_END;
	return n;
}

/*
 * Encodes DynamoDB number text as a canonical N key.
 * Grammar: [+-] digits [. digits] [(e|E) [+-] digits], with at least one
 * mantissa digit; leading and trailing zeros are not significant.
 */
KeyStatus
key_encode_number(const char *str, size_t len, uint8_t *out, size_t *outlen)
{
	uint8_t		digits[KEY_MAX_DIGITS];
	int			ndigits = 0;
	long		pending_zeros = 0;	/* zeros seen after a significant digit */
	bool		negative = false;
	bool		seen_digit = false;
	bool		seen_nonzero = false;
	bool		in_fraction = false;
	long		exponent = 0;	/* of the first significant digit */
	long		int_digits_after_first = 0;
	long		frac_leading_zeros = 0;
	size_t		i = 0;

	if (i < len && (str[i] == '+' || str[i] == '-'))
		negative = (str[i++] == '-');

	for (; i < len; i++)
	{
		char		c = str[i];

		if (c == '.')
		{
			if (in_fraction)
				return KEY_NUMBER_SYNTAX;
			in_fraction = true;
			continue;
		}
		if (c < '0' || c > '9')
			break;
		seen_digit = true;
		if (!seen_nonzero)
		{
			if (c == '0')
			{
				if (in_fraction)
					frac_leading_zeros++;
				continue;
			}
			seen_nonzero = true;
			exponent = in_fraction ? -(frac_leading_zeros + 1) : 0;
			digits[ndigits++] = (uint8_t) (c - '0');
			continue;
		}
		if (!in_fraction)
			int_digits_after_first++;
		if (c == '0')
		{
			pending_zeros++;
			continue;
		}
		if (ndigits + pending_zeros + 1 > KEY_MAX_DIGITS)
			return KEY_NUMBER_PRECISION;
		while (pending_zeros > 0)
		{
			digits[ndigits++] = 0;
			pending_zeros--;
		}
		digits[ndigits++] = (uint8_t) (c - '0');
	}
	if (!seen_digit)
		return KEY_NUMBER_SYNTAX;

	if (i < len)
	{
		long		exp_value = 0;
		bool		exp_negative = false;
		bool		exp_digit = false;

		if (str[i] != 'e' && str[i] != 'E')
			return KEY_NUMBER_SYNTAX;
		i++;
		if (i < len && (str[i] == '+' || str[i] == '-'))
			exp_negative = (str[i++] == '-');
		for (; i < len; i++)
		{
			if (str[i] < '0' || str[i] > '9')
				return KEY_NUMBER_SYNTAX;
			exp_digit = true;
			/* saturate: anything this large is out of range anyway */
			if (exp_value < 1000000)
				exp_value = exp_value * 10 + (str[i] - '0');
		}
		if (!exp_digit)
			return KEY_NUMBER_SYNTAX;
		exponent += exp_negative ? -exp_value : exp_value;
	}

	out[0] = KEY_TAG_N;
	if (!seen_nonzero)
	{
		out[1] = NUM_ZERO;
		*outlen = 2;
		return KEY_OK;
	}
	exponent += int_digits_after_first;
	if (exponent > KEY_MAX_EXPONENT)
		return KEY_NUMBER_OVERFLOW;
	if (exponent < KEY_MIN_EXPONENT)
		return KEY_NUMBER_UNDERFLOW;

	out[1] = negative ? NUM_NEGATIVE : NUM_POSITIVE;
	out[2] = (uint8_t) (exponent - KEY_MIN_EXPONENT);
	if (negative)
		out[2] = (uint8_t) (0xFF - out[2]);
	*outlen = 3 + pack_digits(digits, ndigits, negative, out + 3);
	return KEY_OK;
}

/* Unpacks an encoded N into its sign, exponent and digits; false if malformed. */
static bool
unpack_number(const uint8_t *enc, size_t len, int *sign, int *exponent,
			  uint8_t *digits, int *ndigits)
{
	bool		negative;
	size_t		end;

	*ndigits = 0;
	if (len < 2 || enc[0] != KEY_TAG_N)
		return false;
	if (enc[1] == NUM_ZERO)
	{
		*sign = 0;
		*exponent = 0;
		return len == 2;
	}
	if ((enc[1] != NUM_NEGATIVE && enc[1] != NUM_POSITIVE) || len < 4)
		return false;
	negative = (enc[1] == NUM_NEGATIVE);
	*sign = negative ? -1 : 1;
	*exponent = (negative ? 0xFF - enc[2] : enc[2]) + KEY_MIN_EXPONENT;
	if (*exponent > KEY_MAX_EXPONENT)
		return false;
	end = len;
	if (negative)
	{
		if (enc[len - 1] != NUM_NEGATIVE_END)
			return false;
		end = len - 1;
	}
	for (size_t i = 3; i < end; i++)
	{
		uint8_t		nib[2] = {(uint8_t) (enc[i] >> 4), (uint8_t) (enc[i] & 0x0F)};

		for (int k = 0; k < 2; k++)
		{
			uint8_t		d = nib[k];

			if (k == 1 && i == end - 1 && d == (negative ? 0x0F : 0x00))
				break;			/* padding of an odd digit count */
			if (d > 9)
				return false;
			if (*ndigits >= KEY_MAX_DIGITS)
				return false;
			digits[(*ndigits)++] = negative ? (uint8_t) (9 - d) : d;
		}
	}
	/* canonical: a non-zero first digit and no trailing zero */
	return *ndigits > 0 && digits[0] != 0 && digits[*ndigits - 1] != 0;
}

/* Writes the canonical plain decimal text of an encoded N; returns its length. */
size_t
key_format_number(const uint8_t *enc, size_t len, char *out)
{
	uint8_t		digits[KEY_MAX_DIGITS];
	int			ndigits;
	int			sign;
	int			exponent;
	size_t		n = 0;

	if (!unpack_number(enc, len, &sign, &exponent, digits, &ndigits))
		return 0;
	if (sign == 0)
	{
		out[0] = '0';
		return 1;
	}
	if (sign < 0)
		out[n++] = '-';
	if (exponent < 0)
	{
		out[n++] = '0';
		out[n++] = '.';
		for (int z = 0; z < -exponent - 1; z++)
			out[n++] = '0';
		for (int d = 0; d < ndigits; d++)
			out[n++] = (char) ('0' + digits[d]);
		return n;
	}
	for (int d = 0; d <= exponent || d < ndigits; d++)
	{
		if (d == exponent + 1)
			out[n++] = '.';
		out[n++] = (char) ('0' + (d < ndigits ? digits[d] : 0));
	}
	return n;
}

/* Value of a hexadecimal digit, or -1. */
static int
hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Parses the text form of a key: plain text is S, \d is N, \x is B, \\ escapes. */
KeyStatus
key_parse_text(const char *str, size_t len, uint8_t *out, size_t *outlen)
{
	if (len == 0 || str[0] != KEY_TEXT_ESCAPE)
		return key_encode_string(str, len, out, outlen);
	if (len >= 2 && str[1] == KEY_TEXT_ESCAPE)
		return key_encode_string(str + 1, len - 1, out, outlen);
	if (len >= 2 && str[1] == 'd')
		return key_encode_number(str + 2, len - 2, out, outlen);
	if (len >= 2 && str[1] == 'x')
	{
		size_t		hexlen = len - 2;

		if (hexlen == 0)
			return KEY_EMPTY_BINARY;
		if (hexlen % 2 != 0)
			return KEY_BAD_HEX;
		if (hexlen / 2 > KEY_MAX_BYTES)
			return KEY_TOO_LONG;
		out[0] = KEY_TAG_B;
		for (size_t i = 0; i < hexlen / 2; i++)
		{
			int			hi = hex_value(str[2 + 2 * i]);
			int			lo = hex_value(str[3 + 2 * i]);

			if (hi < 0 || lo < 0)
				return KEY_BAD_HEX;
			out[1 + i] = (uint8_t) ((hi << 4) | lo);
		}
		*outlen = 1 + hexlen / 2;
		return KEY_OK;
	}
	return KEY_BAD_ESCAPE;
}

/* Checks that an encoded key is well formed and canonical. */
KeyStatus
key_validate_encoded(const uint8_t *enc, size_t len)
{
	uint8_t		digits[KEY_MAX_DIGITS];
	int			ndigits;
	int			sign;
	int			exponent;

	if (len < 2)
		return len == 1 && enc[0] == KEY_TAG_B ? KEY_EMPTY_BINARY :
			len == 1 && enc[0] == KEY_TAG_S ? KEY_EMPTY_STRING : KEY_BAD_ENCODING;
	switch (enc[0])
	{
		case KEY_TAG_S:
			if (len - 1 > KEY_MAX_BYTES)
				return KEY_TOO_LONG;
			return utf8_is_valid(enc + 1, len - 1) ? KEY_OK : KEY_INVALID_UTF8;
		case KEY_TAG_B:
			return len - 1 > KEY_MAX_BYTES ? KEY_TOO_LONG : KEY_OK;
		case KEY_TAG_N:
			return unpack_number(enc, len, &sign, &exponent, digits, &ndigits) ?
				KEY_OK : KEY_BAD_ENCODING;
		default:
			return KEY_BAD_ENCODING;
	}
}

/* Upper bound on the length of key_format_text's output. */
size_t
key_text_size(const uint8_t *enc, size_t len)
{
	(void) enc;
	/* hex doubles B; an escape adds two; a number fits KEY_MAX_NUMBER_TEXT */
	return 2 * len + 2 + KEY_MAX_NUMBER_TEXT;
}

/* Writes the text form of an encoded key (inverse of key_parse_text). */
size_t
key_format_text(const uint8_t *enc, size_t len, char *out)
{
	size_t		n = 0;

	switch (enc[0])
	{
		case KEY_TAG_S:
			if (len > 1 && enc[1] == KEY_TEXT_ESCAPE)
				out[n++] = KEY_TEXT_ESCAPE;
			memcpy(out + n, enc + 1, len - 1);
			return n + len - 1;
		case KEY_TAG_N:
			out[n++] = KEY_TEXT_ESCAPE;
			out[n++] = 'd';
			return n + key_format_number(enc, len, out + n);
		case KEY_TAG_B:
			out[n++] = KEY_TEXT_ESCAPE;
			out[n++] = 'x';
			for (size_t i = 1; i < len; i++)
			{
				out[n++] = hex_digits[enc[i] >> 4];
				out[n++] = hex_digits[enc[i] & 0x0F];
			}
			return n;
	}
	return 0;
}

/* True when key begins with prefix (same type, payload byte prefix). */
bool
key_begins_with(const uint8_t *key, size_t keylen,
				const uint8_t *prefix, size_t prefixlen)
{
	return prefixlen <= keylen && memcmp(key, prefix, prefixlen) == 0;
}

/* True when key equals prefix or continues it at a segment boundary. */
bool
key_begins_with_segments(const uint8_t *key, size_t keylen,
						 const uint8_t *prefix, size_t prefixlen)
{
	if (!key_begins_with(key, keylen, prefix, prefixlen))
		return false;
	if (keylen == prefixlen)
		return true;
	/* a prefix that already ends in the separator continues at any byte */
	return prefix[prefixlen - 1] == KEY_SEGMENT_SEPARATOR ||
		key[prefixlen] == KEY_SEGMENT_SEPARATOR;
}

/* Writes the smallest value above every key that begins with prefix. */
size_t
key_prefix_upper_bound(const uint8_t *prefix, size_t prefixlen, uint8_t *out)
{
	size_t		n = prefixlen;

	memcpy(out, prefix, prefixlen);
	/* drop trailing 0xFF bytes, then increment the last one; the tag byte
	 * itself is incremented for an all-0xFF binary prefix */
	while (n > 0 && out[n - 1] == 0xFF)
		n--;
	out[n - 1]++;
	return n;
}

/* Counts the segments of an S payload. */
int
key_segment_count(const uint8_t *payload, size_t len)
{
	int			count = 1;

	for (size_t i = 0; i < len; i++)
		count += (payload[i] == KEY_SEGMENT_SEPARATOR);
	return count;
}

/* Finds segment n (1-based; negative counts from the end) of an S payload. */
bool
key_segment(const uint8_t *payload, size_t len, int n,
			size_t *start, size_t *seglen)
{
	int			count = key_segment_count(payload, len);
	int			want;
	int			seen = 1;
	size_t		s = 0;

	if (n == 0 || n > count || n < -count)
		return false;
	want = n > 0 ? n : count + n + 1;
	for (size_t i = 0; i <= len; i++)
	{
		if (i == len || payload[i] == KEY_SEGMENT_SEPARATOR)
		{
			if (seen == want)
			{
				*start = s;
				*seglen = i - s;
				return true;
			}
			seen++;
			s = i + 1;
		}
	}
	return false;
}
