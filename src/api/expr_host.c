/*
 * expr_host.c — the evaluator's host over natural jsonb items: document
 * paths, placeholder values, and DynamoDB's comparisons between values.
 */
#include "postgres.h"

#include "common/base64.h"
#include "mb/pg_wchar.h"
#include "utils/builtins.h"
#include "utils/numeric.h"

#include "../ddb_errors.h"
#include "../item/item_codec.h"
#include "api.h"

/* A value placeholder's natural value, converted once per request. */
typedef struct CachedValue
{
	const ExprNode *node;
	JsonbValue	value;
} CachedValue;

/* The kind of a natural value (the orders of ItemType and ExprValueKind agree). */
static ExprValue
natural_value(JsonbValue *v)
{
	ExprValue	result;
	JsonbValue *copy = palloc(sizeof(JsonbValue));

	*copy = *v;
	result.kind = (ExprValueKind) (item_value_type(copy) + 1);
	result.ref = copy;
	return result;
}

/* The JsonbValue behind an ExprValue. */
static inline JsonbValue *
jv(ExprValue v)
{
	return (JsonbValue *) v.ref;
}

/* The container a map or list value stands for ({"$M": ...} unwrapped). */
static JsonbContainer *
container_of(JsonbValue *v)
{
	JsonbValue	inner;
	JsonbContainer *c = v->val.binary.data;

	if (JsonContainerIsObject(c) && JsonContainerSize(c) == 1 &&
		getKeyJsonValueFromContainer(c, "$M", 2, &inner) != NULL && inner.type == jbvBinary)
		return inner.val.binary.data;
	return c;
}

/* The elements of a set value ({"$SS": [...]}, ...). */
static JsonbContainer *
set_elements(JsonbValue *v)
{
	JsonbIterator *it = JsonbIteratorInit(v->val.binary.data);
	JsonbValue	k;
	JsonbValue	inner;

	JsonbIteratorNext(&it, &k, true);	/* begin object */
	JsonbIteratorNext(&it, &k, true);	/* the wrapper key */
	JsonbIteratorNext(&it, &inner, true);
	return inner.val.binary.data;
}

/* The value at a document path of the item. */
static ExprValue
host_path(void *ctx, const ExprNode *path)
{
	HostContext *host = (HostContext *) ctx;
	ExprValue	missing = {EV_MISSING, NULL};
	JsonbValue	current;

	current.type = jbvBinary;
	current.val.binary.data = host->item;
	current.val.binary.len = 0;
	for (int i = 0; i < path->u.path.nsteps; i++)
	{
		ExprPathStep *step = &path->u.path.steps[i];
		ItemType	type = i == 0 ? ITEM_M : item_value_type(&current);
		JsonbContainer *c;
		JsonbValue	next;

		if (step->name != NULL)
		{
			char	   *name = api_step_name(host->ph, host->kind, step);

			if (type != ITEM_M)
				return missing;
			c = i == 0 ? host->item : container_of(&current);
			if (getKeyJsonValueFromContainer(c, name, (int) strlen(name), &next) == NULL)
				return missing;
		}
		else
		{
			JsonbValue *elem;

			if (type != ITEM_L)
				return missing;
			elem = getIthJsonbValueFromContainer(current.val.binary.data, (uint32) step->index);
			if (elem == NULL)
				return missing;
			next = *elem;
		}
		current = next;
	}
	return natural_value(&current);
}

/* The natural value of a placeholder, converted once per request. */
static ExprValue
host_value(void *ctx, const ExprNode *value)
{
	HostContext *host = (HostContext *) ctx;
	ListCell   *lc;
	CachedValue *cached;
	MemoryContext old;

	foreach(lc, host->values)
	{
		cached = (CachedValue *) lfirst(lc);
		if (cached->node == value)
			return natural_value(&cached->value);
	}
	old = MemoryContextSwitchTo(host->cxt);
	cached = palloc(sizeof(CachedValue));
	cached->node = value;
	api_value(host->ph, host->kind, (ExprNode *) value, &cached->value);
	host->values = lappend(host->values, cached);
	MemoryContextSwitchTo(old);
	return natural_value(&cached->value);
}

/* The bytes of a B value. */
static bytea *
binary_bytes(JsonbValue *v)
{
	JsonbValue	inner;
	int			max;
	bytea	   *out;
	int			n;

	getKeyJsonValueFromContainer(v->val.binary.data, "$B", 2, &inner);
	max = pg_b64_dec_len(inner.val.string.len);
	out = palloc(VARHDRSZ + max);
	n = pg_b64_decode(inner.val.string.val, inner.val.string.len, VARDATA(out), max);
	SET_VARSIZE(out, VARHDRSZ + Max(n, 0));
	return out;
}

