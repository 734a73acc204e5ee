/*
 * error_types.h — DynamoDB's error types: the one table of them.  Each row
 * gives an error its SQLSTATE (class YD, docs/errors.md), DynamoDB's
 * __type and the HTTP status a client gets.  Plain C with no server
 * headers: the extension and ddb-gateway include the same names.  A new
 * error is a new row here, never a new string elsewhere.
 */
#ifndef DDB_ERROR_TYPES_H
#define DDB_ERROR_TYPES_H

#include <stddef.h>

/*
 * The errors the database raises: X(name, the last three characters of the
 * SQLSTATE YDnnn, __type, HTTP status).
 */
#define DDB_DATABASE_ERRORS(X) \
	X(VALIDATION, '0', '0', '1', "com.amazon.coral.validate#ValidationException", 400) \
	X(CONDITIONAL_CHECK_FAILED, '0', '0', '2', "com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException", 400) \
	X(TRANSACTION_CANCELED, '0', '0', '3', "com.amazonaws.dynamodb.v20120810#TransactionCanceledException", 400) \
	X(RESOURCE_NOT_FOUND, '0', '0', '4', "com.amazonaws.dynamodb.v20120810#ResourceNotFoundException", 400) \
	X(RESOURCE_IN_USE, '0', '0', '5', "com.amazonaws.dynamodb.v20120810#ResourceInUseException", 400) \
	X(SERIALIZATION, '0', '0', '6', "com.amazon.coral.service#SerializationException", 400) \
	X(UNKNOWN_OPERATION, '0', '0', '7', "com.amazon.coral.service#UnknownOperationException", 400) \
	X(IDEMPOTENT_MISMATCH, '0', '0', '8', "com.amazonaws.dynamodb.v20120810#IdempotentParameterMismatchException", 400) \
	X(LIMIT_EXCEEDED, '0', '0', '9', "com.amazonaws.dynamodb.v20120810#LimitExceededException", 400) \
	X(ACCESS_DENIED, '0', '1', '0', "com.amazon.coral.service#AccessDeniedException", 400) \
	X(DUPLICATE_ITEM, '0', '1', '1', "com.amazonaws.dynamodb.v20120810#DuplicateItemException", 400) \
	X(TRANSACTION_CONFLICT, '0', '1', '2', "com.amazonaws.dynamodb.v20120810#TransactionConflictException", 400) \
	X(SERVICE_UNAVAILABLE, '0', '1', '3', "com.amazonaws.dynamodb.v20120810#ServiceUnavailable", 503) \
	X(BACKUP_NOT_FOUND, '0', '2', '0', "com.amazonaws.dynamodb.v20120810#BackupNotFoundException", 400) \
	X(BACKUP_IN_USE, '0', '2', '1', "com.amazonaws.dynamodb.v20120810#BackupInUseException", 400) \
	X(TABLE_NOT_FOUND, '0', '2', '2', "com.amazonaws.dynamodb.v20120810#TableNotFoundException", 400) \
	X(TABLE_ALREADY_EXISTS, '0', '2', '3', "com.amazonaws.dynamodb.v20120810#TableAlreadyExistsException", 400) \
	X(TABLE_IN_USE, '0', '2', '4', "com.amazonaws.dynamodb.v20120810#TableInUseException", 400) \
	X(CONTINUOUS_BACKUPS_UNAVAILABLE, '0', '3', '0', "com.amazonaws.dynamodb.v20120810#ContinuousBackupsUnavailableException", 400) \
	X(POINT_IN_TIME_RECOVERY_UNAVAILABLE, '0', '3', '1', "com.amazonaws.dynamodb.v20120810#PointInTimeRecoveryUnavailableException", 400) \
	X(INVALID_RESTORE_TIME, '0', '3', '2', "com.amazonaws.dynamodb.v20120810#InvalidRestoreTimeException", 400) \
	X(PROVISIONED_THROUGHPUT_EXCEEDED, '0', '5', '0', "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException", 400) \
	X(EXPORT_NOT_FOUND, '0', '4', '0', "com.amazonaws.dynamodb.v20120810#ExportNotFoundException", 400) \
	X(IMPORT_NOT_FOUND, '0', '4', '1', "com.amazonaws.dynamodb.v20120810#ImportNotFoundException", 400) \
	X(INVALID_EXPORT_TIME, '0', '4', '4', "com.amazonaws.dynamodb.v20120810#InvalidExportTimeException", 400)

/*
 * The errors only ddb-gateway answers, before a request reaches the
 * database or when it cannot: X(name, __type, HTTP status).
 */
