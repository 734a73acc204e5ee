/*
 * route_hash.c — prints the gateway's routing hash (src/gateway/shard_hash.c)
 * of each line "TYPE<TAB>VALUE" of its input (VALUE as in a request: an S's
 * text, an N's digits, a B's base64), as a signed 32-bit integer as the
 * router's SQL gives it, or "invalid"; test/shard_direct.sh compares them.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../../src/gateway/shard_hash.h"

int
main(void)
{
	char		line[16384];

	while (fgets(line, sizeof(line), stdin))
	{
		size_t		len = strcspn(line, "\n");
		uint32_t	hash;

		if (len < 2 || line[1] != '\t')
			return 1;
		if (shard_key_hash(line[0], line + 2, len - 2, &hash))
			printf("%d\n", (int32_t) hash);
		else
			printf("invalid\n");
	}
	return 0;
}
