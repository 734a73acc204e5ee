/*
 * ddb_errors.h — the extension's SQLSTATE class "YD", one code per DynamoDB
 * error type (docs/errors.md lists them).
 */
#ifndef DDB_ERRORS_H
#define DDB_ERRORS_H

#include "utils/elog.h"

/* ValidationException: a request or value that DynamoDB would refuse. */
#define ERRCODE_DDB_VALIDATION MAKE_SQLSTATE('Y','D','0','0','1')

#endif							/* DDB_ERRORS_H */