/* memcmp order of two byte strings, shorter first on a tie. */
static int
bytes_cmp(const char *a, int alen, const char *b, int blen)
{
	int			c = memcmp(a, b, Min(alen, blen));

	return c != 0 ? c : (alen > blen) - (alen < blen);
}

/* Order of two S, N or B values. */
static int
host_compare(void *ctx, ExprValue a, ExprValue b)
{
	bytea	   *x;
	bytea	   *y;

	switch (a.kind)
	{
		case EV_S:
			return bytes_cmp(jv(a)->val.string.val, jv(a)->val.string.len,
							 jv(b)->val.string.val, jv(b)->val.string.len);
		case EV_N:
			return DatumGetInt32(DirectFunctionCall2(numeric_cmp, NumericGetDatum(jv(a)->val.numeric),
													 NumericGetDatum(jv(b)->val.numeric)));
		default:
			x = binary_bytes(jv(a));
			y = binary_bytes(jv(b));
			return bytes_cmp(VARDATA(x), VARSIZE(x) - VARHDRSZ, VARDATA(y), VARSIZE(y) - VARHDRSZ);
	}
}

/* Equality of two values of one kind: canonical forms are equal jsonb. */
static bool
host_equal(void *ctx, ExprValue a, ExprValue b)
{
	JsonbValue *x = jv(a);
	JsonbValue *y = jv(b);

	switch (a.kind)
	{
		case EV_S:
		case EV_N:
			return host_compare(ctx, a, b) == 0;
		case EV_BOOL:
			return x->val.boolean == y->val.boolean;
		case EV_NULL:
			return true;
		default:
			/* B, sets (stored sorted), maps and lists: compare the containers */
			return compareJsonbContainers(x->val.binary.data, y->val.binary.data) == 0;
	}
}

/* begins_with of S on S or B on B. */
static bool
host_begins_with(void *ctx, ExprValue a, ExprValue prefix)
{
	bytea	   *x;
	bytea	   *p;

	if (a.kind == EV_S)
		return jv(prefix)->val.string.len <= jv(a)->val.string.len &&
			memcmp(jv(a)->val.string.val, jv(prefix)->val.string.val, jv(prefix)->val.string.len) == 0;
	x = binary_bytes(jv(a));
	p = binary_bytes(jv(prefix));
	return VARSIZE(p) <= VARSIZE(x) && memcmp(VARDATA(x), VARDATA(p), VARSIZE(p) - VARHDRSZ) == 0;
}

/* contains: a substring of an S, or an element of a set or a list. */
static bool
host_contains(void *ctx, ExprValue a, ExprValue b)
{
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;

	switch (a.kind)
	{
		case EV_S:
			return b.kind == EV_S &&
				(jv(b)->val.string.len == 0 ||
				 (jv(b)->val.string.len <= jv(a)->val.string.len &&
				  memmem(jv(a)->val.string.val, jv(a)->val.string.len,
						 jv(b)->val.string.val, jv(b)->val.string.len) != NULL));
		case EV_SS:
		case EV_NS:
		case EV_BS:
			if (b.kind != (a.kind == EV_SS ? EV_S : a.kind == EV_NS ? EV_N : EV_B))
				return false;
			it = JsonbIteratorInit(set_elements(jv(a)));
			break;
		case EV_L:
			it = JsonbIteratorInit(container_of(jv(a)));
			break;
		default:
			return false;
	}
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		ExprValue	elem;

		if (tok != WJB_ELEM)
			continue;
		/* a B set holds bare base64 strings: compare them as such */
		if (a.kind == EV_BS)
		{
			JsonbValue	inner;

			getKeyJsonValueFromContainer(jv(b)->val.binary.data, "$B", 2, &inner);
			if (v.val.string.len == inner.val.string.len &&
				memcmp(v.val.string.val, inner.val.string.val, v.val.string.len) == 0)
				return true;
			continue;
		}
		elem = natural_value(&v);
		if (elem.kind == b.kind && host_equal(ctx, elem, b))
			return true;
	}
	return false;
}

/* size(): characters of an S, bytes of a B, elements of a set, map or list. */
static long
host_size(void *ctx, ExprValue a)
{
	switch (a.kind)
	{
		case EV_S:
			return pg_mbstrlen_with_len(jv(a)->val.string.val, jv(a)->val.string.len);
		case EV_B:
			return VARSIZE(binary_bytes(jv(a))) - VARHDRSZ;
		case EV_SS:
		case EV_NS:
		case EV_BS:
			return JsonContainerSize(set_elements(jv(a)));
		case EV_M:
		case EV_L:
			return JsonContainerSize(container_of(jv(a)));
		default:
			return -1;
	}
}

/* A number value made from a size. */
static ExprValue
host_number(void *ctx, long n)
{
	JsonbValue	v;

	v.type = jbvNumeric;
	v.val.numeric = int64_to_numeric(n);
	return natural_value(&v);
}

