/*
 * db.c — the connection (UTF-8, named ddb-transfer in pg_stat_activity),
 * the table's relation looked up in ddb.tables and quoted with
 * PQescapeIdentifier, and error messages as the server words them.
 */
#include "db.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "progress.h"

/* Connects to conninfo in UTF-8 ("" for libpq's defaults); NULL (with the reason on stderr) when it cannot. */
PGconn *
db_connect(const char *conninfo)
{
	const char *const keywords[] = {"dbname", "fallback_application_name", "client_encoding", NULL};
	const char *const values[] = {conninfo, "ddb-transfer", "UTF8", NULL};
	PGconn	   *conn = PQconnectdbParams(keywords, values, 1);
	const char *reason;

	if (conn == NULL || PQstatus(conn) != CONNECTION_OK)
	{
		/* libpq's first line: the server, and why it failed (a hint follows on the next) */
		reason = conn ? PQerrorMessage(conn) : "out of memory";
		fprintf(stderr, "ddb-transfer: cannot connect: %.*s; %s\n", (int) strcspn(reason, "\n"), reason,
				conninfo[0] != '\0' ? "check --dsn, and that the server runs"
				: "give --dsn CONNINFO or set PGHOST, PGPORT, PGDATABASE, PGUSER, and check that the server runs");
		PQfinish(conn);
		return NULL;
	}
	return conn;
}

/* Looks table_name up in ddb.tables; 0, or -1 with the reason on stderr. */
int
db_find_table(PGconn *conn, const char *table_name, TableInfo *info)
{
	/* the ARN and id as DescribeTable gives them, without its count of the items */
	const char *sql =
		"SELECT schema_name, relation_name, ddb.table_arn(table_name), ddb.table_id(t) "
		"FROM ddb.tables t WHERE table_name OPERATOR(pg_catalog.=) $1";
	PGresult   *result = PQexecParams(conn, sql, 1, NULL, &table_name, NULL, NULL, 0);
	char	   *schema;
	char	   *relation;

	memset(info, 0, sizeof(TableInfo));
	if (PQresultStatus(result) != PGRES_TUPLES_OK)
	{
		const char *state = PQresultErrorField(result, PG_DIAG_SQLSTATE);

		if (state && (strcmp(state, "42P01") == 0 || strcmp(state, "3F000") == 0))
			fprintf(stderr, "ddb-transfer: the database has no ddb_model extension (%s)\n", db_message(result));
		else
			fprintf(stderr, "ddb-transfer: cannot read ddb.tables: %s\n", db_message(result));
		PQclear(result);
		return -1;
	}
	if (PQntuples(result) == 0)
	{
		fprintf(stderr, "ddb-transfer: no table named %s (ddb.tables has none)\n", table_name);
		PQclear(result);
		return -1;
	}
	schema = PQescapeIdentifier(conn, PQgetvalue(result, 0, 0), strlen(PQgetvalue(result, 0, 0)));
	relation = PQescapeIdentifier(conn, PQgetvalue(result, 0, 1), strlen(PQgetvalue(result, 0, 1)));
	if (schema && relation && (info->relation = malloc(strlen(schema) + strlen(relation) + 2)) != NULL)
		sprintf(info->relation, "%s.%s", schema, relation);
	info->arn = strdup(PQgetvalue(result, 0, 2));
	info->table_id = strdup(PQgetvalue(result, 0, 3));
	PQfreemem(schema);
	PQfreemem(relation);
	PQclear(result);
	if (info->relation == NULL || info->arn == NULL || info->table_id == NULL)
	{
		fprintf(stderr, "ddb-transfer: out of memory\n");
		db_free_table(info);
		return -1;
	}
	return 0;
}

/* Frees what db_find_table filled in. */
void
db_free_table(TableInfo *info)
{
	free(info->relation);
	free(info->arn);
	free(info->table_id);
	memset(info, 0, sizeof(TableInfo));
}

/* The server's message of a failed result, one line, without "ERROR:". */
const char *
db_message(const PGresult *result)
{
	static char line[1024];
	const char *primary = result ? PQresultErrorField(result, PG_DIAG_MESSAGE_PRIMARY) : NULL;
	const char *whole = result ? PQresultErrorMessage(result) : "no result from the server";

	if (primary != NULL)
		return primary;
	/* no fields: libpq's own message (a lost connection), its first line */
	snprintf(line, sizeof(line), "%.*s", (int) strcspn(whole, "\n"), whole);
	return line;
}

/* Prepares a named statement; 0, or -1 with the message on stderr. */
int
db_prepare(PGconn *conn, const char *name, const char *sql, int nparams)
{
	PGresult   *result = PQprepare(conn, name, sql, nparams, NULL);
	int			ok = PQresultStatus(result) == PGRES_COMMAND_OK;

	if (!ok)
		progress_message("%s", db_message(result));
	PQclear(result);
	return ok ? 0 : -1;
}

/* Runs a statement that returns no rows; 0, or -1 with the message on stderr. */
int
db_command(PGconn *conn, const char *sql)
{
	PGresult   *result = PQexec(conn, sql);
	int			ok = PQresultStatus(result) == PGRES_COMMAND_OK;

	if (!ok)
		progress_message("%s: %s", sql, db_message(result));
	PQclear(result);
	return ok ? 0 : -1;
}
