/*
 * update.c — UpdateExpression: SET (with + and -, if_not_exists,
 * list_append), REMOVE, ADD (numbers and sets) and DELETE (sets), applied to
 * a natural item as DynamoDB does.
 *
 * Each action becomes a jsonb_set or a path delete on the item; a document
 * path is translated into a jsonb path by walking the item (a map stored
 * wrapped in {"$M": ...} adds that key).  Every path and every operand of
 * SET refers to the item as it was before the update, list indexes
 * included (removals go last, last path first), and the result goes back
 * through the canonical form (sets sorted, numbers within DynamoDB's range).
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/numeric.h"

#include "../ddb_errors.h"
#include "../item/item_codec.h"
#include "itemexpr.h"

/* Raises DynamoDB's error for a document path that cannot be updated. */
static void
report_bad_path(void)
{
	ddb_validation_error("The document path provided in the update expression is invalid for update");
}

/*
 * Raises DynamoDB's error for an operand taken from the item (an attribute,
 * or what if_not_exists gave) whose type the operator does not take; a
 * placeholder of the wrong type is refused before, by itemexpr_check.
 */
static pg_attribute_noreturn() void
report_operand_type(void)
{
	ddb_validation_error("An operand in the update expression has an incorrect data type");
}

/* DynamoDB's long name of a type, as its ADD and DELETE messages give it. */
static const char *
long_type_name(ItemType type)
{
	switch (type)
	{
		case ITEM_S:
			return "STRING";
		case ITEM_N:
			return "NUMBER";
		case ITEM_B:
			return "BINARY";
		case ITEM_BOOL:
			return "BOOLEAN";
		case ITEM_NULL:
			return "NULL";
		case ITEM_L:
			return "LIST";
		case ITEM_M:
			return "MAP";
		case ITEM_SS:
			return "STRING_SET";
		case ITEM_NS:
			return "NUMBER_SET";
		case ITEM_BS:
			return "BINARY_SET";
	}
	return "UNKNOWN";
}

/*
 * ADD takes a number or a set, DELETE a set: the placeholder is checked
 * before any item is read.
 */
static void
check_add_delete_value(Placeholders *ph, const ExprAction *action)
{
	JsonbValue	value;
	ItemType	type;
	bool		is_set;

	itemexpr_value(ph, "UpdateExpression", action->value, &value);
	type = item_value_type(&value);
	is_set = type == ITEM_SS || type == ITEM_NS || type == ITEM_BS;
	if (action->kind == ACTION_ADD && !is_set && type != ITEM_N)
		ddb_validation_error("Invalid UpdateExpression: Incorrect operand type for operator or function; operator: ADD, operand type: %s, typeSet: ALLOWED_FOR_ADD_OPERAND",
							 long_type_name(type));
	if (action->kind == ACTION_DELETE && !is_set)
		ddb_validation_error("Invalid UpdateExpression: Incorrect operand type for operator or function; operator: DELETE, operand type: %s, typeSet: ALLOWED_FOR_DELETE_OPERAND",
							 long_type_name(type));
}

/* A natural value as a Jsonb of its own (jsonb_set's new value). */
static Jsonb *
value_jsonb(JsonbValue *v)
{
	JsonbParseState *state = NULL;

	if (v->type == jbvBinary)
	{
		/* a container found by lookup may carry no length: rebuild it whole */
		pushJsonbValue(&state, WJB_BEGIN_ARRAY, NULL);
		pushJsonbValue(&state, WJB_ELEM, v);
		return DatumGetJsonbP(DirectFunctionCall2(jsonb_array_element,
												  JsonbPGetDatum(JsonbValueToJsonb(pushJsonbValue(&state, WJB_END_ARRAY, NULL))),
												  Int32GetDatum(0)));
	}
	return JsonbValueToJsonb(v);
}

/* The map inside a map value ({"$M": ...} unwrapped), or NULL for any other type. */
static JsonbContainer *
map_of(JsonbValue *v)
{
	JsonbValue	inner;

	if (item_value_type(v) != ITEM_M)
		return NULL;
	if (JsonContainerSize(v->val.binary.data) == 1 &&
		getKeyJsonValueFromContainer(v->val.binary.data, "$M", 2, &inner) != NULL)
		return inner.val.binary.data;
	return v->val.binary.data;
}