/* The kind an attribute_type name stands for (S = 1, ...), or -1 for a name DynamoDB does not know. */
static int
attribute_type_kind(JsonbValue *name)
{
	static const char *const names[] = {"S", "N", "B", "BOOL", "NULL", "M", "L", "SS", "NS", "BS"};

	for (int i = 0; i < (int) lengthof(names); i++)
		if ((int) strlen(names[i]) == name->val.string.len &&
			memcmp(names[i], name->val.string.val, name->val.string.len) == 0)
			return i + 1;
	return -1;
}

/* The kind an attribute_type name stands for (unknown names were refused up front). */
static int
host_type_name(void *ctx, ExprValue name)
{
	return attribute_type_kind(jv(name));
}

/* Sets up an evaluator host for one request's expression. */
void
api_expr_host(HostContext *ctx, Placeholders *ph, const char *kind, ExprHost *host)
{
	ctx->ph = ph;
	ctx->kind = kind;
	ctx->item = NULL;
	ctx->values = NIL;
	ctx->cxt = CurrentMemoryContext;
	host->ctx = ctx;
	host->path = host_path;
	host->value = host_value;
	host->compare = host_compare;
	host->equal = host_equal;
	host->begins_with = host_begins_with;
	host->contains = host_contains;
	host->size = host_size;
	host->number = host_number;
	host->type_name = host_type_name;
}

/* Raises DynamoDB's error for an operand of the wrong type. */
static void
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
	api_value(ph, kind, (ExprNode *) operand, value);
	return (int) item_value_type(value);
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
		if (x->name ? strcmp(api_step_name(ph, kind, x), api_step_name(ph, kind, y)) != 0
			: x->index != y->index)
			return;
	}
	ddb_validation_error("Invalid %s: The first operand must be distinct from the remaining operands for this operator or function; operator: %s, first operand: %s",
						 kind, op, api_path_text(ph, kind, a, a->u.path.nsteps));
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
	if (host_compare(NULL, natural_value(&lv), natural_value(&hv)) > 0)
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
		case FN_ATTRIBUTE_TYPE:
			type = operand_type(ph, kind, args[1], &v);
			if (type < 0)
				report_operand_type(kind, fn, "{NS,SS,L,BS,N,M,B,BOOL,NULL,S}");
			if (type != ITEM_S)
				report_operand_type(kind, fn, item_type_name((ItemType) type));
			if (attribute_type_kind(&v) < 0)
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
api_check_expression(Placeholders *ph, const char *kind, const ExprNode *node)
{
	JsonbValue	v;

	switch (node->kind)
	{
		case EXPR_PATH:
			for (int i = 0; i < node->u.path.nsteps; i++)
				if (node->u.path.steps[i].name)
					api_step_name(ph, kind, &node->u.path.steps[i]);
			return;
		case EXPR_VALUE:
			api_value(ph, kind, (ExprNode *) node, &v);
			return;
		case EXPR_COMPARE:
			api_check_expression(ph, kind, node->u.compare.left);
			api_check_expression(ph, kind, node->u.compare.right);
			if (node->u.compare.op != CMP_EQ && node->u.compare.op != CMP_NE)
			{
				check_orderable(ph, kind, expr_compare_op_name(node->u.compare.op), node->u.compare.left);
				check_orderable(ph, kind, expr_compare_op_name(node->u.compare.op), node->u.compare.right);
			}
			check_distinct(ph, kind, expr_compare_op_name(node->u.compare.op),
						   node->u.compare.left, node->u.compare.right);
			return;
		case EXPR_BETWEEN:
			api_check_expression(ph, kind, node->u.between.operand);
			api_check_expression(ph, kind, node->u.between.low);
			api_check_expression(ph, kind, node->u.between.high);
			check_orderable(ph, kind, "BETWEEN", node->u.between.operand);
			check_orderable(ph, kind, "BETWEEN", node->u.between.low);
			check_orderable(ph, kind, "BETWEEN", node->u.between.high);
			check_bounds(ph, kind, node->u.between.low, node->u.between.high);
			return;
		case EXPR_IN:
			api_check_expression(ph, kind, node->u.in.operand);
			for (int i = 0; i < node->u.in.nlist; i++)
				api_check_expression(ph, kind, node->u.in.list[i]);
			return;
		case EXPR_AND:
		case EXPR_OR:
		case EXPR_PLUS:
		case EXPR_MINUS:
			api_check_expression(ph, kind, node->u.logic.left);
			api_check_expression(ph, kind, node->u.logic.right);
			return;
		case EXPR_NOT:
			api_check_expression(ph, kind, node->u.logic.left);
			return;
		case EXPR_FUNCTION:
			for (int i = 0; i < node->u.func.nargs; i++)
				api_check_expression(ph, kind, node->u.func.args[i]);
			check_function(ph, kind, node);
			return;
	}
}
