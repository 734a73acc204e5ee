/*
 * health.c — the database's state as the gateway needs it (health.h): one
 * query of pg_extension, on an event thread's lane for GET /health and on
 * a connection of its own at start-up.
 */
#include "health.h"

#include <stdio.h>
#include <string.h>

#include "connect.h"

/*
 * Makes libpq's message one line: its hint is on a line of its own, after a
 * tab, and it ends with a newline.
 */
static void
one_line(char *text)
{
	char	   *out = text;

	for (const char *c = text; *c; c++)
		if (*c != '\n' && *c != '\t')
			*out++ = *c;
		else if (out > text && out[-1] != ' ')
			*out++ = ' ';
	while (out > text && out[-1] == ' ')
		out--;
	*out = '\0';
}

/* The state a health statement's result (HEALTH_SQL) says; detail gets what is wrong and what to do. */
DatabaseState
health_of_result(PGconn *conn, const PGresult *res, char *detail, size_t detail_size)
{
	DatabaseState state;

	if (conn == NULL || PQstatus(conn) != CONNECTION_OK)
	{
		snprintf(detail, detail_size, "the database cannot be reached%s%s",
				 conn ? ": " : "", conn ? PQerrorMessage(conn) : "");
		one_line(detail);
		return DATABASE_UNREACHABLE;
	}
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
	{
		state = DATABASE_FAILED;
		snprintf(detail, detail_size, "the database answered: %s",
				 PQresultErrorMessage(res)[0] ? PQresultErrorMessage(res) : PQerrorMessage(conn));
	}
	else if (PQntuples(res) == 0)
	{
		state = DATABASE_NO_EXTENSION;
		snprintf(detail, detail_size, "the database \"%s\" has no ddb_model extension: run CREATE EXTENSION ddb_model "
				 "in it, or point --dsn at the database that has it", PQdb(conn));
	}
	else if (strcmp(PQgetvalue(res, 0, 0), GATEWAY_EXTENSION_VERSION) != 0)
	{
		state = DATABASE_OTHER_VERSION;
		snprintf(detail, detail_size, "the database \"%s\" has ddb_model %s, and this gateway speaks to %s: "
				 "run ALTER EXTENSION ddb_model UPDATE in it (or install the gateway of its version)",
				 PQdb(conn), PQgetvalue(res, 0, 0), GATEWAY_EXTENSION_VERSION);
	}
	else
	{
		state = DATABASE_READY;
		snprintf(detail, detail_size, "ddb_model %s", GATEWAY_EXTENSION_VERSION);
	}
	/* one line: libpq's messages end with a newline */
	detail[strcspn(detail, "\n")] = '\0';
	return state;
}

/* Connects to dsn and checks it. */
DatabaseState
health_check_dsn(const char *dsn, char *detail, size_t detail_size)
{
	PGconn	   *conn = db_connect(dsn);
	PGresult   *res = PQstatus(conn) == CONNECTION_OK ? db_exec(conn, "health", HEALTH_SQL, 0, NULL) : NULL;
	DatabaseState state = health_of_result(conn, res, detail, detail_size);

	PQclear(res);
	PQfinish(conn);
	return state;
}

/* 1 when the database of dsn is a router of a sharded deployment (it has ddb_router), 0 when not, -1 when it cannot say. */
int
health_is_router(const char *dsn)
{
	PGconn	   *conn = db_connect(dsn);
	PGresult   *res = PQexec(conn, "SELECT 1 FROM pg_catalog.pg_extension WHERE extname = 'ddb_router'");
	int			router = PQresultStatus(res) == PGRES_TUPLES_OK ? PQntuples(res) > 0 : -1;

	PQclear(res);
	PQfinish(conn);
	return router;
}
