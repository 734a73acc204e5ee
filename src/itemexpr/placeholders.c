/*
 * placeholders.c — ExpressionAttributeNames and ExpressionAttributeValues:
 * #name and :value placeholders resolved for an expression (undefined ones
 * refused, used ones noted so that unused ones can be refused too), and the
 * adapter between the plain-C expression parser and the server.
 */
#include "postgres.h"

#include "../ddb_errors.h"
#include "../item/item_codec.h"
#include "itemexpr.h"

/* The placeholders of a SQL function call: names ({"#n": "name"}) and natural values ({":v": 1}), either NULL. */
void
itemexpr_sql_placeholders(Placeholders *ctx, Jsonb *names, Jsonb *values)
{
	memset(ctx, 0, sizeof(*ctx));
	if (names && !JB_ROOT_IS_OBJECT(names))
		ddb_validation_error("names must be a jsonb object of placeholders, such as {\"#n\": \"name\"}");
	if (values && !JB_ROOT_IS_OBJECT(values))
		ddb_validation_error("vals must be a jsonb object of placeholders, such as {\":v\": 1}");
	ctx->names = names ? &names->root : NULL;
	/* canonical once (numbers, sets), as an item's attributes would be */
	ctx->values = values ? &item_canonical(&values->root)->root : NULL;
	ctx->natural_values = true;
}

/* Arena allocation for the expression parser: palloc in the current context. */
void *
itemexpr_arena_alloc(void *context, size_t size)
{
	return palloc(size);
}

/* Parses a condition expression, raising DynamoDB's errors. */
ExprNode *
itemexpr_parse_condition(Placeholders *ctx, const char *kind, const char *text)
{
	ExprArena	arena = {itemexpr_arena_alloc, NULL};
	ExprError	error;
	ExprNode   *root;

	itemexpr_check_values(ctx);
	root = expr_parse_condition(text, strlen(text), &arena, &error);
	if (root == NULL)
		ddb_validation_error("Invalid %s: %s", kind, error.message);
	return root;
}

/* Records a used placeholder once. */
static List *
note_used(List *used, const char *name)
{
	ListCell   *lc;

	foreach(lc, used)
		if (strcmp((char *) lfirst(lc), name) == 0)
			return used;
	return lappend(used, pstrdup(name));
}

/* The attribute name a path step stands for. */
char *
itemexpr_step_name(Placeholders *ctx, const char *kind, ExprPathStep *step)
{
	char	   *name = pnstrdup(step->name, step->name_len);
	JsonbValue	v;

	if (!step->placeholder)
		return name;
	if (ctx->names == NULL ||
		getKeyJsonValueFromContainer(ctx->names, name, step->name_len, &v) == NULL)
		ddb_validation_error("Invalid %s: An expression attribute name used in the document path is not defined; attribute name: %s",
							 kind, name);
	if (v.type != jbvString)
		ereport(ERROR,
				(errcode(ERRCODE_DDB_SERIALIZATION),
				 errmsg("Unexpected value type in payload for ExpressionAttributeNames: expected string values")));
	if (v.val.string.len == 0)
		ddb_validation_error("ExpressionAttributeNames contains invalid value: Empty attribute name for key %s", name);
	item_check_name_length(v.val.string.len, "ExpressionAttributeNames");
	ctx->used_names = note_used(ctx->used_names, name);
	return pnstrdup(v.val.string.val, v.val.string.len);
}

/* "[a, b, [2]]": the first nsteps of a path as DynamoDB's messages print it. */
char *
itemexpr_path_text(Placeholders *ph, const char *kind, const ExprNode *path, int nsteps)
{
	StringInfoData buf;

	initStringInfo(&buf);
	appendStringInfoChar(&buf, '[');
	for (int i = 0; i < nsteps; i++)
	{
		ExprPathStep *step = &path->u.path.steps[i];

		if (i > 0)
			appendStringInfoString(&buf, ", ");
		if (step->name)
			appendStringInfoString(&buf, itemexpr_step_name(ph, kind, step));
		else
			appendStringInfo(&buf, "[%d]", step->index);
	}
	appendStringInfoChar(&buf, ']');
	return buf.data;
}

