/*
 * expr_eval.h — evaluating condition expressions (FilterExpression and,
 * later, ConditionExpression) over an item.
 *
 * Plain C, like the parser: what a value is and how two values compare is
 * the host's business (src/itemexpr/host.c knows natural jsonb items); the
 * evaluator only walks the tree with DynamoDB's logic.
 */
#ifndef DDB_EXPR_EVAL_H
#define DDB_EXPR_EVAL_H

#include "expr.h"

/* The DynamoDB type of an operand's value; MISSING for an absent attribute. */
typedef enum ExprValueKind
{
	EV_MISSING,
	EV_S,
	EV_N,
	EV_B,
	EV_BOOL,
	EV_NULL,
	EV_M,
	EV_L,
	EV_SS,
	EV_NS,
	EV_BS
} ExprValueKind;

/* An operand's value: its kind and a reference only the host reads. */
typedef struct ExprValue
{
	ExprValueKind kind;
	const void *ref;
} ExprValue;

/* What the evaluator asks of the item and the request. */
typedef struct ExprHost
{
	void	   *ctx;
	/* the value at a document path of the item */
	ExprValue	(*path) (void *ctx, const ExprNode *path);
	/* the value of an ExpressionAttributeValues placeholder */
	ExprValue	(*value) (void *ctx, const ExprNode *value);
	/* order of two values of one scalar kind (S, N or B): <0, 0, >0 */
	int			(*compare) (void *ctx, ExprValue a, ExprValue b);
	/* equality of two values of one kind (sets as sets, maps and lists deeply) */
	bool		(*equal) (void *ctx, ExprValue a, ExprValue b);
	/* begins_with of S on S, or B on B */
	bool		(*begins_with) (void *ctx, ExprValue a, ExprValue prefix);
	/* contains: substring of an S, element of a set or a list */
	bool		(*contains) (void *ctx, ExprValue a, ExprValue b);
	/* size() of a value, or -1 when it has none (N, BOOL, NULL, missing) */
	long		(*size) (void *ctx, ExprValue a);
	/* a number value made from a size, so that size() compares like any N */
	ExprValue	(*number) (void *ctx, long n);
	/* the type name (S, N, ..., BOOL, NULL, L, M) a value of kind S names, or -1 */
	int			(*type_name) (void *ctx, ExprValue name);
} ExprHost;

/* True when the condition holds for the host's item. */
extern bool expr_eval_condition(const ExprNode *cond, const ExprHost *host);

#endif							/* DDB_EXPR_EVAL_H */
