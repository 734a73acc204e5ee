/*
 * error_types.c — the table of error_types.h as data, and its look-ups.
 * Plain C: linked into the extension and into ddb-gateway.
 */
#include <stddef.h>
#include <string.h>

#include "error_types.h"

#define DDB_DATABASE_ERROR_ROW(name, c3, c4, c5, type, status) {{'Y', 'D', c3, c4, c5, '\0'}, type, status},
#define DDB_GATEWAY_ERROR_ROW(name, type, status) {"", type, status},

static const DdbErrorType error_types[DDB_ERROR_COUNT] = {
	DDB_DATABASE_ERRORS(DDB_DATABASE_ERROR_ROW)
	DDB_GATEWAY_ERRORS(DDB_GATEWAY_ERROR_ROW)
};

/* The row of an error. */
const DdbErrorType *
ddb_error_type(DdbError error)
{
	return &error_types[error];
}

/* The row of a SQLSTATE the database raised, or NULL when it is none of the table's. */
const DdbErrorType *
ddb_error_type_of_sqlstate(const char *sqlstate)
{
	if (sqlstate == NULL || sqlstate[0] == '\0')
		return NULL;
	for (int i = 0; i < DDB_ERROR_COUNT; i++)
		if (strcmp(error_types[i].sqlstate, sqlstate) == 0)
			return &error_types[i];
	return NULL;
}
