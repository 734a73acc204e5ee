/*
 * key_tuple_datum.c — tuple keys as datums: built from the single keys of a
 * multi-attribute GSI key (and the bounds of a Query's range over them), and
 * split back into those keys.  The encoding is key_tuple.c's.
 */
#include "postgres.h"

#include "ddb_key.h"
#include "key_tuple.h"

/* Starts an empty tuple. */
void
key_tuple_begin(KeyTupleBuilder *b)
{
	b->buf = palloc(KEY_TUPLE_MAX_ENCODED);
	b->buf[0] = KEY_TAG_TUPLE;
	b->len = 1;
	b->count = 0;
}

/* Appends a single key as the next element (open: without its terminator). */
void
key_tuple_add(KeyTupleBuilder *b, Datum key, bool open)
{
	struct varlena *k = PG_DETOAST_DATUM_PACKED(key);

	if (b->count >= KEY_TUPLE_MAX_ELEMENTS || DDB_KEY_TAG(k) == KEY_TAG_TUPLE)
		elog(ERROR, "ddb_model: a tuple key holds one to four single keys");
	b->len += key_tuple_append(DDB_KEY_DATA(k), DDB_KEY_LEN(k), open, b->buf + b->len);
	b->count++;
}

/* The tuple as a ddb_key, or the exclusive upper bound of the keys that begin with it. */
Datum
key_tuple_datum(const KeyTupleBuilder *b, bool upper)
{
	uint8_t    *bound;

	if (!upper)
		return PointerGetDatum(ddb_key_from_encoded(b->buf, b->len));
	bound = palloc(b->len);
	return PointerGetDatum(ddb_key_from_encoded(bound, key_prefix_upper_bound(b->buf, b->len, bound)));
}

/* Splits a tuple key into its elements. */
int
key_tuple_elements(Datum tuple, Datum *elements, int max)
{
	struct varlena *k = PG_DETOAST_DATUM_PACKED(tuple);
	const uint8_t *enc = DDB_KEY_DATA(k);
	size_t		len = DDB_KEY_LEN(k);
	size_t		pos = 1;
	int			n = 0;
	uint8_t		element[KEY_MAX_ENCODED];
	size_t		elen;

	if (len < 1 || enc[0] != KEY_TAG_TUPLE)
		elog(ERROR, "ddb_model: a multi-attribute index key is not a tuple");
	while (pos < len)
	{
		if (n >= max || !key_tuple_next(enc, len, &pos, element, &elen))
			elog(ERROR, "ddb_model: malformed tuple key");
		elements[n++] = PointerGetDatum(ddb_key_from_encoded(element, elen));
	}
	return n;
}
