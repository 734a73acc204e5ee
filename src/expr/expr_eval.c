/*
 * expr_eval.c — DynamoDB's logic for condition expressions, over the
 * host's values (expr_eval.h).  Plain C: no server calls.
 *
 * The rules: = and <> compare values of any kind and never equate two
 * kinds (a number never equals a string); a missing attribute equals
 * nothing, so = is false and <> true; <, <=, >, >= and BETWEEN hold only
 * between two S, two N or two B; functions on a missing attribute are
 * false, but for attribute_not_exists.
 */
#include "expr_eval.h"

/* The value of an operand: a path, a placeholder, or size(path) as a number. */
static ExprValue
operand_value(const ExprNode *node, const ExprHost *host)
{
	ExprValue	missing = {EV_MISSING, NULL};
	long		size;

	switch (node->kind)
	{
		case EXPR_PATH:
			return host->path(host->ctx, node);
		case EXPR_VALUE:
			return host->value(host->ctx, node);
		case EXPR_FUNCTION:
			/* the parser admits size(path) alone among operands */
			size = host->size(host->ctx, host->path(host->ctx, node->u.func.args[0]));
			return size >= 0 ? host->number(host->ctx, size) : missing;
		default:
			return missing;
	}
}

/* True for the kinds <, <=, >, >= and BETWEEN order. */
static inline bool
orderable(ExprValueKind kind)
{
	return kind == EV_S || kind == EV_N || kind == EV_B;
}

/* Compares two operands; *comparable is false when they cannot be ordered. */
static int
compare_operands(const ExprNode *a, const ExprNode *b, const ExprHost *host, bool *comparable)
{
	ExprValue	av = operand_value(a, host);
	ExprValue	bv = operand_value(b, host);

	*comparable = av.kind == bv.kind && orderable(av.kind);
	return *comparable ? host->compare(host->ctx, av, bv) : 0;
}

/* Equality of two operands: same kind and equal value (missing equals nothing). */
static bool
operands_equal(const ExprNode *a, const ExprNode *b, const ExprHost *host)
{
	ExprValue	av = operand_value(a, host);
	ExprValue	bv = operand_value(b, host);

	return av.kind != EV_MISSING && av.kind == bv.kind && host->equal(host->ctx, av, bv);
}

/* A comparison: =, <>, <, <=, >, >=. */
static bool
eval_compare(const ExprNode *node, const ExprHost *host)
{
	bool		comparable;
	int			c;

	switch (node->u.compare.op)
	{
		case CMP_EQ:
			return operands_equal(node->u.compare.left, node->u.compare.right, host);
		case CMP_NE:
			return !operands_equal(node->u.compare.left, node->u.compare.right, host);
		default:
			break;
	}
	c = compare_operands(node->u.compare.left, node->u.compare.right, host, &comparable);
	if (!comparable)
		return false;
	switch (node->u.compare.op)
	{
		case CMP_LT:
			return c < 0;
		case CMP_LE:
			return c <= 0;
		case CMP_GT:
			return c > 0;
		case CMP_GE:
			return c >= 0;
		default:
			return false;
	}
}

/*
 * A function used as a condition; the first operand of attribute_type,
 * begins_with and contains may be any operand ("contains(:v, a)" asks
 * whether the value :v contains a's value).
 */
static bool
eval_function(const ExprNode *node, const ExprHost *host)
{
	ExprValue	a = operand_value(node->u.func.args[0], host);
	ExprValue	b;

	switch (node->u.func.fn)
	{
		case FN_ATTRIBUTE_EXISTS:
			return a.kind != EV_MISSING;
		case FN_ATTRIBUTE_NOT_EXISTS:
			return a.kind == EV_MISSING;
		case FN_ATTRIBUTE_TYPE:
			b = operand_value(node->u.func.args[1], host);
			return a.kind != EV_MISSING && b.kind == EV_S &&
				host->type_name(host->ctx, b) == (int) a.kind;
		case FN_BEGINS_WITH:
			b = operand_value(node->u.func.args[1], host);
			return (a.kind == EV_S || a.kind == EV_B) && a.kind == b.kind &&
				host->begins_with(host->ctx, a, b);
		case FN_CONTAINS:
			b = operand_value(node->u.func.args[1], host);
			return a.kind != EV_MISSING && b.kind != EV_MISSING && host->contains(host->ctx, a, b);
		case FN_SIZE:
		case FN_IF_NOT_EXISTS:
		case FN_LIST_APPEND:
			return false;		/* the parser keeps these among operands and SET values */
	}
	return false;
}

/* True when the condition holds for the host's item. */
bool
expr_eval_condition(const ExprNode *cond, const ExprHost *host)
{
	bool		comparable;

	switch (cond->kind)
	{
		case EXPR_AND:
			return expr_eval_condition(cond->u.logic.left, host) &&
				expr_eval_condition(cond->u.logic.right, host);
		case EXPR_OR:
			return expr_eval_condition(cond->u.logic.left, host) ||
				expr_eval_condition(cond->u.logic.right, host);
		case EXPR_NOT:
			return !expr_eval_condition(cond->u.logic.left, host);
		case EXPR_COMPARE:
			return eval_compare(cond, host);
		case EXPR_BETWEEN:
			return compare_operands(cond->u.between.operand, cond->u.between.low, host,
									&comparable) >= 0 && comparable &&
				compare_operands(cond->u.between.operand, cond->u.between.high, host,
								 &comparable) <= 0 && comparable;
		case EXPR_IN:
			for (int i = 0; i < cond->u.in.nlist; i++)
				if (operands_equal(cond->u.in.operand, cond->u.in.list[i], host))
					return true;
			return false;
		case EXPR_FUNCTION:
			return eval_function(cond, host);
		case EXPR_PATH:
		case EXPR_VALUE:
		case EXPR_PLUS:
		case EXPR_MINUS:
			return false;		/* the parser never makes these a condition */
	}
	return false;
}
