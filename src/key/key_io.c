/*
 * key_io.c — the server adapter of the key codec: text and binary I/O,
 * casts, segment functions, and the codec's errors as ereports.
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "libpq/pqformat.h"
#include "mb/pg_wchar.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/numeric.h"
#include "utils/syscache.h"

#include "../ddb_errors.h"
#include "ddb_key.h"
#include "key_tuple.h"

PG_FUNCTION_INFO_V1(ddb_key_in);
PG_FUNCTION_INFO_V1(ddb_key_out);
PG_FUNCTION_INFO_V1(ddb_key_recv);
PG_FUNCTION_INFO_V1(ddb_key_send);
PG_FUNCTION_INFO_V1(ddb_key_from_text);
PG_FUNCTION_INFO_V1(ddb_key_from_numeric);
PG_FUNCTION_INFO_V1(ddb_key_from_int4);
PG_FUNCTION_INFO_V1(ddb_key_from_int8);
PG_FUNCTION_INFO_V1(ddb_key_from_bytea);
PG_FUNCTION_INFO_V1(ddb_key_to_text);
PG_FUNCTION_INFO_V1(ddb_key_to_numeric);
PG_FUNCTION_INFO_V1(ddb_key_to_bytea);
PG_FUNCTION_INFO_V1(ddb_key_type);
PG_FUNCTION_INFO_V1(ddb_key_from_segments);
PG_FUNCTION_INFO_V1(ddb_key_segment);
PG_FUNCTION_INFO_V1(ddb_key_segment_count);

/* The OID of type ddb.ddb_key (a syscache lookup). */
Oid
ddb_key_type_oid(void)
{
	return GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid, CStringGetDatum("ddb_key"),
						   ObjectIdGetDatum(get_namespace_oid("ddb", false)));
}

/* Raises the error for a codec status other than KEY_OK. */
void
ddb_key_report(KeyStatus status)
{
	ereport(ERROR,
			(errcode(ERRCODE_DDB_VALIDATION),
			 errmsg("%s", key_status_message(status))));
}

/* Raises the error for begins_with on a number prefix. */
void
ddb_key_report_number_prefix(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_DDB_VALIDATION),
			 errmsg("begins_with is not supported for number keys"),
			 errhint("A prefix must be a string (S) or binary (B) key.")));
}

/* Builds a ddb_key varlena from encoded bytes. */
struct varlena *
ddb_key_from_encoded(const uint8_t *enc, size_t len)
{
	struct varlena *result = (struct varlena *) palloc(VARHDRSZ + len);

	SET_VARSIZE(result, VARHDRSZ + len);
	memcpy(VARDATA(result), enc, len);
	return result;
}

/* Converts server-encoded text to UTF-8 (a no-op in a UTF-8 database). */
static const char *
to_utf8(const char *str, size_t *len)
{
	char	   *converted;

	if (GetDatabaseEncoding() == PG_UTF8)
		return str;
	converted = pg_server_to_any(str, (int) *len, PG_UTF8);
	if (converted != str)
		*len = strlen(converted);
	return converted;
}

/* Encodes UTF-8 text as an S key, raising on invalid input. */
static Datum
string_key_datum(const char *str, size_t len)
{
	uint8_t		buf[KEY_MAX_ENCODED];
	size_t		enclen;
	KeyStatus	status;

	if (len > KEY_MAX_BYTES)
		ddb_key_report(KEY_TOO_LONG);
	status = key_encode_string(str, len, buf, &enclen);
	if (status != KEY_OK)
		ddb_key_report(status);
	return PointerGetDatum(ddb_key_from_encoded(buf, enclen));
}

/* Parses the text form of a tuple key (key_tuple.h), raising on invalid input. */
static struct varlena *
tuple_key_in(const char *str, size_t len)
{
	uint8_t    *buf;
	size_t		enclen;
	KeyStatus	status;

	if (len > KEY_TUPLE_MAX_TEXT)
		ddb_key_report(KEY_BAD_TUPLE);
	buf = palloc(KEY_TUPLE_MAX_ENCODED);
	status = key_tuple_parse_text(str, len, buf, &enclen);
	if (status != KEY_OK)
		ddb_key_report(status);
	return ddb_key_from_encoded(buf, enclen);
}

