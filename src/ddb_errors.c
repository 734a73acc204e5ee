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
 * The row of DDB_SQLSTATE_ERRORS of a PostgreSQL error that a request
 * caused, with the message a client reads in *message (palloc'd), or NULL
 * for a fault of ours.  The error itself is left as it is.
 */
const DdbErrorType *
ddb_database_error(ErrorData *edata, char **message)
{
	const char *own = edata->message ? edata->message : "";
	size_t		size = strlen(own) + 512;
	bool		names_object = edata->schema_name || edata->table_name || edata->column_name ||
		edata->datatype_name || edata->constraint_name;

	*message = palloc(size);
	return ddb_error_type_of_database_error(unpack_sql_state(edata->sqlerrcode), own, names_object, *message, size);
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