/*
 * A placeholder's AttributeValue made natural; a value DynamoDB refuses is
 * refused in its words for a placeholder: "ExpressionAttributeValues
 * contains invalid value: <why> for key :v".
 */
static void
value_from_dynamodb(const char *name, JsonbValue *av, JsonbValue *out)
{
	MemoryContext cxt = CurrentMemoryContext;

	PG_TRY();
	{
		item_value_from_dynamodb(av, out);
	}
	PG_CATCH();
	{
		ErrorData  *error;

		MemoryContextSwitchTo(cxt);
		error = CopyErrorData();
		if (error->sqlerrcode != ERRCODE_DDB_VALIDATION)
			PG_RE_THROW();
		FlushErrorState();
		ddb_validation_error("ExpressionAttributeValues contains invalid value: %s for key %s", error->message, name);
	}
	PG_END_TRY();
}

/* A value of ExpressionAttributeValues made natural, kept for the request. */
typedef struct ConvertedValue
{
	char	   *name;
	JsonbValue	value;
} ConvertedValue;

/* The natural value of a :value placeholder (converted once, by itemexpr_check_values). */
void
itemexpr_value(Placeholders *ctx, const char *kind, ExprNode *value, JsonbValue *out)
{
	char	   *name = pnstrdup(value->u.value.name, value->u.value.name_len);
	JsonbValue	av;
	ListCell   *lc;

	if (ctx->values == NULL ||
		getKeyJsonValueFromContainer(ctx->values, name, value->u.value.name_len, &av) == NULL)
		ddb_validation_error("Invalid %s: An expression attribute value used in expression is not defined; attribute value: %s",
							 kind, name);
	ctx->used_values = note_used(ctx->used_values, name);
	if (ctx->natural_values)
	{
		*out = av;
		return;
	}
	itemexpr_check_values(ctx);
	foreach(lc, ctx->converted)
	{
		ConvertedValue *cv = (ConvertedValue *) lfirst(lc);

		if (strcmp(cv->name, name) == 0)
		{
			*out = cv->value;
			return;
		}
	}
	elog(ERROR, "ddb_model: placeholder %s was not converted", name);
}

/*
 * Converts every value of ExpressionAttributeValues, in the map's order, the
 * first time an expression is parsed: DynamoDB refuses a bad value before
 * it reads any expression (a syntax error or an undefined name comes after).
 * The natural values are kept for itemexpr_value, in the request's context.
 */
void
itemexpr_check_values(Placeholders *ph)
{
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	char	   *name = NULL;

	if (ph->values_checked || ph->natural_values || ph->values == NULL)
		return;
	ph->values_checked = true;
	it = JsonbIteratorInit(ph->values);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		ConvertedValue *cv;

		if (tok == WJB_KEY)
			name = pnstrdup(v.val.string.val, v.val.string.len);
		else if (tok == WJB_VALUE)
		{
			cv = palloc(sizeof(ConvertedValue));
			cv->name = name;
			value_from_dynamodb(name, &v, &cv->value);
			ph->converted = lappend(ph->converted, cv);
		}
	}
}

/* Raises for defined placeholders that no expression used. */
static void
check_unused_map(JsonbContainer *map, List *used, const char *what)
{
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	StringInfoData unused;

	if (map == NULL)
		return;
	initStringInfo(&unused);
	it = JsonbIteratorInit(map);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		char	   *name;
		ListCell   *lc;
		bool		found = false;

		if (tok != WJB_KEY)
			continue;
		name = pnstrdup(v.val.string.val, v.val.string.len);
		foreach(lc, used)
			found |= strcmp((char *) lfirst(lc), name) == 0;
		if (!found)
			appendStringInfo(&unused, "%s%s", unused.len ? ", " : "", name);
	}
	if (unused.len > 0)
		ddb_validation_error("Value provided in %s unused in expressions: keys: {%s}", what, unused.data);
}

/* Raises when a request defined placeholders that no expression used. */
void
itemexpr_check_unused(Placeholders *ctx)
{
	check_unused_map(ctx->names, ctx->used_names, "ExpressionAttributeNames");
	check_unused_map(ctx->values, ctx->used_values, "ExpressionAttributeValues");
}
