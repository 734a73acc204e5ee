/*
 * string_hash.h — FNV-1a of a C string, for the gateway's small hash
 * tables (the key cache's key ids, the shard map's table names).
 */
#ifndef DDB_GATEWAY_STRING_HASH_H
#define DDB_GATEWAY_STRING_HASH_H

/* FNV-1a of a string. */
static inline unsigned
string_hash(const char *text)
{
	unsigned	h = 2166136261u;

	for (const unsigned char *c = (const unsigned char *) text; *c; c++)
		h = (h ^ *c) * 16777619u;
	return h;
}

#endif
