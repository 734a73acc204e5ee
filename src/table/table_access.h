/*
 * table_access.h — who may touch a table (docs/security.md): the current
 * user's privileges on its relations, and the leading keys of a role that
 * ddb.grant_tables limited to some partition keys.  A refusal is DynamoDB's
 * AccessDeniedException; PostgreSQL's executor checks the same privileges
 * and row-level security again underneath.
 */
#ifndef DDB_TABLE_ACCESS_H
#define DDB_TABLE_ACCESS_H

#include "postgres.h"

#include "table_def.h"

/* ARNs as DescribeTable gives them (the SQL twin: ddb.table_arn). */
#define DDB_TABLE_ARN_PREFIX "arn:aws:dynamodb:ddb-model:000000000000:table/"

typedef enum TableAccess
{
	TABLE_READ,					/* SELECT */
	TABLE_WRITE					/* SELECT, INSERT, UPDATE and DELETE */
} TableAccess;

/* The user and security context to go back to after acting as an owner. */
typedef struct OwnerContext
{
	Oid			userid;
	int			sec_context;
} OwnerContext;

/*
 * Names the DynamoDB action being served ("GetItem"), for refusals' wording;
 * returns the one it replaces, to be restored.
 */
extern const char *table_access_set_action(const char *action);

/*
 * DynamoDB's words for refusing the current user an action on a table (or
 * an index of it), on every resource ("*") when table_name is NULL.
 */
extern char *table_access_denied_message(const char *action, const char *table_name, const char *index_name);

/* Raises AccessDeniedException unless the current user may read or write the table (or its index). */
extern void table_access_check(TableDef *def, IndexDef *index, TableAccess access);

/* Raises AccessDeniedException when the current user's leading keys exclude this partition key. */
extern void table_access_check_key(TableDef *def, Datum pk);

/*
 * A table operation's check of the current user's access to a table, the
 * refusal naming action (ImportTable, ...): access is 'read', 'write',
 * 'own' for the operations that change a table's definition (its owner's),
 * 'create' for a table to be (whoever may write the catalog), or 'import'
 * for a table to be filled from the server's files ('create', and a member
 * of pg_read_server_files, as COPY FROM a file takes).
 */
extern void table_access_check_operation(const char *table_name, const char *action, const char *access);

/*
 * Acts as the owner of a relation, as ri_triggers.c does: for derived rows
 * (GSI entries, stream records, tokens) that whoever may write the table
 * may cause but not write directly.  Undone by owner_context_exit, and by
 * the (sub)transaction's abort on error.
 */
extern void owner_context_enter(Oid relid, OwnerContext *saved);
extern void owner_context_exit(const OwnerContext *saved);

/* The OID of a relation of schema ddb (stream_records, ...). */
extern Oid	ddb_relation_oid(const char *name);

#endif							/* DDB_TABLE_ACCESS_H */