/* A document path resolved in an item: its jsonb path and the value there. */
typedef struct ResolvedPath
{
	Datum	   *elems;			/* the jsonb path's steps, as text */
	int		   *indexes;		/* per step: the list index, or -1 for a key */
	int			nelems;
	ArrayType  *array;			/* elems as a text[] (jsonb_set's path) */
	JsonbValue	found;			/* the value at the path, when present */
	bool		present;
} ResolvedPath;

/* Appends one step to a jsonb path being built. */
static void
add_step(ResolvedPath *out, const char *text, int index)
{
	out->elems[out->nelems] = CStringGetTextDatum(text);
	out->indexes[out->nelems++] = index;
}

/*
 * Translates a document path into the jsonb path of the item; out gets it
 * and the value there (when present).  Returns false when a parent is
 * missing.  A step through a value that is not the map or list it needs
 * raises for a path the update writes (target); a path it reads finds
 * nothing there, as DynamoDB answers ("refers to an attribute that does not
 * exist", or if_not_exists's default).
 */
static bool
jsonb_path(Jsonb *item, Placeholders *ph, const ExprNode *path, ResolvedPath *out, bool target)
{
	int			n = path->u.path.nsteps;
	JsonbContainer *container = &item->root;
	bool		in_list = false;

	out->elems = palloc(sizeof(Datum) * (2 * n));
	out->indexes = palloc(sizeof(int) * (2 * n));
	out->nelems = 0;
	out->present = false;
	for (int i = 0; i < n; i++)
	{
		ExprPathStep *step = &path->u.path.steps[i];
		JsonbValue	next;
		bool		got;

		if (step->name)
		{
			char	   *name = itemexpr_step_name(ph, "UpdateExpression", step);

			if (in_list && !target)
				return false;
			if (in_list)
				report_bad_path();
			add_step(out, name, -1);
			got = getKeyJsonValueFromContainer(container, name, (int) strlen(name), &next) != NULL;
		}
		else
		{
			JsonbValue *elem;

			if (!in_list && !target)
				return false;
			if (!in_list)
				report_bad_path();
			add_step(out, psprintf("%d", step->index), step->index);
			elem = getIthJsonbValueFromContainer(container, (uint32) step->index);
			got = elem != NULL;
			if (got)
				next = *elem;
		}
		if (i == n - 1)
		{
			out->present = got;
			if (got)
				out->found = next;
			break;
		}
		if (!got)
			return false;
		/* descend: a map (adding "$M" when it is stored wrapped) or a list */
		if (item_value_type(&next) == ITEM_L)
		{
			container = next.val.binary.data;
			in_list = true;
		}
		else if (map_of(&next) != NULL)
		{
			if (map_of(&next) != next.val.binary.data)
				add_step(out, "$M", -1);
			container = map_of(&next);
			in_list = false;
		}
		else if (!target)
			return false;
		else
			report_bad_path();
	}
	out->array = construct_array(out->elems, out->nelems, TEXTOID, -1, false, TYPALIGN_INT);
	return true;
}

/* The value at a path of an item; false when absent. */
static bool
value_at(Jsonb *item, Placeholders *ph, const ExprNode *path, JsonbValue *out)
{
	ResolvedPath rp;

	if (!jsonb_path(item, ph, path, &rp, false) || !rp.present)
		return false;
	*out = rp.found;
	return true;
}

/* Evaluates a SET operand or value against the item before the update. */
static void
set_value(Jsonb *before, Placeholders *ph, const ExprNode *node, JsonbValue *out)
{
	JsonbValue	a;
	JsonbValue	b;

	switch (node->kind)
	{
		case EXPR_PATH:
			if (!value_at(before, ph, node, out))
				ddb_validation_error("The provided expression refers to an attribute that does not exist in the item");
			return;
		case EXPR_VALUE:
			itemexpr_value(ph, "UpdateExpression", (ExprNode *) node, out);
			return;
		case EXPR_PLUS:
		case EXPR_MINUS:
			set_value(before, ph, node->u.logic.left, &a);
			set_value(before, ph, node->u.logic.right, &b);
			if (item_value_type(&a) != ITEM_N || item_value_type(&b) != ITEM_N)
				report_operand_type();
			out->type = jbvNumeric;
			out->val.numeric = DatumGetNumeric(DirectFunctionCall2(node->kind == EXPR_PLUS ? numeric_add : numeric_sub,
																   NumericGetDatum(a.val.numeric),
																   NumericGetDatum(b.val.numeric)));
			return;
		case EXPR_FUNCTION:
			if (node->u.func.fn == FN_IF_NOT_EXISTS)
			{
				if (!value_at(before, ph, node->u.func.args[0], out))
					set_value(before, ph, node->u.func.args[1], out);
				return;
			}
			/* list_append(a, b) */
			set_value(before, ph, node->u.func.args[0], &a);
			set_value(before, ph, node->u.func.args[1], &b);
			if (item_value_type(&a) != ITEM_L || item_value_type(&b) != ITEM_L)
				report_operand_type();
			{
				Jsonb	   *joined = DatumGetJsonbP(DirectFunctionCall2(jsonb_concat,
																		 JsonbPGetDatum(value_jsonb(&a)),
																		 JsonbPGetDatum(value_jsonb(&b))));

				ddb_binary_value(joined, out);
			}
			return;
		default:
			elog(ERROR, "ddb_model: unexpected node in an update value");
	}
}

