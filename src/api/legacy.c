/*
 * legacy.c — DynamoDB's legacy parameters (Expected, ConditionalOperator,
 * AttributeUpdates, AttributesToGet, KeyConditions, QueryFilter,
 * ScanFilter), served by rewriting them into the expression parameters they
 * stand for, with generated placeholders (#legacyN, :legacyN).  The
 * operations then run one code path; only the legacy parameters' own checks
 * and messages live here, with the rules for mixing the two styles.
 */
#include "postgres.h"

#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "../ddb_errors.h"
#include "../item/item_codec.h"
#include "../request/request.h"
#include "api.h"

/* The legacy parameters, each with the bit an operation accepts it by. */
static const struct
{
	const char *name;
	int			flag;
}			legacy_params[] = {
	{"Expected", LEGACY_EXPECTED},
	{"AttributeUpdates", LEGACY_ATTRIBUTE_UPDATES},
	{"AttributesToGet", LEGACY_ATTRIBUTES_TO_GET},
	{"KeyConditions", LEGACY_KEY_CONDITIONS},
	{"QueryFilter", LEGACY_QUERY_FILTER},
	{"ScanFilter", LEGACY_SCAN_FILTER},
	{"ConditionalOperator", LEGACY_EXPECTED | LEGACY_QUERY_FILTER | LEGACY_SCAN_FILTER},
};

static const char *const expression_params[] = {
	"UpdateExpression", "ConditionExpression", "KeyConditionExpression", "FilterExpression", "ProjectionExpression",
};

/* The placeholders a rewrite generates, and the expressions it builds. */
typedef struct LegacyRewrite
{
	JsonbContainer *own_names;	/* the request's own placeholders (beside */
	JsonbContainer *own_values; /* KeyConditions), which generated ones avoid */
	int			next;			/* the number of the next generated placeholder */
	List	   *name_keys;		/* char * generated #placeholders ... */
	List	   *names;			/* ... and the char * attribute names they stand for */
	List	   *value_keys;		/* char * generated :placeholders ... */
	List	   *values;			/* ... and the JsonbValue * DynamoDB-JSON values */
	List	   *fields;			/* char * request field names ... */
	List	   *texts;			/* ... and the expression text of each */
} LegacyRewrite;

/* A generated placeholder (#legacyN or :legacyN) the request does not use itself. */
static char *
fresh_placeholder(LegacyRewrite *rw, char sigil, JsonbContainer *own)
{
	for (;;)
	{
		char	   *key = psprintf("%clegacy%d", sigil, rw->next++);

		if (own == NULL || getKeyJsonValueFromContainer(own, key, strlen(key), NULL) == NULL)
			return key;
	}
}

/* A placeholder for an attribute name. */
static char *
name_placeholder(LegacyRewrite *rw, const char *attribute)
{
	char	   *key = fresh_placeholder(rw, '#', rw->own_names);

	rw->name_keys = lappend(rw->name_keys, key);
	rw->names = lappend(rw->names, pstrdup(attribute));
	return key;
}

/* A placeholder for a DynamoDB-JSON value. */
static char *
value_placeholder(LegacyRewrite *rw, JsonbValue *value)
{
	JsonbValue *copy = palloc(sizeof(JsonbValue));
	char	   *key = fresh_placeholder(rw, ':', rw->own_values);

	*copy = *value;
	rw->value_keys = lappend(rw->value_keys, key);
	rw->values = lappend(rw->values, copy);
	return key;
}

/* The member of an object value, or false when absent (or null). */
static bool
member(JsonbValue *object, const char *name, JsonbValue *out)
{
	JsonbValue *v;

	if (object->type != jbvBinary || !JsonContainerIsObject(object->val.binary.data))
		return false;
	v = getKeyJsonValueFromContainer(object->val.binary.data, name, strlen(name), out);
	return v != NULL && v->type != jbvNull;
}

/* A string member, or NULL when absent. */
static char *
string_member(JsonbValue *object, const char *name)
{
	JsonbValue	v;

	if (!member(object, name, &v))
		return NULL;
	if (v.type != jbvString)
		ereport(ERROR,
				(errcode(ERRCODE_DDB_SERIALIZATION),
				 errmsg("Unexpected value type in payload for %s: expected a string", name)));
	return pnstrdup(v.val.string.val, v.val.string.len);
}

