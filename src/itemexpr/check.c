/*
 * check.c — the checks DynamoDB makes on an expression before it reads
 * any item: placeholders resolved (undefined ones fail), operand types,
 * distinct operands, BETWEEN bounds, attribute_type's operand.
 */
#include "postgres.h"

#include "utils/builtins.h"
#include "utils/numeric.h"

#include "../ddb_errors.h"
#include "../item/item_codec.h"
#include "itemexpr.h"

/* Raises DynamoDB's error for an operand of the wrong type. */
static pg_attribute_noreturn() void
report_operand_type(const char *kind, const char *op, const char *type)
{
	ddb_validation_error("Invalid %s: Incorrect operand type for operator or function; operator or function: %s, operand type: %s",
						 kind, op, type);
}

/*
 * The type of an operand that is a value placeholder (resolving it), or -1
 * for a path or a function, whose type only an item tells.
 */
static int
operand_type(Placeholders *ph, const char *kind, const ExprNode *operand, JsonbValue *value)
{
	if (operand->kind != EXPR_VALUE)
		return -1;
	itemexpr_value(ph, kind, (ExprNode *) operand, value);
	return (int) item_value_type(value);
}

/* A value placeholder given to an operator that takes one type (+ and - numbers, list_append lists). */
static void
check_operand_is(Placeholders *ph, const char *kind, const char *op, const ExprNode *operand, ItemType want)
{
	JsonbValue	v;
	int			type = operand_type(ph, kind, operand, &v);

	if (type >= 0 && type != (int) want)
		report_operand_type(kind, op, item_type_name((ItemType) type));
}

/* Ordering (<, <=, >, >=, BETWEEN) is defined on strings, numbers and binaries only. */
static void
check_orderable(Placeholders *ph, const char *kind, const char *op, const ExprNode *operand)
{
	JsonbValue	v;
	int			type = operand_type(ph, kind, operand, &v);

	if (type >= 0 && type != ITEM_S && type != ITEM_N && type != ITEM_B)
		report_operand_type(kind, op, item_type_name((ItemType) type));
}

/* A comparison or function of a path with that same path is refused. */
static void
check_distinct(Placeholders *ph, const char *kind, const char *op, const ExprNode *a, const ExprNode *b)
{
	if (a->kind != EXPR_PATH || b->kind != EXPR_PATH || a->u.path.nsteps != b->u.path.nsteps)
		return;
	for (int i = 0; i < a->u.path.nsteps; i++)
	{
		ExprPathStep *x = &a->u.path.steps[i];
		ExprPathStep *y = &b->u.path.steps[i];

		if ((x->name == NULL) != (y->name == NULL))
			return;
		if (x->name ? strcmp(itemexpr_step_name(ph, kind, x), itemexpr_step_name(ph, kind, y)) != 0
			: x->index != y->index)
			return;
	}
	ddb_validation_error("Invalid %s: The first operand must be distinct from the remaining operands for this operator or function; operator: %s, first operand: %s",
						 kind, op, itemexpr_path_text(ph, kind, a, a->u.path.nsteps));
}

/* "AttributeValue: {N:5}": a BETWEEN bound as DynamoDB's messages print it (S, N or B). */
static char *
bound_text(JsonbValue *v, ItemType type)
{
	JsonbValue	inner;

	if (type == ITEM_S)
		return psprintf("AttributeValue: {S:%.*s}", v->val.string.len, v->val.string.val);
	if (type == ITEM_N)
		return psprintf("AttributeValue: {N:%s}",
						DatumGetCString(DirectFunctionCall1(numeric_out, NumericGetDatum(v->val.numeric))));
	getKeyJsonValueFromContainer(v->val.binary.data, "$B", 2, &inner);
	return psprintf("AttributeValue: {B:%.*s}", inner.val.string.len, inner.val.string.val);
}

/* BETWEEN bounds that are both values must have one type, the lower first. */
static void
check_bounds(Placeholders *ph, const char *kind, const ExprNode *low, const ExprNode *high)
{
	JsonbValue	lv;
	JsonbValue	hv;
	int			ltype = operand_type(ph, kind, low, &lv);
	int			htype = operand_type(ph, kind, high, &hv);

	if (ltype < 0 || htype < 0)
		return;
	if (ltype != htype)
		ddb_validation_error("Invalid %s: The BETWEEN operator requires same data type for lower and upper bounds; lower bound operand: %s, upper bound operand: %s",
							 kind, bound_text(&lv, (ItemType) ltype), bound_text(&hv, (ItemType) htype));
	if (itemexpr_compare_values(&lv, &hv) > 0)
		ddb_validation_error("Invalid %s: The BETWEEN operator requires upper bound to be greater than or equal to lower bound; lower bound operand: %s, upper bound operand: %s",
							 kind, bound_text(&lv, (ItemType) ltype), bound_text(&hv, (ItemType) htype));
}

