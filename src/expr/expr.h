/*
 * expr.h — the DynamoDB expression language: syntax tree and parser.
 *
 * Plain C with no server calls: memory comes from an arena the caller
 * provides and errors come back as ExprError, so that a fuzzer and unit
 * tests can drive the parser outside PostgreSQL.  src/itemexpr/ adapts it.
 *
 * Grammar (DynamoDB's precedence, loosest first):
 *   condition  := and ('OR' and)*
 *   and        := not ('AND' not)*
 *   not        := 'NOT' not | '(' condition ')' | function | comparison
 *   comparison := operand (comparator operand | 'BETWEEN' operand 'AND' operand
 *                          | 'IN' '(' operand (',' operand)* ')')
 *   operand    := path | ':value' | 'size' '(' path ')' | '(' operand ')'
 *   path       := (name | '#name') ('.' (name | '#name') | '[' digits ']')*
 *   function   := attribute_exists(path) | attribute_not_exists(path)
 *               | attribute_type(operand, operand) | begins_with(operand, operand)
 *               | contains(operand, operand)
 * Two pairs of parentheses around one thing are "redundant parentheses".
 */
#ifndef DDB_EXPR_H
#define DDB_EXPR_H

#include <stdbool.h>
#include <stddef.h>

/* An allocator the parser draws every node from (never freed one by one). */
typedef struct ExprArena
{
	void	   *(*alloc) (void *context, size_t size);
	void	   *context;
} ExprArena;

/* Why parsing failed; message is DynamoDB's wording. */
typedef struct ExprError
{
	char		message[256];
	int			position;		/* byte offset in the expression */
} ExprError;

typedef enum ExprKind
{
	EXPR_PATH,
	EXPR_VALUE,					/* an ExpressionAttributeValues placeholder */
	EXPR_COMPARE,
	EXPR_BETWEEN,
	EXPR_IN,
	EXPR_AND,
	EXPR_OR,
	EXPR_NOT,
	EXPR_FUNCTION,
	EXPR_PLUS,					/* SET values: a + b */
	EXPR_MINUS					/* SET values: a - b */
} ExprKind;

typedef enum ExprCompareOp
{
	CMP_EQ,
	CMP_NE,
	CMP_LT,
	CMP_LE,
	CMP_GT,
	CMP_GE
} ExprCompareOp;

typedef enum ExprFunction
{
	FN_ATTRIBUTE_EXISTS,
	FN_ATTRIBUTE_NOT_EXISTS,
	FN_ATTRIBUTE_TYPE,
	FN_BEGINS_WITH,
	FN_CONTAINS,
	FN_SIZE,
	FN_IF_NOT_EXISTS,			/* SET values only */
	FN_LIST_APPEND				/* SET values only */
} ExprFunction;

/* One step of a document path: a map key (name, maybe a #placeholder) or a list index. */
typedef struct ExprPathStep
{
	const char *name;			/* NULL for a list index */
	int			name_len;
	bool		placeholder;	/* name is "#..." and must be resolved */
	int			index;
} ExprPathStep;

typedef struct ExprNode ExprNode;

struct ExprNode
{
	ExprKind	kind;
	int			position;
	union
	{
		struct
		{
			ExprPathStep *steps;
			int			nsteps;
		}			path;
		struct
		{
			const char *name;	/* ":v", including the colon */
			int			name_len;
		}			value;
		struct
		{
			ExprCompareOp op;
			ExprNode   *left;
			ExprNode   *right;
		}			compare;
		struct
		{
			ExprNode   *operand;
			ExprNode   *low;
			ExprNode   *high;
		}			between;
		struct
		{
			ExprNode   *operand;
			ExprNode  **list;
			int			nlist;
		}			in;
		struct
		{
			ExprNode   *left;
			ExprNode   *right;
		}			logic;		/* AND, OR, PLUS, MINUS; NOT uses left */
		struct
		{
			ExprFunction fn;
			ExprNode  **args;
			int			nargs;
		}			func;
	}			u;
};

/* The longest expression DynamoDB accepts, in bytes. */
#define EXPR_MAX_LENGTH 4096

/* Parses a condition (ConditionExpression, FilterExpression, KeyConditionExpression). */
extern ExprNode *expr_parse_condition(const char *text, size_t len, ExprArena *arena,
									  ExprError *error);

/* A ProjectionExpression: the document paths to return. */
typedef struct ExprProjection
{
	ExprNode  **paths;			/* EXPR_PATH nodes */
	int			npaths;
} ExprProjection;

/* Parses a ProjectionExpression: path (',' path)*. */
extern bool expr_parse_projection(const char *text, size_t len, ExprArena *arena,
								  ExprProjection *out, ExprError *error);

/* An UpdateExpression action. */
typedef enum ExprActionKind
{
	ACTION_SET,
	ACTION_REMOVE,
	ACTION_ADD,
	ACTION_DELETE
} ExprActionKind;

typedef struct ExprAction
{
	ExprActionKind kind;
	ExprNode   *path;
	ExprNode   *value;			/* NULL for REMOVE */
} ExprAction;

/* An UpdateExpression: its actions in the order written. */
typedef struct ExprUpdate
{
	ExprAction *actions;
	int			nactions;
} ExprUpdate;

/*
 * Parses an UpdateExpression:
 *   (SET path = value (',' ...)* | REMOVE path (',' path)* | ADD path :v (',' ...)*
 *    | DELETE path :v (',' ...)*)+, each clause once;
 *   value := operand (('+' | '-') operand)? | '(' operand ('+' | '-') operand ')'
 *   operand := path | :v | if_not_exists(path, operand) | list_append(operand, operand)
 *            | '(' operand ')'
 */
extern bool expr_parse_update(const char *text, size_t len, ExprArena *arena,
							  ExprUpdate *out, ExprError *error);

/* The comparator's text ("=", "<>", ...). */
extern const char *expr_compare_op_name(ExprCompareOp op);

/* The function's name. */
extern const char *expr_function_name(ExprFunction fn);

/* True when a bare name is one of DynamoDB's reserved words (reserved_words.c). */
extern bool expr_is_reserved_word(const char *name, int len);

#endif							/* DDB_EXPR_H */