/* The DynamoDB type name (S, N, SS, ...) of a DynamoDB-JSON value. */
static char *
value_type(JsonbValue *value)
{
	JsonbIterator *it;
	JsonbValue	k;

	if (value->type != jbvBinary || !JsonContainerIsObject(value->val.binary.data) ||
		JsonContainerSize(value->val.binary.data) != 1)
		ddb_validation_error("Supplied AttributeValue is empty, must contain exactly one of the supported datatypes");
	it = JsonbIteratorInit(value->val.binary.data);
	JsonbIteratorNext(&it, &k, true);
	JsonbIteratorNext(&it, &k, true);
	return pnstrdup(k.val.string.val, k.val.string.len);
}

/* The comparison operators and how many values each takes (-1: one or more). */
static const struct
{
	const char *name;
	int			nvalues;
	const char *types;			/* the value types it takes, space-separated */
}			comparison_operators[] = {
	{"EQ", 1, " S N B SS NS BS BOOL NULL L M "},
	{"NE", 1, " S N B SS NS BS BOOL NULL L M "},
	{"LE", 1, " S N B "},
	{"LT", 1, " S N B "},
	{"GE", 1, " S N B "},
	{"GT", 1, " S N B "},
	{"NOT_NULL", 0, ""},
	{"NULL", 0, ""},
	{"CONTAINS", 1, " S N B "},
	{"NOT_CONTAINS", 1, " S N B "},
	{"BEGINS_WITH", 1, " S B "},
	{"IN", -1, " S N B "},
	{"BETWEEN", 2, " S N B "},
};

/* The operators a KeyConditions entry may use. */
static bool
indexable(const char *op)
{
	static const char *const ops[] = {"EQ", "LE", "LT", "GE", "GT", "BEGINS_WITH", "BETWEEN"};

	for (size_t i = 0; i < lengthof(ops); i++)
		if (strcmp(op, ops[i]) == 0)
			return true;
	return false;
}

/*
 * One ComparisonOperator condition as expression text: the operator checked
 * (known, the number and types of its values), the values given as
 * placeholders.
 */