/* ddb_key input: plain text is S; \d<number> is N; \x<hex> is B; \\ escapes. */
Datum
ddb_key_in(PG_FUNCTION_ARGS)
{
	const char *str = PG_GETARG_CSTRING(0);
	size_t		len = strlen(str);
	uint8_t		buf[KEY_MAX_ENCODED];
	size_t		enclen;
	KeyStatus	status;

	str = to_utf8(str, &len);
	if (len >= 2 && str[0] == KEY_TEXT_ESCAPE && str[1] == '(')
		PG_RETURN_POINTER(tuple_key_in(str, len));
	/* the longest valid text is a 2048-byte B in hex, plus its escape */
	if (len > 2 * KEY_MAX_BYTES + 2)
		ddb_key_report(KEY_TOO_LONG);
	status = key_parse_text(str, len, buf, &enclen);
	if (status != KEY_OK)
		ddb_key_report(status);
	PG_RETURN_POINTER(ddb_key_from_encoded(buf, enclen));
}

/* Text form of a key, in the server encoding. */
static char *
key_to_cstring(struct varlena *key)
{
	const uint8_t *enc = DDB_KEY_DATA(key);
	size_t		len = DDB_KEY_LEN(key);
	char	   *out;
	size_t		outlen;

	bool		tuple = len > 0 && enc[0] == KEY_TAG_TUPLE;

	if ((tuple ? key_tuple_validate(enc, len) : key_validate_encoded(enc, len)) != KEY_OK)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("ddb_key value is not a storable key"),
				 errdetail("It is an internal bound used by prefix and range scans.")));
	out = palloc((tuple ? KEY_TUPLE_MAX_TEXT : key_text_size(enc, len)) + 1);
	outlen = tuple ? key_tuple_format_text(enc, len, out) : key_format_text(enc, len, out);
	out[outlen] = '\0';
	if (GetDatabaseEncoding() != PG_UTF8)
		out = pg_any_to_server(out, (int) outlen, PG_UTF8);
	return out;
}

/* ddb_key output: the inverse of ddb_key_in. */
Datum
ddb_key_out(PG_FUNCTION_ARGS)
{
	PG_RETURN_CSTRING(key_to_cstring(PG_GETARG_DDB_KEY_PP(0)));
}

/* Binary receive of a tuple key: its encoded elements, after the tag. */
static struct varlena *
tuple_key_recv(StringInfo msg)
{
	int			nbytes = msg->len - msg->cursor;
	uint8_t    *buf;
	KeyStatus	status;

	if (nbytes > KEY_TUPLE_MAX_ENCODED - 1)
		ddb_key_report(KEY_BAD_TUPLE);
	buf = palloc(nbytes + 1);
	buf[0] = KEY_TAG_TUPLE;
	memcpy(buf + 1, pq_getmsgbytes(msg, nbytes), nbytes);
	status = key_tuple_validate(buf, (size_t) nbytes + 1);
	if (status != KEY_OK)
		ddb_key_report(status == KEY_BAD_ENCODING ? KEY_BAD_TUPLE : status);
	return ddb_key_from_encoded(buf, (size_t) nbytes + 1);
}

