/*
 * ddb_key.h — the ddb_key varlena as the server sees it.
 *
 * A ddb_key datum is a varlena whose data is an encoded key (key_codec.h).
 */
#ifndef DDB_KEY_H
#define DDB_KEY_H

#include "postgres.h"
#include "fmgr.h"

#include "key_codec.h"

/* Encoded bytes and length of a (possibly short-header) ddb_key varlena. */
#define DDB_KEY_DATA(k) ((const uint8_t *) VARDATA_ANY(k))
#define DDB_KEY_LEN(k) ((size_t) VARSIZE_ANY_EXHDR(k))
#define DDB_KEY_TAG(k) (DDB_KEY_DATA(k)[0])

#define PG_GETARG_DDB_KEY_PP(n) PG_DETOAST_DATUM_PACKED(PG_GETARG_DATUM(n))

/* Builds a ddb_key varlena from encoded bytes. */
extern struct varlena *ddb_key_from_encoded(const uint8_t *enc, size_t len);

/* The OID of type ddb.ddb_key. */
extern Oid	ddb_key_type_oid(void);

/* The routing hash of encoded key bytes (key_compare.c, docs/scale-out.md). */
extern uint32 ddb_key_route_hash_encoded(const uint8_t *enc, size_t len);

/* Raises the error for a codec status other than KEY_OK. */
extern void ddb_key_report(KeyStatus status) pg_attribute_noreturn();

/* Raises the error for begins_with on a number prefix. */
extern void ddb_key_report_number_prefix(void) pg_attribute_noreturn();

/* Builds a tuple key (key_tuple.h) element by element: multi-attribute GSI keys and the bounds of their ranges. */
typedef struct KeyTupleBuilder
{
	uint8_t    *buf;			/* KEY_TUPLE_MAX_ENCODED bytes */
	size_t		len;
	int			count;
} KeyTupleBuilder;

/* Starts an empty tuple. */
extern void key_tuple_begin(KeyTupleBuilder *b);

/* Appends a single key as the next element; an open one is a prefix of the element (begins_with). */
extern void key_tuple_add(KeyTupleBuilder *b, Datum key, bool open);

/* The tuple as a ddb_key; with upper, the smallest key above every key that begins with it. */
extern Datum key_tuple_datum(const KeyTupleBuilder *b, bool upper);

/* Splits a tuple key into its elements (single keys); returns their number. */
extern int	key_tuple_elements(Datum tuple, Datum *elements, int max);

#endif							/* DDB_KEY_H */
