/*
 * health.h — whether the database answers and has the extension of this
 * gateway's version: checked at start-up (retried while the database
 * cannot be reached) and by GET /health.
 */
#ifndef DDB_GATEWAY_HEALTH_H
#define DDB_GATEWAY_HEALTH_H

#include <libpq-fe.h>
#include <stddef.h>

typedef enum DatabaseState
{
	DATABASE_READY,				/* answers, with ddb_model at this gateway's version */
	DATABASE_UNREACHABLE,		/* cannot connect, or the connection broke */
	DATABASE_NO_EXTENSION,		/* answers, without ddb_model */
	DATABASE_OTHER_VERSION,		/* answers, with ddb_model at another version */
	DATABASE_FAILED				/* answers with an error */
} DatabaseState;

/* The version of ddb_model this gateway speaks to (the Makefile's, from ddb_model.control). */
#define GATEWAY_EXTENSION_VERSION DDB_MODEL_VERSION

/* The statement whose result health_of_result reads. */
#define HEALTH_SQL "SELECT extversion FROM pg_catalog.pg_extension WHERE extname = 'ddb_model'"

/*
 * The state the health statement's result says on conn (NULL: it could
 * not connect); detail gets one line that says what is wrong and what to
 * do.
 */
extern DatabaseState health_of_result(PGconn *conn, const PGresult *res, char *detail, size_t detail_size);

/* Connects to dsn and checks it (start-up). */
extern DatabaseState health_check_dsn(const char *dsn, char *detail, size_t detail_size);

/* 1 when the database of dsn is a router of a sharded deployment (it has ddb_router), 0 when not, -1 when it cannot say. */
extern int	health_is_router(const char *dsn);

#endif