/* Binary receive: a tag byte, then the S text, the N text or the B bytes. */
Datum
ddb_key_recv(PG_FUNCTION_ARGS)
{
	StringInfo	msg = (StringInfo) PG_GETARG_POINTER(0);
	int			tag = pq_getmsgbyte(msg);
	uint8_t		buf[KEY_MAX_ENCODED];
	size_t		enclen = 0;
	KeyStatus	status;
	int			nbytes;
	char	   *text;

	switch (tag)
	{
		case KEY_TAG_S:
			text = pq_getmsgtext(msg, msg->len - msg->cursor, &nbytes);
			PG_RETURN_DATUM(string_key_datum(text, (size_t) nbytes));
		case KEY_TAG_N:
			text = pq_getmsgtext(msg, msg->len - msg->cursor, &nbytes);
			status = key_encode_number(text, (size_t) nbytes, buf, &enclen);
			break;
		case KEY_TAG_B:
			nbytes = msg->len - msg->cursor;
			if (nbytes > KEY_MAX_BYTES)
				ddb_key_report(KEY_TOO_LONG);
			status = key_encode_binary((const uint8_t *) pq_getmsgbytes(msg, nbytes),
									   (size_t) nbytes, buf, &enclen);
			break;
		case KEY_TAG_TUPLE:
			PG_RETURN_POINTER(tuple_key_recv(msg));
		default:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
					 errmsg("invalid ddb_key type tag %d in binary input", tag),
					 errhint("The tag is 1 (N), 2 (S), 3 (B) or 5 (a tuple).")));
	}
	if (status != KEY_OK)
		ddb_key_report(status);
	PG_RETURN_POINTER(ddb_key_from_encoded(buf, enclen));
}

/* Binary send: the format ddb_key_recv reads (a tuple's elements are sent encoded). */
Datum
ddb_key_send(PG_FUNCTION_ARGS)
{
	struct varlena *key = PG_GETARG_DDB_KEY_PP(0);
	const uint8_t *enc = DDB_KEY_DATA(key);
	size_t		len = DDB_KEY_LEN(key);
	StringInfoData buf;
	char		number[KEY_MAX_NUMBER_TEXT];

	pq_begintypsend(&buf);
	pq_sendbyte(&buf, enc[0]);
	switch (enc[0])
	{
		case KEY_TAG_S:
			pq_sendtext(&buf, (const char *) enc + 1, (int) len - 1);
			break;
		case KEY_TAG_N:
			pq_sendtext(&buf, number, (int) key_format_number(enc, len, number));
			break;
		default:
			pq_sendbytes(&buf, (const char *) enc + 1, (int) len - 1);
			break;
	}
	PG_RETURN_BYTEA_P(pq_endtypsend(&buf));
}

/* Cast text -> ddb_key: always an S key, whatever the text looks like. */
Datum
ddb_key_from_text(PG_FUNCTION_ARGS)
{
	text	   *t = PG_GETARG_TEXT_PP(0);
	size_t		len = VARSIZE_ANY_EXHDR(t);
	const char *str = to_utf8(VARDATA_ANY(t), &len);

	PG_RETURN_DATUM(string_key_datum(str, len));
}

/* Cast numeric -> ddb_key: an N key, checked against DynamoDB's range. */
Datum
ddb_key_from_numeric(PG_FUNCTION_ARGS)
{
	Numeric		num = PG_GETARG_NUMERIC(0);
	char	   *str;
	uint8_t		buf[KEY_MAX_ENCODED];
	size_t		enclen;
	KeyStatus	status;

	if (numeric_is_nan(num) || numeric_is_inf(num))
		ereport(ERROR,
				(errcode(ERRCODE_DDB_VALIDATION),
				 errmsg("%s", key_status_message(KEY_NUMBER_SYNTAX)),
				 errdetail("NaN and infinity are not DynamoDB numbers.")));
	str = DatumGetCString(DirectFunctionCall1(numeric_out, NumericGetDatum(num)));
	status = key_encode_number(str, strlen(str), buf, &enclen);
	if (status != KEY_OK)
		ddb_key_report(status);
	PG_RETURN_POINTER(ddb_key_from_encoded(buf, enclen));
}

/* Encodes an integer as an N key (always in range). */
static Datum
integer_key_datum(int64 value)
{
	char		str[32];
	uint8_t		buf[KEY_MAX_ENCODED];
	size_t		enclen;

	snprintf(str, sizeof(str), INT64_FORMAT, value);
	if (key_encode_number(str, strlen(str), buf, &enclen) != KEY_OK)
		elog(ERROR, "ddb_model: integer %s did not encode as a number key", str);
	return PointerGetDatum(ddb_key_from_encoded(buf, enclen));
}

/* Cast integer -> ddb_key: an N key. */
Datum
ddb_key_from_int4(PG_FUNCTION_ARGS)
{
	PG_RETURN_DATUM(integer_key_datum(PG_GETARG_INT32(0)));
}

