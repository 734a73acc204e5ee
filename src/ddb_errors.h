/*
 * ddb_errors.h — DynamoDB's errors as the server raises them: one SQLSTATE
 * of class "YD" per row of error_types.h (ERRCODE_DDB_VALIDATION is YD001,
 * ...), and the JSON error body ddb.execute attaches as DETAIL.
 */
#ifndef DDB_ERRORS_H
#define DDB_ERRORS_H

#include "postgres.h"

#include "utils/elog.h"
#include "utils/jsonb.h"

#include "error_types.h"

#define DDB_ERRCODE_ENUM(name, c3, c4, c5, type, status) \
	ERRCODE_DDB_##name = MAKE_SQLSTATE('Y', 'D', c3, c4, c5),

/* ERRCODE_DDB_<name>: the SQLSTATE of each error the database raises. */
enum
{
	DDB_DATABASE_ERRORS(DDB_ERRCODE_ENUM)
};

/* Raises DDB_ERROR_VALIDATION with a formatted message. */
#define ddb_validation_error(...) \
	ereport(ERROR, (errcode(ERRCODE_DDB_VALIDATION), errmsg(__VA_ARGS__)))

/* The row of error_types.h for an error code, or NULL when it is none of the table's. */
extern const DdbErrorType *ddb_error_type_of_errcode(int sqlerrcode);

/*
 * The row of DDB_SQLSTATE_ERRORS of a PostgreSQL error that a request
 * caused, with the message a client reads in *message (palloc'd), or NULL
 * for a fault of ours.  The error itself is left as it is.
 */
extern const DdbErrorType *ddb_database_error(ErrorData *edata, char **message);

/*
 * DynamoDB's error body as JSON text: {"__type": ..., "message": ...},
 * with one more member (member: value) when member is not NULL.
 */
extern char *ddb_error_body(const DdbErrorType *type, const char *message, const char *member,
							JsonbValue *value);

#endif							/* DDB_ERRORS_H */