static char *
comparison_text(LegacyRewrite *rw, const char *param, const char *attribute, const char *op,
				JsonbValue *values, int nvalues)
{
	int			k = -1;
	char	   *name;
	char	   *v[2] = {NULL, NULL};
	StringInfoData in;

	for (size_t i = 0; i < lengthof(comparison_operators); i++)
		if (strcmp(op, comparison_operators[i].name) == 0)
			k = (int) i;
	if (k < 0)
		ddb_validation_error("1 validation error detected: Value '%s' at '%c%s.%s.member.comparisonOperator' failed to satisfy constraint: Member must satisfy enum value set: [IN, NULL, BETWEEN, LT, NOT_CONTAINS, EQ, GT, NOT_NULL, NE, LE, BEGINS_WITH, GE, CONTAINS]",
							 op, pg_ascii_tolower(param[0]), param + 1, attribute);
	if (comparison_operators[k].nvalues >= 0 ? nvalues != comparison_operators[k].nvalues : nvalues < 1)
		ddb_validation_error("One or more parameter values were invalid: Invalid number of argument(s) for the %s ComparisonOperator", op);
	for (int i = 0; i < nvalues; i++)
	{
		char	   *type = value_type(&values[i]);

		if (i > 0 && strcmp(type, value_type(&values[0])) != 0)
			ddb_validation_error("One or more parameter values were invalid: AttributeValues inside AttributeValueList must be of same type");
		if (strstr(comparison_operators[k].types, psprintf(" %s ", type)) == NULL)
			ddb_validation_error("One or more parameter values were invalid: ComparisonOperator %s is not valid for %s AttributeValue type",
								 op, type);
	}
	if (strcmp(op, "BETWEEN") == 0)
	{
		JsonbValue	low;
		JsonbValue	high;

		item_value_from_dynamodb(&values[0], &low);
		item_value_from_dynamodb(&values[1], &high);
		if (itemexpr_compare_values(&low, &high) > 0)
			ddb_validation_error("The BETWEEN condition was provided a range where the lower bound is greater than the upper bound");
	}

	name = name_placeholder(rw, attribute);
	for (int i = 0; i < nvalues && i < 2; i++)
		v[i] = value_placeholder(rw, &values[i]);
	if (strcmp(op, "EQ") == 0)
		return psprintf("%s = %s", name, v[0]);
	if (strcmp(op, "NE") == 0)
		return psprintf("%s <> %s", name, v[0]);
	if (strcmp(op, "LE") == 0)
		return psprintf("%s <= %s", name, v[0]);
	if (strcmp(op, "LT") == 0)
		return psprintf("%s < %s", name, v[0]);
	if (strcmp(op, "GE") == 0)
		return psprintf("%s >= %s", name, v[0]);
	if (strcmp(op, "GT") == 0)
		return psprintf("%s > %s", name, v[0]);
	if (strcmp(op, "NOT_NULL") == 0)
		return psprintf("attribute_exists(%s)", name);
	if (strcmp(op, "NULL") == 0)
		return psprintf("attribute_not_exists(%s)", name);
	if (strcmp(op, "CONTAINS") == 0)
		return psprintf("contains(%s, %s)", name, v[0]);
	if (strcmp(op, "NOT_CONTAINS") == 0)
		return psprintf("NOT contains(%s, %s)", name, v[0]);
	if (strcmp(op, "BEGINS_WITH") == 0)
		return psprintf("begins_with(%s, %s)", name, v[0]);
	if (strcmp(op, "BETWEEN") == 0)
		return psprintf("%s BETWEEN %s AND %s", name, v[0], v[1]);
	/* IN */
	initStringInfo(&in);
	appendStringInfo(&in, "%s IN (%s", name, v[0]);
	for (int i = 1; i < nvalues; i++)
		appendStringInfo(&in, ", %s", i == 1 ? v[1] : value_placeholder(rw, &values[i]));
	appendStringInfoChar(&in, ')');
	return in.data;
}

/* The values of an AttributeValueList (an array), as an array of JsonbValues; sets *n. */
static JsonbValue *
value_list(JsonbValue *list, int *n)
{
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	JsonbValue *values;

	if (list->type != jbvBinary || !JsonContainerIsArray(list->val.binary.data))
		ereport(ERROR,
				(errcode(ERRCODE_DDB_SERIALIZATION),
				 errmsg("Unexpected value type in payload for AttributeValueList: expected a list")));
	values = palloc(sizeof(JsonbValue) * Max(1, JsonContainerSize(list->val.binary.data)));
	*n = 0;
	it = JsonbIteratorInit(list->val.binary.data);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
		if (tok == WJB_ELEM)
			values[(*n)++] = v;
	return values;
}

/* One Expected entry: the Exists/Value form or the ComparisonOperator form. */
static char *
expected_text(LegacyRewrite *rw, const char *attribute, JsonbValue *entry)
{
	JsonbValue	value;
	JsonbValue	list;
	JsonbValue	exists;
	bool		has_value = member(entry, "Value", &value);
	bool		has_list = member(entry, "AttributeValueList", &list);
	bool		has_exists = member(entry, "Exists", &exists);
	char	   *op = string_member(entry, "ComparisonOperator");

	if (has_value && has_list)
		ddb_validation_error("One or more parameter values were invalid: Value and AttributeValueList cannot be used together for Attribute: %s", attribute);
	if (op)
	{
		int			n = has_value ? 1 : 0;
		JsonbValue *values = has_list ? value_list(&list, &n) : &value;

		if (has_exists)
			ddb_validation_error("One or more parameter values were invalid: Exists and ComparisonOperator cannot be used together for Attribute: %s", attribute);
		if (strcmp(op, "NULL") != 0 && strcmp(op, "NOT_NULL") != 0 && !has_value && !has_list)
			ddb_validation_error("One or more parameter values were invalid: Value or AttributeValueList must be used with ComparisonOperator: %s for Attribute: %s",
								 op, attribute);
		return comparison_text(rw, "Expected", attribute, op, values, n);
	}
	if (has_list)
		ddb_validation_error("One or more parameter values were invalid: AttributeValueList can only be used with a ComparisonOperator for Attribute: %s", attribute);
	if (has_exists && exists.type != jbvBool)
		ereport(ERROR,
				(errcode(ERRCODE_DDB_SERIALIZATION),
				 errmsg("Unexpected value type in payload for Exists: expected a boolean")));
	if (!has_exists || exists.val.boolean)
	{
		if (!has_value)
			ddb_validation_error("One or more parameter values were invalid: Value must be provided when Exists is %s for Attribute: %s",
								 has_exists ? "true" : "null", attribute);
		value_type(&value);
		return psprintf("%s = %s", name_placeholder(rw, attribute), value_placeholder(rw, &value));
	}
	if (has_value)
		ddb_validation_error("One or more parameter values were invalid: Value cannot be used when Exists is false for Attribute: %s", attribute);
	return psprintf("attribute_not_exists(%s)", name_placeholder(rw, attribute));
}

