/*
 * key_attribute.h — a key attribute's DynamoDB value in a request, encoded
 * as a ddb_key (key_attribute.c).
 */
#ifndef DDB_KEY_ATTRIBUTE_H
#define DDB_KEY_ATTRIBUTE_H

#include "utils/jsonb.h"

#include "key_codec.h"

extern bool key_attribute_encode(JsonbValue *av, char type, uint8_t *enc, size_t *enclen);

#endif							/* DDB_KEY_ATTRIBUTE_H */
