/*
 * key_prefix.c — DynamoDB's begins_with (operator ^@), the segment-aware
 * prefix (operator <@), and the range bounds that turn both into index scans.
 */
#include "postgres.h"

#include "ddb_key.h"
#include "key_prefix.h"

PG_FUNCTION_INFO_V1(ddb_key_begins_with);
PG_FUNCTION_INFO_V1(ddb_key_begins_with_segments);
PG_FUNCTION_INFO_V1(ddb_key_prefix_upper_bound);
PG_FUNCTION_INFO_V1(ddb_key_segment_prefix_upper_bound);

/* Raises unless prefix can be a begins_with operand (S or B). */
static inline void
check_prefix(struct varlena *prefix)
{
	if (DDB_KEY_TAG(prefix) == KEY_TAG_N)
		ddb_key_report_number_prefix();
}

/* A prefix test of the key (argument 0) against the prefix (argument 1), which must be S or B. */
static Datum
prefix_test(FunctionCallInfo fcinfo, bool (*test) (const uint8_t *, size_t, const uint8_t *, size_t))
{
	struct varlena *key = PG_GETARG_DDB_KEY_PP(0);
	struct varlena *prefix = PG_GETARG_DDB_KEY_PP(1);

	check_prefix(prefix);
	PG_RETURN_BOOL(test(DDB_KEY_DATA(key), DDB_KEY_LEN(key), DDB_KEY_DATA(prefix), DDB_KEY_LEN(prefix)));
}

/* ddb.begins_with(key, prefix) and ^@: DynamoDB's byte prefix test. */
Datum
ddb_key_begins_with(PG_FUNCTION_ARGS)
{
	return prefix_test(fcinfo, key_begins_with);
}

/* ddb.begins_with_segments(key, prefix) and <@: whole-segment prefix test. */
Datum
ddb_key_begins_with_segments(PG_FUNCTION_ARGS)
{
	return prefix_test(fcinfo, key_begins_with_segments);
}

/*
 * The exclusive upper bound of the range scanned for a prefix: every key
 * that begins with prefix (segments = false) or lies under it (true) is
 * >= prefix and < the result.
 */
struct varlena *
ddb_key_range_upper(struct varlena *prefix, bool segments)
{
	const uint8_t *enc = DDB_KEY_DATA(prefix);
	size_t		len = DDB_KEY_LEN(prefix);
	uint8_t    *scan = palloc(len + 1);
	uint8_t    *upper = palloc(len + 1);

	check_prefix(prefix);
	memcpy(scan, enc, len);
	/* keys under "A#B" all begin with "A#B#" (or are "A#B" itself) */
	if (segments && enc[len - 1] != KEY_SEGMENT_SEPARATOR)
		scan[len++] = KEY_SEGMENT_SEPARATOR;
	return ddb_key_from_encoded(upper, key_prefix_upper_bound(scan, len, upper));
}

/* ddb.prefix_upper_bound(prefix): upper bound of the ^@ range scan. */
Datum
ddb_key_prefix_upper_bound(PG_FUNCTION_ARGS)
{
	PG_RETURN_POINTER(ddb_key_range_upper(PG_GETARG_DDB_KEY_PP(0), false));
}

/* ddb.segment_prefix_upper_bound(prefix): upper bound of the <@ range scan. */
Datum
ddb_key_segment_prefix_upper_bound(PG_FUNCTION_ARGS)
{
	PG_RETURN_POINTER(ddb_key_range_upper(PG_GETARG_DDB_KEY_PP(0), true));
}