/*
 * A map of conditions (Expected, KeyConditions, QueryFilter, ScanFilter) as
 * one expression: each entry in parentheses, joined by the
 * ConditionalOperator (AND unless OR; always AND for KeyConditions).
 */
static char *
conditions_text(LegacyRewrite *rw, Jsonb *request, const char *param, JsonbContainer *map)
{
	char	   *joiner = api_string(request, "ConditionalOperator");
	bool		key_conditions = strcmp(param, "KeyConditions") == 0;
	StringInfoData text;
	JsonbIterator *it;
	JsonbValue	k;
	JsonbValue	entry;
	JsonbIteratorToken tok;

	if (key_conditions && (JsonContainerSize(map) < 1 || JsonContainerSize(map) > 2))
		ddb_validation_error("Conditions can be of length 1 or 2 only");
	if (key_conditions || joiner == NULL)
		joiner = "AND";
	else if (strcmp(joiner, "AND") != 0 && strcmp(joiner, "OR") != 0)
		ddb_validation_error("1 validation error detected: Value '%s' at 'conditionalOperator' failed to satisfy constraint: Member must satisfy enum value set: [OR, AND]",
							 joiner);
	initStringInfo(&text);
	it = JsonbIteratorInit(map);
	while ((tok = JsonbIteratorNext(&it, &k, true)) != WJB_DONE)
	{
		char	   *attribute;
		char	   *clause;

		if (tok != WJB_KEY)
			continue;
		attribute = pnstrdup(k.val.string.val, k.val.string.len);
		JsonbIteratorNext(&it, &entry, true);
		if (entry.type != jbvBinary || !JsonContainerIsObject(entry.val.binary.data))
			ereport(ERROR,
					(errcode(ERRCODE_DDB_SERIALIZATION),
					 errmsg("Unexpected value type in payload for %s: expected an object", param)));
		if (strcmp(param, "Expected") == 0)
			clause = expected_text(rw, attribute, &entry);
		else
		{
			char	   *op = string_member(&entry, "ComparisonOperator");
			JsonbValue	list;
			int			n = 0;
			JsonbValue *values = NULL;

			if (op == NULL)
				ddb_validation_error("1 validation error detected: Value null at '%c%s.%s.member.comparisonOperator' failed to satisfy constraint: Member must not be null",
									 pg_ascii_tolower(param[0]), param + 1, attribute);
			if (member(&entry, "AttributeValueList", &list))
				values = value_list(&list, &n);
			if (key_conditions && !indexable(op))
				ddb_validation_error("Attempted conditional constraint is not an indexable operation");
			clause = comparison_text(rw, param, attribute, op, values, n);
		}
		appendStringInfo(&text, "%s(%s)", text.len ? psprintf(" %s ", joiner) : "", clause);
	}
	return text.data;
}

