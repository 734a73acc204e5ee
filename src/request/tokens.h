/*
 * tokens.h — the opaque tokens given to clients, sealed with the server's
 * secret for a purpose and opened only when they are exactly what that
 * purpose expects (tokens.c).
 */
#ifndef DDB_TOKENS_H
#define DDB_TOKENS_H

#include "postgres.h"

#include "utils/jsonb.h"

/* A token given to clients, sealed with the server's secret for a purpose. */
extern char *api_token_seal(const char *purpose, const char *payload);

/* The payload of a token sealed for purpose, or NULL when it was edited, forged or sealed for another. */
extern char *api_token_open(const char *purpose, const char *token);

/* A member a token's payload has: its name, its type (jbvObject: an object; jbvNumeric: an integer), whether it may be absent. */
typedef struct TokenMember
{
	const char *name;
	enum jbvType type;
	bool		optional;
} TokenMember;

/*
 * The payload of a token sealed for purpose when it is a JSON object of
 * exactly these members with these types, else NULL.
 */
extern Jsonb *api_token_open_object(const char *purpose, const char *token, const TokenMember *members, int n);

/* The payload of a token sealed for purpose when it is a LastEvaluatedKey (1 to 4 key AttributeValues), else NULL. */
extern Jsonb *api_token_open_key(const char *purpose, const char *token);

/* A string member of an opened token's payload, or NULL when absent. */
extern char *api_token_string(Jsonb *payload, const char *name);

/* An integer member of an opened token's payload in [min, max]; false when absent or out of range. */
extern bool api_token_int64(Jsonb *payload, const char *name, int64 min, int64 max, int64 *out);

#endif							/* DDB_TOKENS_H */
