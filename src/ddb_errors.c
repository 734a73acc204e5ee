/*
 * ddb_errors.c — the server's side of error_types.h: an error code back to
 * its row, and the one builder of DynamoDB's JSON error bodies.
 */
#include "postgres.h"

#include "ddb_errors.h"
#include "ddb_jsonb.h"

/* The row of error_types.h for an error code, or NULL when it is none of the table's. */
const DdbErrorType *
ddb_error_type_of_errcode(int sqlerrcode)
{
	return ddb_error_type_of_sqlstate(unpack_sql_state(sqlerrcode));
}

/*
 * DynamoDB's error body as JSON text: {"__type": ..., "message": ...},
 * with one more member (member: value) when member is not NULL.  Built as
 * jsonb, so its members come in jsonb's order whatever is added.
 */
char *
ddb_error_body(const DdbErrorType *type, const char *message, const char *member, JsonbValue *value)
{
	JsonbParseState *state = NULL;

	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	ddb_push_string(&state, "__type", type->type);
	ddb_push_string(&state, "message", message ? message : "");
	if (member)
	{
		ddb_push_key(&state, member);
		pushJsonbValue(&state, WJB_VALUE, value);
	}
	return JsonbToCString(NULL, &JsonbValueToJsonb(pushJsonbValue(&state, WJB_END_OBJECT, NULL))->root, 0);
}