/* AttributeUpdates as an UpdateExpression: SET, REMOVE, ADD and DELETE clauses. */
static char *
attribute_updates_text(LegacyRewrite *rw, JsonbContainer *map)
{
	StringInfoData set;
	StringInfoData remove;
	StringInfoData add;
	StringInfoData delete;
	StringInfoData text;
	JsonbIterator *it;
	JsonbValue	k;
	JsonbValue	entry;
	JsonbIteratorToken tok;

	initStringInfo(&set);
	initStringInfo(&remove);
	initStringInfo(&add);
	initStringInfo(&delete);
	it = JsonbIteratorInit(map);
	while ((tok = JsonbIteratorNext(&it, &k, true)) != WJB_DONE)
	{
		char	   *attribute;
		char	   *action;
		JsonbValue	value;
		bool		has_value;
		char	   *type = NULL;

		if (tok != WJB_KEY)
			continue;
		attribute = pnstrdup(k.val.string.val, k.val.string.len);
		JsonbIteratorNext(&it, &entry, true);
		action = string_member(&entry, "Action");
		if (action == NULL)
			action = "PUT";
		if (strcmp(action, "PUT") != 0 && strcmp(action, "ADD") != 0 && strcmp(action, "DELETE") != 0)
			ddb_validation_error("1 validation error detected: Value '%s' at 'attributeUpdates.%s.member.action' failed to satisfy constraint: Member must satisfy enum value set: [ADD, PUT, DELETE]",
								 action, attribute);
		has_value = member(&entry, "Value", &value);
		if (has_value)
			type = value_type(&value);
		if (!has_value && strcmp(action, "DELETE") != 0)
			ddb_validation_error("One or more parameter values were invalid: Only DELETE action is allowed when no attribute value is specified");
		if (strcmp(action, "PUT") == 0)
			appendStringInfo(&set, "%s%s = %s", set.len ? ", " : "", name_placeholder(rw, attribute),
							 value_placeholder(rw, &value));
		else if (strcmp(action, "DELETE") == 0 && !has_value)
			appendStringInfo(&remove, "%s%s", remove.len ? ", " : "", name_placeholder(rw, attribute));
		else if (strcmp(action, "DELETE") == 0)
		{
			if (strcmp(type, "SS") != 0 && strcmp(type, "NS") != 0 && strcmp(type, "BS") != 0)
				ddb_validation_error("One or more parameter values were invalid: DELETE action with value is not supported for the type %s", type);
			appendStringInfo(&delete, "%s%s %s", delete.len ? ", " : "", name_placeholder(rw, attribute),
							 value_placeholder(rw, &value));
		}
		else if (strcmp(type, "L") == 0)
		{
			/* ADD to a list appends, creating the list when absent */
			char	   *name = name_placeholder(rw, attribute);
			JsonbValue	empty;
			JsonbParseState *state = NULL;

			pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
			ddb_push_key(&state, "L");
			pushJsonbValue(&state, WJB_BEGIN_ARRAY, NULL);
			pushJsonbValue(&state, WJB_END_ARRAY, NULL);
			ddb_binary_value(JsonbValueToJsonb(pushJsonbValue(&state, WJB_END_OBJECT, NULL)), &empty);
			appendStringInfo(&set, "%s%s = list_append(if_not_exists(%s, %s), %s)", set.len ? ", " : "",
							 name, name, value_placeholder(rw, &empty), value_placeholder(rw, &value));
		}
		else
		{
			if (strcmp(type, "N") != 0 && strcmp(type, "SS") != 0 && strcmp(type, "NS") != 0 && strcmp(type, "BS") != 0)
				ddb_validation_error("One or more parameter values were invalid: ADD action is not supported for the type %s", type);
			appendStringInfo(&add, "%s%s %s", add.len ? ", " : "", name_placeholder(rw, attribute),
							 value_placeholder(rw, &value));
		}
	}
	initStringInfo(&text);
	if (set.len)
		appendStringInfo(&text, "SET %s ", set.data);
	if (remove.len)
		appendStringInfo(&text, "REMOVE %s ", remove.data);
	if (add.len)
		appendStringInfo(&text, "ADD %s ", add.data);
	if (delete.len)
		appendStringInfo(&text, "DELETE %s ", delete.data);
	return text.data;
}

