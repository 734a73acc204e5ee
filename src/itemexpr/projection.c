/*
 * projection.c — ProjectionExpression: which attributes (and which parts of
 * nested maps and lists) an operation returns.
 *
 * The paths become a trie, checked for DynamoDB's overlap and conflict
 * errors; an item is projected by walking the trie over it.  A list keeps
 * the asked-for elements in index order, as DynamoDB returns them.
 */
#include "postgres.h"

#include "lib/stringinfo.h"
#include "miscadmin.h"

#include "../ddb_errors.h"
#include "../item/item_codec.h"
#include "itemexpr.h"

/* A step of the trie: a map key or a list index, and what is asked below it. */
struct ProjectionNode
{
	char	   *name;			/* a map key, or NULL for a list index */
	int			index;
	bool		leaf;			/* the whole value is asked for */
	List	   *children;		/* ProjectionNode * */
	const ExprNode *origin;		/* the path that made this step, for messages */
};

/* Adds one path to the trie, raising DynamoDB's errors for overlaps and conflicts. */
static void
add_path(ProjectionNode *root, Placeholders *ph, const char *kind, const ExprNode *path)
{
	ProjectionNode *node = root;
	int			n = path->u.path.nsteps;

	for (int i = 0; i < n; i++)
	{
		ExprPathStep *step = &path->u.path.steps[i];
		char	   *name = step->name ? itemexpr_step_name(ph, kind, step) : NULL;
		ProjectionNode *child = NULL;
		ListCell   *lc;

		foreach(lc, node->children)
		{
			ProjectionNode *c = (ProjectionNode *) lfirst(lc);

			if ((c->name == NULL) != (name == NULL))
				ddb_validation_error("Invalid %s: Two document paths conflict with each other; must remove or rewrite one of these paths; path one: %s, path two: %s",
									 kind, itemexpr_path_text(ph, kind, c->origin, c->origin->u.path.nsteps),
									 itemexpr_path_text(ph, kind, path, n));
			if (name ? strcmp(c->name, name) == 0 : c->index == step->index)
				child = c;
		}
		if (child && (child->leaf || i == n - 1))
			ddb_validation_error("Invalid %s: Two document paths overlap with each other; must remove or rewrite one of these paths; path one: %s, path two: %s",
								 kind, itemexpr_path_text(ph, kind, child->origin, child->origin->u.path.nsteps),
								 itemexpr_path_text(ph, kind, path, n));
		if (child == NULL)
		{
			child = palloc0(sizeof(ProjectionNode));
			child->name = name;
			child->index = step->index;
			child->origin = path;
			node->children = lappend(node->children, child);
		}
		node = child;
	}
	node->leaf = true;
}

/* Parses a ProjectionExpression into its trie; NULL when the request has none. */
ProjectionNode *
itemexpr_projection(Placeholders *ph, const char *text)
{
	ExprArena	arena = {NULL, NULL};
	ExprError	error;
	ExprProjection paths;

	if (text == NULL)
		return NULL;
	itemexpr_check_values(ph);
	arena.alloc = itemexpr_arena_alloc;
	if (!expr_parse_projection(text, strlen(text), &arena, &paths, &error))
		ddb_validation_error("Invalid ProjectionExpression: %s", error.message);
	return itemexpr_path_trie(ph, "ProjectionExpression", paths.paths, paths.npaths);
}

/* The trie of document paths, raising DynamoDB's overlap and conflict errors. */
ProjectionNode *
itemexpr_path_trie(Placeholders *ph, const char *kind, ExprNode **paths, int npaths)
{
	ProjectionNode *root = palloc0(sizeof(ProjectionNode));

	for (int i = 0; i < npaths; i++)
		add_path(root, ph, kind, paths[i]);
	return root;
}

static bool project_value(ProjectionNode *node, JsonbValue *value, JsonbValue *out);