/* Cast bigint -> ddb_key: an N key. */
Datum
ddb_key_from_int8(PG_FUNCTION_ARGS)
{
	PG_RETURN_DATUM(integer_key_datum(PG_GETARG_INT64(0)));
}

/* Cast bytea -> ddb_key: a B key. */
Datum
ddb_key_from_bytea(PG_FUNCTION_ARGS)
{
	bytea	   *b = PG_GETARG_BYTEA_PP(0);
	uint8_t		buf[KEY_MAX_ENCODED];
	size_t		enclen;
	KeyStatus	status;

	if (VARSIZE_ANY_EXHDR(b) > KEY_MAX_BYTES)
		ddb_key_report(KEY_TOO_LONG);
	status = key_encode_binary((const uint8_t *) VARDATA_ANY(b),
							   VARSIZE_ANY_EXHDR(b), buf, &enclen);
	if (status != KEY_OK)
		ddb_key_report(status);
	PG_RETURN_POINTER(ddb_key_from_encoded(buf, enclen));
}

/* Raises the error for a cast from a key of the wrong type. */
static void
report_wrong_type(const char *target, const char *needed)
{
	ereport(ERROR,
			(errcode(ERRCODE_DDB_VALIDATION),
			 errmsg("cannot cast this ddb_key to %s", target),
			 errdetail("Only %s keys convert to %s; use ddb.key_type() to check.",
					   needed, target)));
}

/* Cast ddb_key -> text: the string of an S key or the number of an N key. */
Datum
ddb_key_to_text(PG_FUNCTION_ARGS)
{
	struct varlena *key = PG_GETARG_DDB_KEY_PP(0);
	const uint8_t *enc = DDB_KEY_DATA(key);
	size_t		len = DDB_KEY_LEN(key);
	char		number[KEY_MAX_NUMBER_TEXT];
	const char *str;
	size_t		slen;

	switch (enc[0])
	{
		case KEY_TAG_S:
			str = (const char *) enc + 1;
			slen = len - 1;
			break;
		case KEY_TAG_N:
			str = number;
			slen = key_format_number(enc, len, number);
			break;
		default:
			report_wrong_type("text", "S and N");
	}
	if (GetDatabaseEncoding() != PG_UTF8)
	{
		str = pg_any_to_server(str, (int) slen, PG_UTF8);
		slen = strlen(str);
	}
	PG_RETURN_TEXT_P(cstring_to_text_with_len(str, (int) slen));
}

/* Cast ddb_key -> numeric: the value of an N key. */
Datum
ddb_key_to_numeric(PG_FUNCTION_ARGS)
{
	struct varlena *key = PG_GETARG_DDB_KEY_PP(0);
	char		number[KEY_MAX_NUMBER_TEXT + 1];
	size_t		n;

	if (DDB_KEY_TAG(key) != KEY_TAG_N)
		report_wrong_type("numeric", "N");
	n = key_format_number(DDB_KEY_DATA(key), DDB_KEY_LEN(key), number);
	number[n] = '\0';
	PG_RETURN_DATUM(DirectFunctionCall3(numeric_in, CStringGetDatum(number),
										ObjectIdGetDatum(InvalidOid),
										Int32GetDatum(-1)));
}

/* Cast ddb_key -> bytea: the bytes of a B key. */
Datum
ddb_key_to_bytea(PG_FUNCTION_ARGS)
{
	struct varlena *key = PG_GETARG_DDB_KEY_PP(0);
	size_t		len = DDB_KEY_LEN(key) - 1;
	bytea	   *result;

	if (DDB_KEY_TAG(key) != KEY_TAG_B)
		report_wrong_type("bytea", "B");
	result = (bytea *) palloc(VARHDRSZ + len);
	SET_VARSIZE(result, VARHDRSZ + len);
	memcpy(VARDATA(result), DDB_KEY_DATA(key) + 1, len);
	PG_RETURN_BYTEA_P(result);
}

