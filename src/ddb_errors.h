/*
 * ddb_errors.h — the extension's SQLSTATE class "YD", one code per DynamoDB
 * error type (docs/errors.md lists them).
 */
#ifndef DDB_ERRORS_H
#define DDB_ERRORS_H

#include "utils/elog.h"

/* ValidationException: a request or value that DynamoDB would refuse. */
#define ERRCODE_DDB_VALIDATION MAKE_SQLSTATE('Y','D','0','0','1')
/* ConditionalCheckFailedException */
#define ERRCODE_DDB_CONDITIONAL_CHECK_FAILED MAKE_SQLSTATE('Y','D','0','0','2')
/* TransactionCanceledException */
#define ERRCODE_DDB_TRANSACTION_CANCELED MAKE_SQLSTATE('Y','D','0','0','3')
/* ResourceNotFoundException: no such table or index. */
#define ERRCODE_DDB_RESOURCE_NOT_FOUND MAKE_SQLSTATE('Y','D','0','0','4')
/* ResourceInUseException: the table already exists. */
#define ERRCODE_DDB_RESOURCE_IN_USE MAKE_SQLSTATE('Y','D','0','0','5')
/* SerializationException: a request body that is not of the expected shape. */
#define ERRCODE_DDB_SERIALIZATION MAKE_SQLSTATE('Y','D','0','0','6')
/* UnknownOperationException: no such action. */
#define ERRCODE_DDB_UNKNOWN_OPERATION MAKE_SQLSTATE('Y','D','0','0','7')
/* IdempotentParameterMismatchException: a ClientRequestToken reused for another request. */
#define ERRCODE_DDB_IDEMPOTENT_MISMATCH MAKE_SQLSTATE('Y','D','0','0','8')
/* LimitExceededException */
#define ERRCODE_DDB_LIMIT_EXCEEDED MAKE_SQLSTATE('Y','D','0','0','9')
/* AccessDeniedException: a resource ARN that names no table of this database. */
#define ERRCODE_DDB_ACCESS_DENIED MAKE_SQLSTATE('Y','D','0','1','0')
/* DuplicateItemException: a PartiQL INSERT of an item that exists. */
#define ERRCODE_DDB_DUPLICATE_ITEM MAKE_SQLSTATE('Y','D','0','1','1')

/* Raises a ValidationException with a formatted message. */
#define ddb_validation_error(...) \
	ereport(ERROR, (errcode(ERRCODE_DDB_VALIDATION), errmsg(__VA_ARGS__)))

#endif							/* DDB_ERRORS_H */