/* The projected map of a map value, or false when nothing of it is asked for and present. */
static bool
project_map(ProjectionNode *node, JsonbContainer *map, bool top_level, JsonbValue *out)
{
	JsonbParseState *state = NULL;
	JsonbValue *result;
	JsonbValue	key;
	JsonbValue	inner;
	int			kept = 0;
	ListCell   *lc;

	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	foreach(lc, node->children)
	{
		ProjectionNode *child = (ProjectionNode *) lfirst(lc);
		JsonbValue	value;
		JsonbValue	projected;

		if (getKeyJsonValueFromContainer(map, child->name, (int) strlen(child->name), &value) == NULL ||
			!project_value(child, &value, &projected))
			continue;
		key.type = jbvString;
		key.val.string.val = child->name;
		key.val.string.len = (int) strlen(child->name);
		pushJsonbValue(&state, WJB_KEY, &key);
		pushJsonbValue(&state, WJB_VALUE, &projected);
		kept++;
	}
	result = pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	if (kept == 0 && !top_level)
		return false;
	ddb_binary_value(JsonbValueToJsonb(result), out);
	/* a map that now reads as a wrapper ($B, $SS, ...) keeps its $M wrapping */
	if (!top_level && item_value_type(out) != ITEM_M)
	{
		state = NULL;
		pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
		key.type = jbvString;
		key.val.string.val = "$M";
		key.val.string.len = 2;
		pushJsonbValue(&state, WJB_KEY, &key);
		inner = *out;
		pushJsonbValue(&state, WJB_VALUE, &inner);
		ddb_binary_value(JsonbValueToJsonb(pushJsonbValue(&state, WJB_END_OBJECT, NULL)), out);
	}
	return true;
}

/* The projected list of a list value: the asked-for elements, in index order. */
static bool
project_list(ProjectionNode *node, JsonbContainer *list, JsonbValue *out)
{
	JsonbParseState *state = NULL;
	JsonbValue *result;
	int			kept = 0;
	uint32		size = JsonContainerSize(list);

	pushJsonbValue(&state, WJB_BEGIN_ARRAY, NULL);
	for (uint32 i = 0; i < size; i++)
	{
		ListCell   *lc;

		foreach(lc, node->children)
		{
			ProjectionNode *child = (ProjectionNode *) lfirst(lc);
			JsonbValue *elem;
			JsonbValue	projected;

			if ((uint32) child->index != i)
				continue;
			elem = getIthJsonbValueFromContainer(list, i);
			if (elem && project_value(child, elem, &projected))
			{
				pushJsonbValue(&state, WJB_ELEM, &projected);
				kept++;
			}
		}
	}
	result = pushJsonbValue(&state, WJB_END_ARRAY, NULL);
	if (kept == 0)
		return false;
	ddb_binary_value(JsonbValueToJsonb(result), out);
	return true;
}

/* The projection of one value under a trie node; false when nothing is left of it. */
static bool
project_value(ProjectionNode *node, JsonbValue *value, JsonbValue *out)
{
	JsonbValue	inner;
	ItemType	type;

	check_stack_depth();
	if (node->leaf)
	{
		*out = *value;
		return true;
	}
	type = item_value_type(value);
	if (type == ITEM_M)
	{
		JsonbContainer *map = value->val.binary.data;

		if (JsonContainerSize(map) == 1 &&
			getKeyJsonValueFromContainer(map, "$M", 2, &inner) != NULL)
			map = inner.val.binary.data;
		return ((ProjectionNode *) linitial(node->children))->name != NULL &&
			project_map(node, map, false, out);
	}
	if (type == ITEM_L)
		return ((ProjectionNode *) linitial(node->children))->name == NULL &&
			project_list(node, value->val.binary.data, out);
	return false;
}

/* The item as a ProjectionExpression projects it (a new natural item). */
Jsonb *
itemexpr_project(ProjectionNode *projection, Jsonb *item)
{
	JsonbValue	out;

	project_map(projection, &item->root, true, &out);
	return JsonbValueToJsonb(&out);
}

/* The top-level attribute names a projection asks for (char *), in the order given. */
List *
itemexpr_projection_attributes(ProjectionNode *projection)
{
	List	   *names = NIL;
	ListCell   *lc;

	foreach(lc, projection->children)
	{
		ProjectionNode *child = (ProjectionNode *) lfirst(lc);

		if (child->name)
			names = lappend(names, child->name);
	}
	return names;
}
