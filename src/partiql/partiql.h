/*
 * partiql.h — DynamoDB's PartiQL (ExecuteStatement, BatchExecuteStatement,
 * ExecuteTransaction) in three stages, as pgvector splits an index:
 * partiql_parse.c reads a statement (SELECT, INSERT, UPDATE, DELETE, a
 * transaction's EXISTS) into a Statement; partiql_rewrite.c turns it into
 * the operation it stands for, a DynamoDB JSON request whose expressions use
 * placeholders (#pN for names, :vN for values); partiql_execute.c runs the
 * operations, a statement, a batch or a transaction at a time.  ddb.execute
 * (src/execute/) serves the three operations; a router asks which
 * operation a statement stands for.
 */
#ifndef DDB_PARTIQL_H
#define DDB_PARTIQL_H

#include "postgres.h"

#include "lib/stringinfo.h"
#include "nodes/pg_list.h"
#include "utils/jsonb.h"

/* A condition of the WHERE's top-level AND, rendered, with what key splitting needs. */
typedef struct Conjunct
{
	char	   *text;			/* in DynamoDB's condition syntax */
	char	   *attribute;		/* the attribute on the left when it is a bare name, else NULL */
	char		kind;			/* '=' equality, 'k' another key condition (<, BETWEEN, begins_with...), 'o' other */
	int			value;			/* for '=': the index of its value placeholder */
} Conjunct;

/* A parsed statement, rewritten. */
typedef struct Statement
{
	struct Token *tokens;		/* partiql_parse.c's */
	int			ntokens;
	int			pos;
	JsonbContainer *params;		/* Parameters, or NULL */
	int			nparams;
	int			next_param;
	List	   *names;			/* char *: #p<i> stands for element i */
	List	   *values;			/* char *: the DynamoDB JSON of :v<i> */
	char		kind;			/* 'S'elect, 'I'nsert, 'U'pdate, 'D'elete, 'E'xists (a transaction's check) */
	char	   *table;
	char	   *index;			/* SELECT FROM "table"."index", or NULL */
	List	   *projection;		/* SELECT: List of List of path steps (char * names, or "[n]"), NIL for * */
	List	   *conjuncts;		/* Conjunct * of the WHERE */
	char	   *item;			/* INSERT: the item as DynamoDB JSON */
	StringInfoData set;			/* UPDATE: SET actions */
	StringInfoData remove;		/* UPDATE: REMOVE actions */
} Statement;

/* What a statement becomes: an operation and its request. */
typedef struct Rewritten
{
	Jsonb	   *(*run) (Jsonb *request);	/* api_query, api_scan, api_put_item, ... */
	char	   *request;		/* its request, JSON text */
	bool		insert;			/* a PutItem that may not replace: DDB_ERROR_DUPLICATE_ITEM */
} Rewritten;

/* Parses a statement with its Parameters (or NULL), raising DynamoDB's errors. */
extern void partiql_parse(Statement *st, const char *text, JsonbContainer *params);

/* The #p<i> placeholder of an attribute name (one per name, in order). */
extern char *partiql_name_placeholder(Statement *st, const char *name);

/* Rewrites a parsed statement into its operation's request. */
extern void partiql_rewrite(Statement *st, Rewritten *out, bool consistent);

/* The Key of a SELECT that must read one item (batches, transactions); *taken gets its conjuncts. */
extern char *partiql_single_item_key(Statement *st, List **taken);

/* The WHERE's conjuncts other than those taken (as a key), joined with AND; NULL for none. */
extern char *partiql_remaining_condition(List *conjuncts, List *taken);

/* The operations (partiql_execute.c): ExecuteStatement, BatchExecuteStatement, ExecuteTransaction. */
extern Jsonb *api_execute_statement(Jsonb *request);
extern Jsonb *api_batch_execute_statement(Jsonb *request);
extern Jsonb *api_execute_transaction(Jsonb *request);

/* The operation a statement ({"Statement", "Parameters"}) stands for, and its request (a router's question). */
extern const char *api_statement_operation(Jsonb *element, Jsonb **request);

/* The Get ({"TableName", "Key"}) a read statement of an ExecuteTransaction stands for (a router's question). */
extern Jsonb *api_statement_get(Jsonb *element);

#endif							/* DDB_PARTIQL_H */