#define DDB_GATEWAY_ERRORS(X) \
	X(MISSING_AUTHENTICATION_TOKEN, "com.amazon.coral.service#MissingAuthenticationTokenException", 400) \
	X(INCOMPLETE_SIGNATURE, "com.amazon.coral.service#IncompleteSignatureException", 400) \
	X(UNRECOGNIZED_CLIENT, "com.amazon.coral.service#UnrecognizedClientException", 400) \
	X(INVALID_SIGNATURE, "com.amazon.coral.service#InvalidSignatureException", 400) \
	X(METHOD_NOT_ALLOWED, "com.amazon.coral.service#UnknownOperationException", 405) \
	X(REQUEST_TOO_LARGE, "com.amazon.coral.validate#ValidationException", 413) \
	X(INTERNAL_SERVER_ERROR, "com.amazonaws.dynamodb.v20120810#InternalServerError", 500)

/*
 * PostgreSQL's own errors that a request can cause, as DynamoDB's errors:
 * X(SQLSTATE or SQLSTATE class, row of the table above, message, shows).
 * The first row that matches wins (codes before their class).  The message
 * is what the client reads; with shows, the database's own message follows
 * it ("message: ...") unless the error names a database object (a
 * constraint, table, column, schema or type), which a client must not see.
 * An error of no row here and of no class YD is a fault of ours: 500.
 * docs/errors.md lists them.
 */
#define DDB_SQLSTATE_ERRORS(X) \
	X("22P02", SERIALIZATION, "The request could not be read", 1) \
	X("22021", SERIALIZATION, "The request is not valid UTF-8", 1) \
	X("22P05", VALIDATION, "One or more parameter values were invalid: a string contains the character U+0000, which this implementation cannot store (PostgreSQL's text cannot hold it)", 0) \
	X("54001", VALIDATION, "Nesting Levels have exceeded supported limits", 0) \
	X("54000", VALIDATION, "One or more parameter values were invalid: a value exceeds a size limit of this implementation", 0) \
	X("22003", VALIDATION, "One or more parameter values were invalid: a number is out of the supported range", 1) \
	X("22", VALIDATION, "One or more parameter values were invalid", 1) \
	X("P0002", VALIDATION, "One or more parameter values were invalid", 1) \
	X("23505", CONDITIONAL_CHECK_FAILED, "The conditional request failed", 1) \
	X("23P01", CONDITIONAL_CHECK_FAILED, "The conditional request failed", 1) \
	X("23", VALIDATION, "One or more parameter values were invalid: the write would break an invariant of the table", 1) \
	X("40", TRANSACTION_CONFLICT, "Transaction is ongoing for the item: the request conflicted with a concurrent one; retry it", 0) \
	X("55P03", TRANSACTION_CONFLICT, "Transaction is ongoing for the item: the request conflicted with a concurrent one; retry it", 0) \
	X("42501", ACCESS_DENIED, "User is not authorized to perform this operation on this resource", 0)

#define DDB_DATABASE_ERROR_ENUM(name, c3, c4, c5, type, status) DDB_ERROR_##name,
#define DDB_GATEWAY_ERROR_ENUM(name, type, status) DDB_ERROR_##name,

/* An error of the table. */
typedef enum DdbError
{
	DDB_DATABASE_ERRORS(DDB_DATABASE_ERROR_ENUM)
	DDB_GATEWAY_ERRORS(DDB_GATEWAY_ERROR_ENUM)
	DDB_ERROR_COUNT
} DdbError;

/* A row of the table. */
typedef struct DdbErrorType
{
	char		sqlstate[6];	/* "YD001", or "" for the gateway's own */
	const char *type;			/* DynamoDB's __type */
	int			http_status;
} DdbErrorType;

/* The row of an error. */
extern const DdbErrorType *ddb_error_type(DdbError error);

/* The row of a SQLSTATE the database raised, or NULL when it is none of the table's. */
extern const DdbErrorType *ddb_error_type_of_sqlstate(const char *sqlstate);

/*
 * The row of DDB_SQLSTATE_ERRORS for a PostgreSQL error, with the message a
 * client reads into message (size bytes): database_message is the error's
 * own, names_object whether it names a database object.  NULL (message
 * untouched) for an error of no row: a fault of ours.
 */
extern const DdbErrorType *ddb_error_type_of_database_error(const char *sqlstate, const char *database_message,
															 int names_object, char *message, size_t size);

#endif							/* DDB_ERROR_TYPES_H */