/* The elements of a set value, as an array Jsonb. */
static Jsonb *
set_array(JsonbValue *set)
{
	JsonbIterator *it = JsonbIteratorInit(set->val.binary.data);
	JsonbValue	k;
	JsonbValue	inner;

	JsonbIteratorNext(&it, &k, true);
	JsonbIteratorNext(&it, &k, true);
	JsonbIteratorNext(&it, &inner, true);
	return value_jsonb(&inner);
}

/* A set value of a type from an array Jsonb of elements. */
static Jsonb *
make_set(ItemType type, Jsonb *elements)
{
	JsonbParseState *state = NULL;
	JsonbValue	k;
	JsonbValue	v;

	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	k.type = jbvString;
	k.val.string.val = type == ITEM_SS ? "$SS" : type == ITEM_NS ? "$NS" : "$BS";
	k.val.string.len = 3;
	pushJsonbValue(&state, WJB_KEY, &k);
	v.type = jbvBinary;
	v.val.binary.data = &elements->root;
	v.val.binary.len = VARSIZE(elements) - VARHDRSZ;
	pushJsonbValue(&state, WJB_VALUE, &v);
	return JsonbValueToJsonb(pushJsonbValue(&state, WJB_END_OBJECT, NULL));
}

/* The elements of a, without those equal to one of b (or with b's added). */
static Jsonb *
set_combine(Jsonb *a, Jsonb *b, bool add)
{
	JsonbParseState *state = NULL;
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;

	pushJsonbValue(&state, WJB_BEGIN_ARRAY, NULL);
	it = JsonbIteratorInit(&a->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
		if (tok == WJB_ELEM && (add || !findJsonbValueFromContainer(&b->root, JB_FARRAY, &v)))
			pushJsonbValue(&state, WJB_ELEM, &v);
	if (add)
	{
		it = JsonbIteratorInit(&b->root);
		while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
			if (tok == WJB_ELEM && !findJsonbValueFromContainer(&a->root, JB_FARRAY, &v))
				pushJsonbValue(&state, WJB_ELEM, &v);
	}
	return JsonbValueToJsonb(pushJsonbValue(&state, WJB_END_ARRAY, NULL));
}

/* Sets the value at a jsonb path (appending past the end of a list). */
static Jsonb *
set_at(Jsonb *item, ArrayType *path, Jsonb *value)
{
	return DatumGetJsonbP(DirectFunctionCall4(jsonb_set, JsonbPGetDatum(item), PointerGetDatum(path),
											  JsonbPGetDatum(value), BoolGetDatum(true)));
}

/* Deletes the value at a jsonb path (a list closes the gap). */
static Jsonb *
delete_at(Jsonb *item, ArrayType *path)
{
	return DatumGetJsonbP(DirectFunctionCall2(jsonb_delete_path, JsonbPGetDatum(item),
											  PointerGetDatum(path)));
}

/* An action of an update with its path resolved in the item before the update. */
typedef struct ResolvedAction
{
	const ExprAction *action;
	ResolvedPath path;
	bool		remove;			/* removes its path once every action in place is done */
} ResolvedAction;

/*
 * Applies an action that leaves every list index in place (SET, ADD,
 * DELETE; past the end of a list, SET and ADD append); a REMOVE, or a
 * DELETE that empties its set, is only marked for removal.  before is the
 * item the update started from.
 */
static Jsonb *
apply_in_place(Jsonb *item, Jsonb *before, Placeholders *ph, ResolvedAction *ra)
{
	const ExprAction *action = ra->action;
	ArrayType  *path = ra->path.array;
	JsonbValue	current = ra->path.found;
	JsonbValue	value;
	ItemType	ctype;
	ItemType	vtype;

	if (action->kind == ACTION_REMOVE)
	{
		ra->remove = ra->path.present;
		return item;
	}
	if (action->kind == ACTION_SET)
	{
		set_value(before, ph, action->value, &value);
		return set_at(item, path, value_jsonb(&value));
	}
	itemexpr_value(ph, "UpdateExpression", action->value, &value);
	vtype = item_value_type(&value);
	if (action->kind == ACTION_ADD)
	{
		if (!ra->path.present)
			return set_at(item, path, value_jsonb(&value));
		ctype = item_value_type(&current);
		if (ctype != vtype)
			ddb_validation_error("An operand in the update expression has an incorrect data type");
		if (vtype == ITEM_N)
		{
			value.val.numeric = DatumGetNumeric(DirectFunctionCall2(numeric_add,
																	NumericGetDatum(current.val.numeric),
																	NumericGetDatum(value.val.numeric)));
			return set_at(item, path, value_jsonb(&value));
		}
		return set_at(item, path, make_set(vtype, set_combine(set_array(&current), set_array(&value), true)));
	}
	/* DELETE: elements out of a set; a set left empty goes */
	if (!ra->path.present)
		return item;
	ctype = item_value_type(&current);
	if (ctype != vtype)
		ddb_validation_error("An operand in the update expression has an incorrect data type");
	{
		Jsonb	   *left = set_combine(set_array(&current), set_array(&value), false);

		if (JsonContainerSize(&left->root) == 0)
		{
			ra->remove = true;
			return item;
		}
		return set_at(item, path, make_set(vtype, left));
	}
}

/* qsort order of resolved actions: by jsonb path, list indexes as numbers. */
static int
compare_resolved(const void *a, const void *b)
{
	const ResolvedPath *x = &((const ResolvedAction *) a)->path;
	const ResolvedPath *y = &((const ResolvedAction *) b)->path;

	for (int i = 0; i < x->nelems && i < y->nelems; i++)
	{
		int			c;

		if (x->indexes[i] >= 0 && y->indexes[i] >= 0)
			c = (x->indexes[i] > y->indexes[i]) - (x->indexes[i] < y->indexes[i]);
		else
			c = strcmp(TextDatumGetCString(x->elems[i]), TextDatumGetCString(y->elems[i]));
		if (c != 0)
			return c;
	}
	return (x->nelems > y->nelems) - (x->nelems < y->nelems);
}

/*
 * Applies an UpdateExpression to an item; returns the new canonical item.
 * As in DynamoDB every path, list indexes included, refers to the item as
 * it was before the update: the actions that keep indexes in place go
 * first (in path order, so that appends past a list's end follow their
 * indexes), then the removals, last path first, so that removing an
 * element never moves one still to remove.  The paths do not overlap
 * (itemexpr_path_trie refuses that).
 */
static Jsonb *
apply_update_expression(const ExprUpdate *update, Placeholders *ph, Jsonb *item)
{
	int			n = update->nactions;
	ResolvedAction *ra = palloc0(sizeof(ResolvedAction) * Max(1, n));
	Jsonb	   *result = item;

	for (int i = 0; i < n; i++)
	{
		ra[i].action = &update->actions[i];
		if (!jsonb_path(item, ph, ra[i].action->path, &ra[i].path, true))
			report_bad_path();
	}
	qsort(ra, n, sizeof(ResolvedAction), compare_resolved);
	for (int i = 0; i < n; i++)
		result = apply_in_place(result, item, ph, &ra[i]);
	for (int i = n - 1; i >= 0; i--)
		if (ra[i].remove)
			result = delete_at(result, ra[i].path.array);
	return item_canonical(&result->root);
}

/* What an UpdateItem applies to the current item (or to the key of an absent one). */
typedef struct UpdateChange
{
	TableDef   *def;
	Datum		pk;
	Datum		sk;
	ExprUpdate *update;			/* NULL: the item is only created if absent */
	Placeholders *ph;
} UpdateChange;

/* The item an UpdateItem starts from when none exists: its key attributes. */
static Jsonb *
key_only_item(UpdateChange *uc)
{
	JsonbParseState *state = NULL;
	JsonbValue	v;

	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	ddb_push_key(&state, uc->def->keys.hash_key);
	item_key_to_value(uc->pk, &v);
	pushJsonbValue(&state, WJB_VALUE, &v);
	if (uc->def->keys.range_key)
	{
		ddb_push_key(&state, uc->def->keys.range_key);
		item_key_to_value(uc->sk, &v);
		pushJsonbValue(&state, WJB_VALUE, &v);
	}
	return JsonbValueToJsonb(pushJsonbValue(&state, WJB_END_OBJECT, NULL));
}

/* WriteChange callback: the updated item. */
static Jsonb *
apply_update(void *arg, Jsonb *current)
{
	UpdateChange *uc = (UpdateChange *) arg;
	Jsonb	   *base = current ? current : key_only_item(uc);

	return uc->update ? apply_update_expression(uc->update, uc->ph, base) : base;
}

/*
 * Parses an UpdateExpression for a table: placeholders resolved, paths
 * checked, key attributes refused; *paths gets the trie of the updated paths
 * (for UPDATED_OLD / UPDATED_NEW).  The checks run in the order DynamoDB
 * Local was seen to run them: every value converted, the syntax, the
 * updated paths (their names, then overlaps), the operands from the last
 * action back to the first, and last the key attributes.
 */
ExprUpdate *
itemexpr_parse_update(TableDef *def, Placeholders *ph, const char *text, ProjectionNode **paths)
{
	ExprArena	arena = {itemexpr_arena_alloc, NULL};
	ExprError	error;
	ExprUpdate *update = palloc(sizeof(ExprUpdate));
	ExprNode  **action_paths;

	itemexpr_check_values(ph);
	if (!expr_parse_update(text, strlen(text), &arena, update, &error))
		ddb_validation_error("Invalid UpdateExpression: %s", error.message);
	action_paths = palloc(sizeof(ExprNode *) * Max(1, update->nactions));
	for (int i = 0; i < update->nactions; i++)
		action_paths[i] = update->actions[i].path;
	*paths = itemexpr_path_trie(ph, "UpdateExpression", action_paths, update->nactions);
	for (int i = update->nactions - 1; i >= 0; i--)
	{
		ExprAction *action = &update->actions[i];

		itemexpr_check(ph, "UpdateExpression", action->path);
		if (action->value)
			itemexpr_check(ph, "UpdateExpression", action->value);
		if (action->kind == ACTION_ADD || action->kind == ACTION_DELETE)
			check_add_delete_value(ph, action);
	}
	for (int i = 0; i < update->nactions; i++)
	{
		char	   *top = itemexpr_step_name(ph, "UpdateExpression", &update->actions[i].path->u.path.steps[0]);

		if (strcmp(top, def->keys.hash_key) == 0 ||
			(def->keys.range_key && strcmp(top, def->keys.range_key) == 0))
			ddb_validation_error("One or more parameter values were invalid: Cannot update attribute %s. This attribute is part of the key",
								 top);
	}
	return update;
}

/*
 * Applies an update (NULL: only creates the item from its key if absent)
 * under a condition; false when the condition failed (*old is the current item).
 */
bool
itemexpr_store_update(TableDef *def, Datum pk, Datum sk, ExprUpdate *update, Placeholders *ph,
				 WriteCondition *cond, Jsonb **old, Jsonb **written)
{
	UpdateChange uc = {def, pk, sk, update, ph};
	WriteChange change = {apply_update, &uc};

	return store_update(def, pk, sk, cond, &change, old, written);
}

/* The attributes an UpdateItem returns for a ReturnValues option, or NULL for none. */
Jsonb *
itemexpr_update_returned(const char *rv, ProjectionNode *paths, Jsonb *old, Jsonb *written)
{
	if (strcmp(rv, "ALL_OLD") == 0)
		return old;
	if (strcmp(rv, "ALL_NEW") == 0)
		return written;
	if (strcmp(rv, "UPDATED_OLD") == 0)
		return old && paths ? itemexpr_project(paths, old) : NULL;
	if (strcmp(rv, "UPDATED_NEW") == 0)
		return paths ? itemexpr_project(paths, written) : NULL;
	return NULL;
}
