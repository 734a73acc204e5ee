/*
 * host.c — the evaluator's host over natural jsonb items: document
 * paths, placeholder values, and DynamoDB's comparisons between values.
 */
#include "postgres.h"

#include "common/base64.h"
#include "mb/pg_wchar.h"
#include "utils/builtins.h"
#include "utils/numeric.h"

#include "../item/item_codec.h"
#include "itemexpr.h"

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
			char	   *name = itemexpr_step_name(host->ph, host->kind, step);

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
	itemexpr_value(host->ph, host->kind, (ExprNode *) value, &cached->value);
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

/* contains: a substring of an S, a byte subsequence of a B, or an element of a set or a list. */
static bool
host_contains(void *ctx, ExprValue a, ExprValue b)
{
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	bytea	   *x;
	bytea	   *y;

	switch (a.kind)
	{
		case EV_B:
			if (b.kind != EV_B)
				return false;
			x = binary_bytes(jv(a));
			y = binary_bytes(jv(b));
			return VARSIZE(y) == VARHDRSZ ||
				(VARSIZE(y) <= VARSIZE(x) &&
				 memmem(VARDATA(x), VARSIZE(x) - VARHDRSZ, VARDATA(y), VARSIZE(y) - VARHDRSZ) != NULL);
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
int
itemexpr_attribute_type_kind(JsonbValue *name)
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
	return itemexpr_attribute_type_kind(jv(name));
}

/* Sets up an evaluator host for one request's expression. */
void
itemexpr_host(HostContext *ctx, Placeholders *ph, const char *kind, ExprHost *host)
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

/* Order of two natural values of one type, S, N or B (DynamoDB's order). */
int
itemexpr_compare_values(JsonbValue *a, JsonbValue *b)
{
	return host_compare(NULL, natural_value(a), natural_value(b));
}