/* AttributesToGet as a ProjectionExpression; duplicates are refused as DynamoDB does. */
static char *
attributes_to_get_text(LegacyRewrite *rw, JsonbValue *list)
{
	StringInfoData text;
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	List	   *seen = NIL;

	if (list->type != jbvBinary || !JsonContainerIsArray(list->val.binary.data))
		ereport(ERROR,
				(errcode(ERRCODE_DDB_SERIALIZATION),
				 errmsg("Unexpected value type in payload for AttributesToGet: expected a list")));
	if (JsonContainerSize(list->val.binary.data) == 0)
		ddb_validation_error("1 validation error detected: Value '[]' at 'attributesToGet' failed to satisfy constraint: Member must have length greater than or equal to 1");
	initStringInfo(&text);
	it = JsonbIteratorInit(list->val.binary.data);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		char	   *name;
		ListCell   *lc;

		if (tok != WJB_ELEM)
			continue;
		if (v.type != jbvString)
			ereport(ERROR,
					(errcode(ERRCODE_DDB_SERIALIZATION),
					 errmsg("Unexpected value type in payload for AttributesToGet: expected a string")));
		name = pnstrdup(v.val.string.val, v.val.string.len);
		foreach(lc, seen)
		{
			if (strcmp(lfirst(lc), name) == 0)
				ddb_validation_error("One or more parameter values were invalid: Duplicate value in attribute name: %s", name);
		}
		seen = lappend(seen, name);
		appendStringInfo(&text, "%s%s", text.len ? ", " : "", name_placeholder(rw, name));
	}
	return text.data;
}

/* True when a JSON key is the given name. */
static bool
key_is(JsonbValue *key, const char *name)
{
	return (size_t) key->val.string.len == strlen(name) && memcmp(key->val.string.val, name, key->val.string.len) == 0;
}

/* Pushes the members of a request's object field (the request's own placeholders), if any. */
static void
push_members(JsonbParseState **state, Jsonb *request, const char *field)
{
	JsonbContainer *map = api_object(request, field);
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;

	if (map == NULL)
		return;
	it = JsonbIteratorInit(map);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
		if (tok == WJB_KEY || tok == WJB_VALUE)
			pushJsonbValue(state, tok, &v);
}

/* The request with the legacy fields replaced by the expressions and placeholders built. */
static Jsonb *
rewritten_request(Jsonb *request, LegacyRewrite *rw)
{
	JsonbParseState *state = NULL;
	JsonbIterator *it = JsonbIteratorInit(&request->root);
	JsonbValue	k;
	JsonbValue	v;
	JsonbIteratorToken tok;
	ListCell   *lc;
	ListCell   *lt;
	ListCell   *lk;

	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	JsonbIteratorNext(&it, &k, true);
	while ((tok = JsonbIteratorNext(&it, &k, true)) != WJB_DONE)
	{
		bool		legacy = false;

		if (tok != WJB_KEY)
			continue;
		JsonbIteratorNext(&it, &v, true);
		for (size_t j = 0; j < lengthof(legacy_params); j++)
			legacy |= key_is(&k, legacy_params[j].name);
		/* placeholders are merged with the generated ones below */
		if (legacy || key_is(&k, "ExpressionAttributeNames") || key_is(&k, "ExpressionAttributeValues"))
			continue;
		pushJsonbValue(&state, WJB_KEY, &k);
		pushJsonbValue(&state, WJB_VALUE, &v);
	}
	forboth(lc, rw->fields, lt, rw->texts)
		ddb_push_string(&state, lfirst(lc), lfirst(lt));
	if (rw->names || api_field(request, "ExpressionAttributeNames", &v))
	{
		ddb_push_key(&state, "ExpressionAttributeNames");
		pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
		push_members(&state, request, "ExpressionAttributeNames");
		forboth(lk, rw->name_keys, lc, rw->names)
			ddb_push_string(&state, lfirst(lk), lfirst(lc));
		pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	}
	if (rw->values || api_field(request, "ExpressionAttributeValues", &v))
	{
		ddb_push_key(&state, "ExpressionAttributeValues");
		pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
		push_members(&state, request, "ExpressionAttributeValues");
		forboth(lk, rw->value_keys, lc, rw->values)
		{
			ddb_push_key(&state, lfirst(lk));
			pushJsonbValue(&state, WJB_VALUE, lfirst(lc));
		}
		pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	}
	return JsonbValueToJsonb(pushJsonbValue(&state, WJB_END_OBJECT, NULL));
}