/* ddb.key_type(key): 'S', 'N', 'B', or 'T' for a tuple. */
Datum
ddb_key_type(PG_FUNCTION_ARGS)
{
	struct varlena *key = PG_GETARG_DDB_KEY_PP(0);

	switch (DDB_KEY_TAG(key))
	{
		case KEY_TAG_S:
			PG_RETURN_TEXT_P(cstring_to_text("S"));
		case KEY_TAG_N:
			PG_RETURN_TEXT_P(cstring_to_text("N"));
		case KEY_TAG_TUPLE:
			PG_RETURN_TEXT_P(cstring_to_text("T"));
		default:
			PG_RETURN_TEXT_P(cstring_to_text("B"));
	}
}

/* The S payload of a key, or an error naming the function that needs it. */
static void
string_payload(struct varlena *key, const char *func,
			   const uint8_t **payload, size_t *len)
{
	if (DDB_KEY_TAG(key) != KEY_TAG_S)
		ereport(ERROR,
				(errcode(ERRCODE_DDB_VALIDATION),
				 errmsg("%s needs a string (S) key", func),
				 errdetail("Only string keys have segments.")));
	*payload = DDB_KEY_DATA(key) + 1;
	*len = DDB_KEY_LEN(key) - 1;
}

/* ddb.key(VARIADIC segments text[]): joins segments with '#' into an S key. */
Datum
ddb_key_from_segments(PG_FUNCTION_ARGS)
{
	ArrayType  *segments = PG_GETARG_ARRAYTYPE_P(0);
	Datum	   *elems;
	bool	   *nulls;
	int			count;
	StringInfoData buf;

	deconstruct_array(segments, TEXTOID, -1, false, TYPALIGN_INT,
					  &elems, &nulls, &count);
	initStringInfo(&buf);
	for (int i = 0; i < count; i++)
	{
		text	   *seg;

		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("key segment %d is null", i + 1)));
		seg = DatumGetTextPP(elems[i]);
		if (memchr(VARDATA_ANY(seg), KEY_SEGMENT_SEPARATOR, VARSIZE_ANY_EXHDR(seg)))
			ereport(ERROR,
					(errcode(ERRCODE_DDB_VALIDATION),
					 errmsg("%s", key_status_message(KEY_SEPARATOR_IN_SEGMENT)),
					 errdetail("Segment %d is \"%s\".", i + 1, text_to_cstring(seg)),
					 errhint("Pass each part as its own segment.")));
		if (i > 0)
			appendStringInfoChar(&buf, KEY_SEGMENT_SEPARATOR);
		appendBinaryStringInfo(&buf, VARDATA_ANY(seg), VARSIZE_ANY_EXHDR(seg));
	}
	{
		size_t		len = (size_t) buf.len;
		const char *str = to_utf8(buf.data, &len);

		PG_RETURN_DATUM(string_key_datum(str, len));
	}
}

/* ddb.segment(key, n): segment n (1-based, negative from the end), or NULL. */
Datum
ddb_key_segment(PG_FUNCTION_ARGS)
{
	struct varlena *key = PG_GETARG_DDB_KEY_PP(0);
	int32		n = PG_GETARG_INT32(1);
	const uint8_t *payload;
	size_t		len;
	size_t		start;
	size_t		seglen;
	const char *str;

	string_payload(key, "ddb.segment", &payload, &len);
	if (!key_segment(payload, len, n, &start, &seglen))
		PG_RETURN_NULL();
	str = (const char *) payload + start;
	if (GetDatabaseEncoding() != PG_UTF8)
	{
		str = pg_any_to_server(str, (int) seglen, PG_UTF8);
		seglen = strlen(str);
	}
	PG_RETURN_TEXT_P(cstring_to_text_with_len(str, (int) seglen));
}

/* ddb.segment_count(key): how many '#'-separated segments an S key has. */
Datum
ddb_key_segment_count(PG_FUNCTION_ARGS)
{
	struct varlena *key = PG_GETARG_DDB_KEY_PP(0);
	const uint8_t *payload;
	size_t		len;

	string_payload(key, "ddb.segment_count", &payload, &len);
	PG_RETURN_INT32(key_segment_count(payload, len));
}
