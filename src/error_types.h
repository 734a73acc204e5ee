/*
 * error_types.h — DynamoDB's error types: the one table of them.  Each row
 * gives an error its SQLSTATE (class YD, docs/errors.md), DynamoDB's
 * __type and the HTTP status a client gets.  Plain C with no server
 * headers: the extension and ddb-gateway include the same names.  A new
 * error is a new row here, never a new string elsewhere.
 */
#ifndef DDB_ERROR_TYPES_H
#define DDB_ERROR_TYPES_H

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
	X(TRANSACTION_CONFLICT, '0', '1', '2', "com.amazonaws.dynamodb.v20120810#TransactionConflictException", 400)

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

#endif							/* DDB_ERROR_TYPES_H */
