/*
 * key_attribute.c — a key attribute's DynamoDB value as a request carries
 * it ({"S": text}, {"N": text}, {"B": base64}), encoded as a ddb_key,
 * without raising: what the router routes a request by (src/router/route.c)
 * and what a node's fence checks a request sent straight to it by
 * (src/execute/direct.c), so that both read a key alike.  B is decoded as
 * the item codec decodes it (pg_b64_decode).
 */
#include "postgres.h"

#include "common/base64.h"

#include "key_attribute.h"

/* The text of a one-member AttributeValue object of type ({"S": "..."}); false for anything else. */
static bool
attribute_text(JsonbValue *av, char type, char **str, int *len)
{
	JsonbIterator *it;
	JsonbValue	k;
	JsonbValue	v;

	if (av == NULL || av->type != jbvBinary || !JsonContainerIsObject(av->val.binary.data) ||
		JsonContainerSize(av->val.binary.data) != 1)
		return false;
	it = JsonbIteratorInit(av->val.binary.data);
	(void) JsonbIteratorNext(&it, &k, false);	/* WJB_BEGIN_OBJECT */
	if (JsonbIteratorNext(&it, &k, true) != WJB_KEY || k.val.string.len != 1 || k.val.string.val[0] != type)
		return false;
	if (JsonbIteratorNext(&it, &v, true) != WJB_VALUE || v.type != jbvString)
		return false;
	*str = v.val.string.val;
	*len = v.val.string.len;
	return true;
}

/* Encodes av, a key attribute's value of type (S, N or B), into enc; false when it is no valid key of that type. */
bool
key_attribute_encode(JsonbValue *av, char type, uint8_t *enc, size_t *enclen)
{
	char	   *str;
	int			len;
	KeyStatus	status;

	if (!attribute_text(av, type, &str, &len))
		return false;
	if (type == 'S')
		status = key_encode_string(str, (size_t) len, enc, enclen);
	else if (type == 'N')
		status = key_encode_number(str, (size_t) len, enc, enclen);
	else if (type == 'B')
	{
		int			max = pg_b64_dec_len(len);
		char	   *bytes = palloc(max > 0 ? max : 1);
		int			n = pg_b64_decode(str, len, bytes, max);

		status = n < 0 ? KEY_BAD_ENCODING : key_encode_binary((const uint8_t *) bytes, (size_t) n, enc, enclen);
		pfree(bytes);
	}
	else
		return false;
	return status == KEY_OK;
}
