/*
 * shard_hash.c — the routing hash in the gateway (shard_hash.h): the key
 * encoded by the extension's own codec (src/key/key_codec.c, plain C, built
 * into the gateway), then hashed as PostgreSQL's hash partitioning hashes
 * one column: hash_bytes_extended with the partitioning seed (libpgcommon,
 * PostgreSQL's own code), combined as partbounds.c combines it, cut to 32
 * bits.  test/shard_direct.sh compares it with the router's for many keys.
 */
#include "postgres_fe.h"

#include "common/hashfn.h"

#include "../key/key_codec.h"
#include "shard_hash.h"

/* catalog/partition.h's HASH_PARTITION_SEED, a server header's */
#define SHARD_PARTITION_SEED UINT64CONST(0x7A5B22367996DCFD)

/* The value of a base64 digit, or -1. */
static int
base64_digit(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	return c == '+' ? 62 : c == '/' ? 63 : -1;
}

/* Decodes padded base64 (no whitespace) into out (len * 3 / 4 bytes at most): the bytes, or -1. */
static int
base64_decode(const char *text, size_t len, uint8_t *out)
{
	size_t		n = 0;
	size_t		pad = 0;

	if (len % 4 != 0)
		return -1;
	while (pad < 2 && pad < len && text[len - 1 - pad] == '=')
		pad++;
	for (size_t i = 0; i < len; i += 4)
	{
		uint32_t	group = 0;

		for (size_t j = 0; j < 4; j++)
		{
			int			d = i + j >= len - pad ? 0 : base64_digit(text[i + j]);

			if (d < 0)
				return -1;
			group = group << 6 | (uint32_t) d;
		}
		out[n++] = (uint8_t) (group >> 16);
		if (i + 4 < len || pad < 2)
			out[n++] = (uint8_t) (group >> 8);
		if (i + 4 < len || pad < 1)
			out[n++] = (uint8_t) group;
	}
	return (int) n;
}

/* The routing hash of a key value of a type; see shard_hash.h. */
int
shard_key_hash(char type, const char *value, size_t len, uint32_t *hash)
{
	uint8_t		enc[KEY_MAX_ENCODED];
	size_t		enclen;
	KeyStatus	status;
	uint64		h;

	if (type == 'S')
		status = key_encode_string(value, len, enc, &enclen);
	else if (type == 'N')
		status = key_encode_number(value, len, enc, &enclen);
	else if (type == 'B')
	{
		uint8_t		bytes[KEY_MAX_BYTES + 3];
		int			n = len <= (KEY_MAX_BYTES + 2) / 3 * 4 ? base64_decode(value, len, bytes) : -1;

		if (n < 0)
			return 0;
		status = key_encode_binary(bytes, (size_t) n, enc, &enclen);
	}
	else
		return 0;
	if (status != KEY_OK)
		return 0;
	h = hash_bytes_extended(enc, (int) enclen, SHARD_PARTITION_SEED);
	*hash = (uint32_t) hash_combine64(0, h);
	return 1;
}
