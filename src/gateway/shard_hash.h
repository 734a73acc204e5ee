/*
 * shard_hash.h — the routing hash of a sharded deployment, computed in the
 * gateway exactly as the router computes it (ddb.ddb_key_route_hash of the
 * key's canonical encoding, src/key/key_compare.c), so that a request of one
 * partition key can go straight to the node of its partition (shard_map.h).
 */
#ifndef DDB_GATEWAY_SHARD_HASH_H
#define DDB_GATEWAY_SHARD_HASH_H

#include <stddef.h>
#include <stdint.h>

/*
 * The routing hash of a DynamoDB key value of type 'S', 'N' or 'B' (B: its
 * base64 text, as in a request): 1 and *hash set, or 0 when the value is no
 * valid key of that type (or a base64 text the gateway does not read alike).
 */
extern int	shard_key_hash(char type, const char *value, size_t len, uint32_t *hash);

#endif