/* Adds one rewritten expression field, unless empty. */
static void
add_expression(LegacyRewrite *rw, const char *field, char *text)
{
	/* an empty map (Expected: {}) asks for nothing */
	if (text[0] == '\0')
		return;
	rw->fields = lappend(rw->fields, (char *) field);
	rw->texts = lappend(rw->texts, text);
}

/*
 * The request an operation runs: legacy parameters it takes rewritten into
 * expressions.  DynamoDB's rules come first: legacy and expression
 * parameters never mix (KeyConditions may go with a FilterExpression or
 * ProjectionExpression), placeholders belong to expressions, and a legacy
 * parameter the operation does not take is refused.  value_expressions_null
 * ends the message for values without expressions ("ConditionExpression is
 * null").
 */
Jsonb *
api_legacy_to_expressions(Jsonb *request, int accepted, const char *value_expressions_null)
{
	StringInfoData legacy_used;
	StringInfoData expression_used;
	bool		key_condition_expression = false;
	JsonbValue	v;
	LegacyRewrite rw = {0};
	JsonbContainer *map;

	initStringInfo(&legacy_used);
	initStringInfo(&expression_used);
	for (size_t i = 0; i < lengthof(expression_params); i++)
		if (api_field(request, expression_params[i], &v))
		{
			appendStringInfo(&expression_used, "%s%s", expression_used.len ? ", " : "", expression_params[i]);
			key_condition_expression |= strcmp(expression_params[i], "KeyConditionExpression") == 0;
		}
	for (size_t i = 0; i < lengthof(legacy_params); i++)
		if (api_field(request, legacy_params[i].name, &v))
		{
			if (!(legacy_params[i].flag & accepted))
				ddb_validation_error("%s is not a parameter of this operation", legacy_params[i].name);
			if (strcmp(legacy_params[i].name, "KeyConditions") != 0 || key_condition_expression)
				appendStringInfo(&legacy_used, "%s%s", legacy_used.len ? ", " : "", legacy_params[i].name);
		}
	if (legacy_used.len && expression_used.len)
		ddb_validation_error("Can not use both expression and non-expression parameters in the same request: Non-expression parameters: {%s} Expression parameters: {%s}",
							 legacy_used.data, expression_used.data);
	if (!legacy_used.len && !(accepted & LEGACY_KEY_CONDITIONS && api_field(request, "KeyConditions", &v)))
		return request;
	if (!expression_used.len)
		api_reject_placeholders(request, value_expressions_null);
	rw.own_names = api_object(request, "ExpressionAttributeNames");
	rw.own_values = api_object(request, "ExpressionAttributeValues");
	if ((map = api_object(request, "Expected")) != NULL)
		add_expression(&rw, "ConditionExpression", conditions_text(&rw, request, "Expected", map));
	if ((map = api_object(request, "KeyConditions")) != NULL)
		add_expression(&rw, "KeyConditionExpression", conditions_text(&rw, request, "KeyConditions", map));
	if ((map = api_object(request, "QueryFilter")) != NULL)
		add_expression(&rw, "FilterExpression", conditions_text(&rw, request, "QueryFilter", map));
	if ((map = api_object(request, "ScanFilter")) != NULL)
		add_expression(&rw, "FilterExpression", conditions_text(&rw, request, "ScanFilter", map));
	if ((map = api_object(request, "AttributeUpdates")) != NULL)
		add_expression(&rw, "UpdateExpression", attribute_updates_text(&rw, map));
	if (api_field(request, "AttributesToGet", &v))
		add_expression(&rw, "ProjectionExpression", attributes_to_get_text(&rw, &v));
	return rewritten_request(request, &rw);
}
