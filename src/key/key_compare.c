/*
 * key_compare.c — DynamoDB ordering of ddb_key: comparison operators, the
 * btree comparator and sort support, and the hash functions.
 *
 * The encoding makes every comparison a memcmp (key_codec.h), so these are
 * thin wrappers; equality is byte equality, which is what lets btree
 * deduplicate (btequalimage) and hash use hash_any.
 */
#include "postgres.h"

#include "catalog/partition.h"
#include "common/hashfn.h"
#include "utils/sortsupport.h"

#include "ddb_key.h"

PG_FUNCTION_INFO_V1(ddb_key_cmp);
PG_FUNCTION_INFO_V1(ddb_key_lt);
PG_FUNCTION_INFO_V1(ddb_key_le);
PG_FUNCTION_INFO_V1(ddb_key_eq);
PG_FUNCTION_INFO_V1(ddb_key_ne);
PG_FUNCTION_INFO_V1(ddb_key_ge);
PG_FUNCTION_INFO_V1(ddb_key_gt);
PG_FUNCTION_INFO_V1(ddb_key_sortsupport);
PG_FUNCTION_INFO_V1(ddb_key_hash);
PG_FUNCTION_INFO_V1(ddb_key_hash_extended);
PG_FUNCTION_INFO_V1(ddb_key_route_hash);

/* Compares two ddb_key varlenas in DynamoDB order. */
static inline int
compare_keys(struct varlena *a, struct varlena *b)
{
	return key_compare_encoded(DDB_KEY_DATA(a), DDB_KEY_LEN(a),
							   DDB_KEY_DATA(b), DDB_KEY_LEN(b));
}

/* Compares the two ddb_key arguments, freeing detoasted copies. */
static inline int
compare_args(FunctionCallInfo fcinfo)
{
	struct varlena *a = PG_GETARG_DDB_KEY_PP(0);
	struct varlena *b = PG_GETARG_DDB_KEY_PP(1);
	int			c = compare_keys(a, b);

	PG_FREE_IF_COPY(a, 0);
	PG_FREE_IF_COPY(b, 1);
	return c;
}

/* btree support function 1. */
Datum
ddb_key_cmp(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(compare_args(fcinfo));
}

/* Operator <. */
Datum
ddb_key_lt(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(compare_args(fcinfo) < 0);
}

/* Operator <=. */
Datum
ddb_key_le(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(compare_args(fcinfo) <= 0);
}

/* Operator =. */
Datum
ddb_key_eq(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(compare_args(fcinfo) == 0);
}

/* Operator <>. */
Datum
ddb_key_ne(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(compare_args(fcinfo) != 0);
}

/* Operator >=. */
Datum
ddb_key_ge(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(compare_args(fcinfo) >= 0);
}

/* Operator >. */
Datum
ddb_key_gt(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(compare_args(fcinfo) > 0);
}

/* Sort comparator: the same order without the fmgr call per comparison. */
static int
ddb_key_fastcmp(Datum x, Datum y, SortSupport ssup)
{
	struct varlena *a = PG_DETOAST_DATUM_PACKED(x);
	struct varlena *b = PG_DETOAST_DATUM_PACKED(y);
	int			c = compare_keys(a, b);

	if ((Pointer) a != DatumGetPointer(x))
		pfree(a);
	if ((Pointer) b != DatumGetPointer(y))
		pfree(b);
	return c;
}

/* btree support function 2: installs the fast comparator. */
Datum
ddb_key_sortsupport(PG_FUNCTION_ARGS)
{
	SortSupport ssup = (SortSupport) PG_GETARG_POINTER(0);

	ssup->comparator = ddb_key_fastcmp;
	PG_RETURN_VOID();
}

/* hash support function 1: a hash of the encoded bytes. */
Datum
ddb_key_hash(PG_FUNCTION_ARGS)
{
	struct varlena *key = PG_GETARG_DDB_KEY_PP(0);
	Datum		h = hash_any(DDB_KEY_DATA(key), (int) DDB_KEY_LEN(key));

	PG_FREE_IF_COPY(key, 0);
	return h;
}

/* hash support function 2: the seeded 64-bit hash. */
Datum
ddb_key_hash_extended(PG_FUNCTION_ARGS)
{
	struct varlena *key = PG_GETARG_DDB_KEY_PP(0);
	Datum		h = hash_any_extended(DDB_KEY_DATA(key), (int) DDB_KEY_LEN(key),
									  PG_GETARG_INT64(1));

	PG_FREE_IF_COPY(key, 0);
	return h;
}

/*
 * The routing hash of encoded key bytes: the 64-bit value PostgreSQL's hash
 * partitioning computes for a table partitioned by this key alone (the
 * seeded hash combined as partbounds.c combines one column), cut to its low
 * 32 bits.  For a power of two n, hash & (n - 1), which is how PL/Proxy
 * picks a partition, is then the hash partition of n that holds the key.
 */
uint32
ddb_key_route_hash_encoded(const uint8_t *enc, size_t len)
{
	uint64		h = DatumGetUInt64(hash_any_extended(enc, (int) len, HASH_PARTITION_SEED));

	return (uint32) hash_combine64(0, h);
}

/* ddb.ddb_key_route_hash(key): the routing hash of a sharded deployment (docs/scale-out.md). */
Datum
ddb_key_route_hash(PG_FUNCTION_ARGS)
{
	struct varlena *key = PG_GETARG_DDB_KEY_PP(0);
	uint32		h = ddb_key_route_hash_encoded(DDB_KEY_DATA(key), DDB_KEY_LEN(key));

	PG_FREE_IF_COPY(key, 0);
	PG_RETURN_INT32((int32) h);
}
