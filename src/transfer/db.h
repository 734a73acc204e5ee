/*
 * db.h — what import and export share about the database: the connection,
 * the table's relation from the catalog, and the messages of errors.
 */
#ifndef DDB_TRANSFER_DB_H
#define DDB_TRANSFER_DB_H

#include <libpq-fe.h>

/* A ddb_model table as the catalog (ddb.tables) describes it. */
typedef struct TableInfo
{
	char	   *relation;		/* schema-qualified and quoted, for SQL text */
	char	   *arn;			/* the TableArn DescribeTable gives */
	char	   *table_id;		/* the TableId DescribeTable gives */
} TableInfo;

/* Connects to conninfo in UTF-8 ("" for libpq's defaults); NULL (with the reason on stderr) when it cannot. */
extern PGconn *db_connect(const char *conninfo);

/* Looks table_name up in ddb.tables; 0, or -1 with the reason on stderr. */
extern int	db_find_table(PGconn *conn, const char *table_name, TableInfo *info);

/* Frees what db_find_table filled in. */
extern void db_free_table(TableInfo *info);

/* The server's message of a failed result, one line, without "ERROR:". */
extern const char *db_message(const PGresult *result);

/* Prepares a named statement; 0, or -1 with the message on stderr. */
extern int	db_prepare(PGconn *conn, const char *name, const char *sql, int nparams);

/* Runs a statement that returns no rows; 0, or -1 with the message on stderr. */
extern int	db_command(PGconn *conn, const char *sql);

#endif