/* The operands DynamoDB accepts for a function, checked before any item is read. */
static void
check_function(Placeholders *ph, const char *kind, const ExprNode *node)
{
	const char *fn = expr_function_name(node->u.func.fn);
	ExprNode  **args = node->u.func.args;
	JsonbValue	v;
	int			type;

	switch (node->u.func.fn)
	{
		case FN_BEGINS_WITH:
			for (int i = 0; i < 2; i++)
			{
				type = operand_type(ph, kind, args[i], &v);
				if (type >= 0 && type != ITEM_S && type != ITEM_B)
					report_operand_type(kind, fn, item_type_name((ItemType) type));
			}
			check_distinct(ph, kind, fn, args[0], args[1]);
			return;
		case FN_CONTAINS:
			check_distinct(ph, kind, fn, args[0], args[1]);
			return;
		case FN_LIST_APPEND:
			check_operand_is(ph, kind, fn, args[0], ITEM_L);
			check_operand_is(ph, kind, fn, args[1], ITEM_L);
			return;
		case FN_ATTRIBUTE_TYPE:
			type = operand_type(ph, kind, args[1], &v);
			if (type < 0)
				report_operand_type(kind, fn, "{NS,SS,L,BS,N,M,B,BOOL,NULL,S}");
			if (type != ITEM_S)
				report_operand_type(kind, fn, item_type_name((ItemType) type));
			if (itemexpr_attribute_type_kind(&v) < 0)
				ddb_validation_error("Invalid %s: Invalid attribute type name found; type: %.*s, valid types: { B,NULL,SS,BOOL,L,BS,N,NS,S,M }",
									 kind, v.val.string.len, v.val.string.val);
			return;
		default:
			return;
	}
}

/*
 * Resolves every placeholder of an expression and applies DynamoDB's static
 * checks (operand types, distinct operands, BETWEEN bounds), so that a bad
 * expression fails before any item is read.
 */
void
itemexpr_check(Placeholders *ph, const char *kind, const ExprNode *node)
{
	JsonbValue	v;

	switch (node->kind)
	{
		case EXPR_PATH:
			for (int i = 0; i < node->u.path.nsteps; i++)
				if (node->u.path.steps[i].name)
					itemexpr_step_name(ph, kind, &node->u.path.steps[i]);
			return;
		case EXPR_VALUE:
			itemexpr_value(ph, kind, (ExprNode *) node, &v);
			return;
		case EXPR_COMPARE:
			itemexpr_check(ph, kind, node->u.compare.left);
			itemexpr_check(ph, kind, node->u.compare.right);
			if (node->u.compare.op != CMP_EQ && node->u.compare.op != CMP_NE)
			{
				check_orderable(ph, kind, expr_compare_op_name(node->u.compare.op), node->u.compare.left);
				check_orderable(ph, kind, expr_compare_op_name(node->u.compare.op), node->u.compare.right);
			}
			check_distinct(ph, kind, expr_compare_op_name(node->u.compare.op),
						   node->u.compare.left, node->u.compare.right);
			return;
		case EXPR_BETWEEN:
			itemexpr_check(ph, kind, node->u.between.operand);
			itemexpr_check(ph, kind, node->u.between.low);
			itemexpr_check(ph, kind, node->u.between.high);
			check_orderable(ph, kind, "BETWEEN", node->u.between.operand);
			check_orderable(ph, kind, "BETWEEN", node->u.between.low);
			check_orderable(ph, kind, "BETWEEN", node->u.between.high);
			check_bounds(ph, kind, node->u.between.low, node->u.between.high);
			return;
		case EXPR_IN:
			itemexpr_check(ph, kind, node->u.in.operand);
			for (int i = 0; i < node->u.in.nlist; i++)
				itemexpr_check(ph, kind, node->u.in.list[i]);
			return;
		case EXPR_AND:
		case EXPR_OR:
			itemexpr_check(ph, kind, node->u.logic.left);
			itemexpr_check(ph, kind, node->u.logic.right);
			return;
		case EXPR_PLUS:
		case EXPR_MINUS:
			itemexpr_check(ph, kind, node->u.logic.left);
			itemexpr_check(ph, kind, node->u.logic.right);
			check_operand_is(ph, kind, node->kind == EXPR_PLUS ? "+" : "-", node->u.logic.left, ITEM_N);
			check_operand_is(ph, kind, node->kind == EXPR_PLUS ? "+" : "-", node->u.logic.right, ITEM_N);
			return;
		case EXPR_NOT:
			itemexpr_check(ph, kind, node->u.logic.left);
			return;
		case EXPR_FUNCTION:
			for (int i = 0; i < node->u.func.nargs; i++)
				itemexpr_check(ph, kind, node->u.func.args[i]);
			check_function(ph, kind, node);
			return;
	}
}
