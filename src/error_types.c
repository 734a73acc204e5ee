/*
 * error_types.c — the table of error_types.h as data, and its look-ups.
 * Plain C: linked into the extension and into ddb-gateway.
 */
#include <stddef.h>
#include <stdio.h>
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

/* A row of DDB_SQLSTATE_ERRORS. */
typedef struct DatabaseError
{
	const char *sqlstate;		/* five characters, or two for a class */
	DdbError	error;
	const char *message;
	int			shows;			/* the database's message follows */
} DatabaseError;

#define DDB_SQLSTATE_ERROR_ROW(sqlstate, name, message, shows) {sqlstate, DDB_ERROR_##name, message, shows},

static const DatabaseError database_errors[] = {
	DDB_SQLSTATE_ERRORS(DDB_SQLSTATE_ERROR_ROW)
};

/* The row of DDB_SQLSTATE_ERRORS for a PostgreSQL error and the message a client reads, or NULL. */
const DdbErrorType *
ddb_error_type_of_database_error(const char *sqlstate, const char *database_message, int names_object,
								 char *message, size_t size)
{
	if (sqlstate == NULL || strlen(sqlstate) != 5)
		return NULL;
	for (size_t i = 0; i < sizeof(database_errors) / sizeof(database_errors[0]); i++)
	{
		const DatabaseError *row = &database_errors[i];

		if (strncmp(row->sqlstate, sqlstate, strlen(row->sqlstate)) != 0)
			continue;
		if (row->shows && !names_object && database_message && database_message[0])
			snprintf(message, size, "%s: %s", row->message, database_message);
		else
			snprintf(message, size, "%s", row->message);
		return &error_types[row->error];
	}
	return NULL;
}
