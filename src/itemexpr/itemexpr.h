/*
 * itemexpr.h — DynamoDB's expression language over items in the server:
 * placeholders (ExpressionAttributeNames/Values), the checks made before any
 * item is read, the evaluator's host over natural jsonb, conditions checked
 * under the row lock, filters, updates and projections.
 *
 * The floor between the plain-C language (src/expr/: parser, evaluator) and
 * what reads requests (src/request/, the item operations of src/api/): it
 * reads no request, only the expression texts and placeholder maps it is
 * handed.
 */
#ifndef DDB_ITEMEXPR_H
#define DDB_ITEMEXPR_H

#include "postgres.h"

#include "utils/jsonb.h"

#include "../ddb_jsonb.h"
#include "../expr/expr.h"
#include "../expr/expr_eval.h"
#include "../table/item_store.h"

/* The placeholders of a request and which of them expressions used. */
typedef struct Placeholders
{
	JsonbContainer *names;		/* ExpressionAttributeNames, or NULL */
	JsonbContainer *values;		/* ExpressionAttributeValues, or NULL */
	bool		natural_values; /* values are natural jsonb (SQL functions), not DynamoDB JSON */
	List	   *used_names;		/* char * of the #names expressions used */
	List	   *used_values;
	bool		values_checked; /* every value converted once, before any expression is parsed */
	List	   *converted;		/* ConvertedValue of each value, once checked */
} Placeholders;

/* The state of an evaluator host (host.c) for one request's expression. */
typedef struct HostContext
{
	Placeholders *ph;
	const char *kind;			/* "FilterExpression", ... for messages */
	JsonbContainer *item;		/* the item being evaluated */
	List	   *values;			/* placeholder values converted so far */
	MemoryContext cxt;			/* where they live: the request's, not a row's */
} HostContext;

/* A parsed ProjectionExpression, or the updated paths of an UpdateExpression (projection.c). */
typedef struct ProjectionNode ProjectionNode;

/* Placeholders (placeholders.c). */

/* The placeholders of a SQL function call: names ({"#n": "name"}) and natural values ({":v": 1}), either NULL. */
extern void itemexpr_sql_placeholders(Placeholders *ph, Jsonb *names, Jsonb *values);

/* Arena allocation for the expression parser: palloc in the current context. */
extern void *itemexpr_arena_alloc(void *context, size_t size);

/* Parses a condition expression (kind names it in messages), raising DynamoDB's errors. */
extern ExprNode *itemexpr_parse_condition(Placeholders *ph, const char *kind, const char *text);

/* The attribute name a path step stands for (resolving #placeholders). */
extern char *itemexpr_step_name(Placeholders *ph, const char *kind, ExprPathStep *step);

/* The natural value of a :value placeholder. */
extern void itemexpr_value(Placeholders *ph, const char *kind, ExprNode *value, JsonbValue *out);

/* "[a, b, [2]]": the first nsteps of a path as DynamoDB's messages print it. */
extern char *itemexpr_path_text(Placeholders *ph, const char *kind, const ExprNode *path, int nsteps);

/* Converts every ExpressionAttributeValues value once, raising for the first DynamoDB refuses. */
extern void itemexpr_check_values(Placeholders *ph);

/* Raises when placeholders were defined that no expression used. */
extern void itemexpr_check_unused(Placeholders *ph);

/* Checks made before any item is read (check.c). */

/*
 * Resolves every placeholder of an expression and applies DynamoDB's static
 * checks, so that a bad expression fails before any item is read.
 */
extern void itemexpr_check(Placeholders *ph, const char *kind, const ExprNode *node);

/* The evaluator's host over natural jsonb (host.c). */

/* Sets up an evaluator host for one request's expression. */
extern void itemexpr_host(HostContext *ctx, Placeholders *ph, const char *kind, ExprHost *host);

/* Order of two natural values of one type, S, N or B (DynamoDB's order). */
extern int	itemexpr_compare_values(JsonbValue *a, JsonbValue *b);

/* The kind an attribute_type name stands for (S = 1, ...), or -1 for a name DynamoDB does not know. */
extern int	itemexpr_attribute_type_kind(JsonbValue *name);

/* Conditions and filters (condition.c). */

/* A ConditionExpression as a WriteCondition checked under the row lock; NULL for a NULL text. */
extern WriteCondition *itemexpr_write_condition(Placeholders *ph, const char *text);

/* Raises DDB_ERROR_CONDITIONAL_CHECK_FAILED (the current item in the body when return_item). */
extern void itemexpr_raise_condition_failed(const char *condition, bool return_item, Jsonb *current) pg_attribute_noreturn();

/* A FilterExpression parsed and checked before any item is read; NULL for a NULL text. */
extern ExprNode *itemexpr_parse_filter(Placeholders *ph, const char *text);

/* Updates (update.c). */

/* Parses an UpdateExpression for a table; *paths gets the trie of the updated paths. */
extern ExprUpdate *itemexpr_parse_update(TableDef *def, Placeholders *ph, const char *text,
										 ProjectionNode **paths);

/* Applies an update (NULL: create from the key if absent) under a condition; false when it failed. */
extern bool itemexpr_store_update(TableDef *def, Datum pk, Datum sk, ExprUpdate *update, Placeholders *ph,
								  WriteCondition *cond, Jsonb **old, Jsonb **written);

/* The attributes an UpdateItem returns for a ReturnValues option, or NULL for none. */
extern Jsonb *itemexpr_update_returned(const char *rv, ProjectionNode *paths, Jsonb *old, Jsonb *written);

/* Projections (projection.c). */

/* Parses a ProjectionExpression into its trie; NULL for a NULL text. */
extern ProjectionNode *itemexpr_projection(Placeholders *ph, const char *text);

/* The trie of document paths, raising DynamoDB's overlap and conflict errors. */
extern ProjectionNode *itemexpr_path_trie(Placeholders *ph, const char *kind, ExprNode **paths, int npaths);

/* The top-level attribute names a projection asks for (char *), in the order given. */
extern List *itemexpr_projection_attributes(ProjectionNode *projection);

/* The item as a projection projects it (a new natural item). */
extern Jsonb *itemexpr_project(ProjectionNode *projection, Jsonb *item);

#endif							/* DDB_ITEMEXPR_H */
