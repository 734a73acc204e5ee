/*
 * request.c — reading ddb.execute requests (request.h): typed fields,
 * DynamoDB's first checks of an item operation's members and TableName,
 * the expression placeholders a request carries (ExpressionAttributeNames/
 * Values, handed to src/itemexpr/), and key maps; pushing keys into
 * responses.  The item operations, PartiQL, metering, the export and
 * import jobs and a router read requests through these.
 */
#include "postgres.h"

#include "mb/pg_wchar.h"
#include "utils/builtins.h"
#include "utils/numeric.h"

#include "../ddb_errors.h"
#include "../item/item_codec.h"
#include "../key/ddb_key.h"
#include "request.h"

/* A request field; false when absent (or JSON null). */
bool
api_field(Jsonb *request, const char *name, JsonbValue *out)
{
	if (!JsonContainerIsObject(&request->root))
		ereport(ERROR,
				(errcode(ERRCODE_DDB_SERIALIZATION),
				 errmsg("Start of structure or map found where not expected")));
	if (getKeyJsonValueFromContainer(&request->root, name, (int) strlen(name), out) == NULL)
		return false;
	return out->type != jbvNull;
}

/* Raises DynamoDB's error for a missing required member. */
void
api_missing(const char *member)
{
	ddb_validation_error("1 validation error detected: Value null at '%s' failed to satisfy constraint: Member must not be null",
						 member);
}

/* Raises DynamoDB's error for a field of the wrong JSON type. */
static void
report_wrong_type(const char *name, const char *expected)
{
	ereport(ERROR,
			(errcode(ERRCODE_DDB_SERIALIZATION),
			 errmsg("Unexpected value type in payload for %s: expected %s", name, expected)));
}

/* A string field, or NULL when absent. */
char *
api_string(Jsonb *request, const char *name)
{
	JsonbValue	v;

	if (!api_field(request, name, &v))
		return NULL;
	if (v.type != jbvString)
		report_wrong_type(name, "a string");
	return pnstrdup(v.val.string.val, v.val.string.len);
}

/*
 * The ClientRequestToken of a transaction, or NULL when absent: 1 to 36
 * characters, as DynamoDB allows.
 */
char *
api_client_request_token(Jsonb *request)
{
	char	   *token = api_string(request, "ClientRequestToken");
	int			len = token ? pg_mbstrlen(token) : 0;

	if (token && (len < 1 || len > 36))
		ddb_validation_error("1 validation error detected: Value '%s' at 'clientRequestToken' failed to satisfy constraint: Member must have length %s",
							 token, len < 1 ? "greater than or equal to 1" : "less than or equal to 36");
	return token;
}

/* A string field that must be present. */
char *
api_required_string(Jsonb *request, const char *name, const char *member)
{
	char	   *s = api_string(request, name);

	if (s == NULL)
		api_missing(member);
	return s;
}

/* An object field, or NULL when absent. */
JsonbContainer *
api_object(Jsonb *request, const char *name)
{
	JsonbValue	v;

	if (!api_field(request, name, &v))
		return NULL;
	if (v.type != jbvBinary || !JsonContainerIsObject(v.val.binary.data))
		report_wrong_type(name, "an object");
	return v.val.binary.data;
}

/* A boolean field, or dflt when absent. */
bool
api_bool(Jsonb *request, const char *name, bool dflt)
{
	JsonbValue	v;

	if (!api_field(request, name, &v))
		return dflt;
	if (v.type != jbvBool)
		report_wrong_type(name, "a boolean");
	return v.val.boolean;
}

/* An integer field, or -1 when absent. */
int64
api_int(Jsonb *request, const char *name, int64 min, int64 max)
{
	JsonbValue	v;
	int64		n;
	bool		have_error = false;
	char	   *text;

	if (!api_field(request, name, &v))
		return -1;
	if (v.type != jbvNumeric)
		report_wrong_type(name, "a number");
	text = DatumGetCString(DirectFunctionCall1(numeric_out, NumericGetDatum(v.val.numeric)));
	if (strchr(text, '.') != NULL)
		report_wrong_type(name, "an integer");
	n = numeric_int4_opt_error(v.val.numeric, &have_error);
	if (have_error)
		n = text[0] == '-' ? PG_INT64_MIN : PG_INT64_MAX;
	if (n < min || n > max)
		ddb_validation_error("1 validation error detected: Value '%s' at '%c%s' failed to satisfy constraint: Member must have value %s %lld",
							 DatumGetCString(DirectFunctionCall1(numeric_out, NumericGetDatum(v.val.numeric))),
							 pg_ascii_tolower(name[0]), name + 1,
							 n < min ? "greater than or equal to" : "less than or equal to",
							 (long long) (n < min ? min : max));
	return n;
}

/* Reads ExpressionAttributeNames/Values of a request into a context. */
void
api_expr_context(Jsonb *request, Placeholders *ctx)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->names = api_object(request, "ExpressionAttributeNames");
	ctx->values = api_object(request, "ExpressionAttributeValues");
	if (ctx->names && JsonContainerSize(ctx->names) == 0)
		ddb_validation_error("ExpressionAttributeNames must not be empty");
	if (ctx->values && JsonContainerSize(ctx->values) == 0)
		ddb_validation_error("ExpressionAttributeValues must not be empty");
}

/*
 * A TableName checked as DynamoDB checks it before it looks the table up:
 * 1 to 255 characters of [a-zA-Z0-9_.-], every broken constraint reported
 * (CreateTable asks for 3: ddb.check_name).
 */
char *
api_table_name(char *name)
{
	const char *broken[3];
	int			n = 0;
	size_t		len = strlen(name);
	StringInfoData message;

	/* the item operations take a table's ARN too, so their least length is 1 */
	if (len < 1)
		broken[n++] = "Member must have length greater than or equal to 1";
	if (len > 255)
		broken[n++] = "Member must have length less than or equal to 255";
	if (len > 0 && strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") != len)
		broken[n++] = "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+";
	if (n == 0)
		return name;
	initStringInfo(&message);
	appendStringInfo(&message, "%d validation error%s detected: ", n, n > 1 ? "s" : "");
	for (int i = 0; i < n; i++)
		appendStringInfo(&message, "%sValue '%s' at 'tableName' failed to satisfy constraint: %s",
						 i > 0 ? "; " : "", name, broken[i]);
	ddb_validation_error("%s", message.data);
	return NULL;
}

/* The enum members checked up front, with the values DynamoDB lists in its message. */
static const struct
{
	const char *field;
	const char *member;
	const char *values;			/* as DynamoDB lists them */
	bool		read_only;		/* a member of Query and Scan only */
}			enum_members[] = {
	{"ReturnConsumedCapacity", "returnConsumedCapacity", "INDEXES, TOTAL, NONE", false},
	{"ReturnItemCollectionMetrics", "returnItemCollectionMetrics", "SIZE, NONE", false},
	{"ReturnValues", "returnValues", "ALL_NEW, UPDATED_OLD, ALL_OLD, NONE, UPDATED_NEW", false},
	{"Select", "select", "SPECIFIC_ATTRIBUTES, COUNT, ALL_ATTRIBUTES, ALL_PROJECTED_ATTRIBUTES", true},
};

/* The integer members of Scan checked up front, with their bounds. */
static const struct
{
	const char *field;
	const char *member;
	int64		min;
	int64		max;
}			scan_int_members[] = {
	{"Limit", "limit", 1, PG_INT32_MAX},
	{"Segment", "segment", 0, 999999},
	{"TotalSegments", "totalSegments", 1, 1000000},
};

/* True when a value is one of a comma-separated list. */
static bool
in_value_list(const char *value, const char *values)
{
	size_t		len = strlen(value);

	for (const char *p = values; p != NULL; p = strchr(p, ','))
	{
		while (*p == ',' || *p == ' ')
			p++;
		if (strncmp(p, value, len) == 0 && (p[len] == ',' || p[len] == '\0'))
			return true;
	}
	return false;
}

/* Appends one broken constraint to a validation message in the making. */
static void
add_violation(StringInfo message, int *n, const char *value, const char *member, const char *constraint)
{
	appendStringInfo(message, "%sValue '%s' at '%s' failed to satisfy constraint: %s",
					 (*n)++ ? "; " : "", value, member, constraint);
}

/* Adds the broken bound of an integer member (a wrong type is left to api_int). */
static void
check_int_member(Jsonb *request, const char *field, const char *member, int64 min, int64 max,
				 StringInfo message, int *n)
{
	JsonbValue	v;
	bool		overflow = false;
	char	   *text;
	int64		value;

	if (!api_field(request, field, &v) || v.type != jbvNumeric)
		return;
	text = DatumGetCString(DirectFunctionCall1(numeric_out, NumericGetDatum(v.val.numeric)));
	if (strchr(text, '.') != NULL)
		return;
	value = numeric_int4_opt_error(v.val.numeric, &overflow);
	if (overflow)
		value = text[0] == '-' ? PG_INT64_MIN : PG_INT64_MAX;
	if (value < min)
		add_violation(message, n, text, member,
					  psprintf("Member must have value greater than or equal to %lld", (long long) min));
	else if (value > max)
		add_violation(message, n, text, member,
					  psprintf("Member must have value less than or equal to %lld", (long long) max));
}

/*
 * DynamoDB's first checks of an item operation: the TableName alone, then
 * the other members its request validation checks, every broken constraint
 * in one message: the enum members, and for Query and Scan (read) the
 * IndexName's length and pattern, for Scan the bounds of Limit, Segment and
 * TotalSegments (Query words its Limit its own way: api_query).
 */
void
api_check_request_members(Jsonb *request, const char *operation)
{
	char	   *table = api_string(request, "TableName");
	bool		read = strcmp(operation, "Query") == 0 || strcmp(operation, "Scan") == 0;
	StringInfoData message;
	int			n = 0;
	JsonbValue	v;

	if (table)
		api_table_name(table);
	initStringInfo(&message);
	for (size_t i = 0; i < lengthof(enum_members); i++)
	{
		char	   *value;

		if (enum_members[i].read_only && !read)
			continue;
		value = api_string(request, enum_members[i].field);
		if (value == NULL || in_value_list(value, enum_members[i].values))
			continue;
		add_violation(&message, &n, value, enum_members[i].member,
					  psprintf("Member must satisfy enum value set: [%s]", enum_members[i].values));
	}
	if (read && api_field(request, "IndexName", &v) && v.type == jbvString)
	{
		char	   *index = pnstrdup(v.val.string.val, v.val.string.len);
		size_t		len = strlen(index);

		if (len < 3)
			add_violation(&message, &n, index, "indexName", "Member must have length greater than or equal to 3");
		if (len > 255)
			add_violation(&message, &n, index, "indexName", "Member must have length less than or equal to 255");
		if (len > 0 && strspn(index, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") != len)
			add_violation(&message, &n, index, "indexName", "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+");
	}
	if (strcmp(operation, "Scan") == 0)
		for (size_t i = 0; i < lengthof(scan_int_members); i++)
			check_int_member(request, scan_int_members[i].field, scan_int_members[i].member,
							 scan_int_members[i].min, scan_int_members[i].max, &message, &n);
	if (n > 0)
		ddb_validation_error("%d validation error%s detected: %s", n, n > 1 ? "s" : "", message.data);
}

/*
 * Raises when placeholders come with an operation that has no expression
 * using them; value_expressions_null ends the message for values
 * ("ConditionExpression is null"), NULL where DynamoDB has no such message.
 */
void
api_reject_placeholders(Jsonb *request, const char *value_expressions_null)
{
	JsonbValue	v;

	if (api_field(request, "ExpressionAttributeNames", &v))
		ddb_validation_error("ExpressionAttributeNames can only be specified when using expressions");
	if (api_field(request, "ExpressionAttributeValues", &v))
	{
		if (value_expressions_null)
			ddb_validation_error("ExpressionAttributeValues can only be specified when using expressions: %s",
								 value_expressions_null);
		ddb_validation_error("ExpressionAttributeValues can only be specified when using expressions");
	}
}

/* A key value of a Key map: the natural value must have the declared type. */
static Datum
key_from_map(JsonbContainer *key, const char *attribute, char type, bool range)
{
	JsonbValue	av;
	JsonbValue	natural;
	KeyRole		role = {attribute, NULL, range};
	Datum		result;

	if (getKeyJsonValueFromContainer(key, attribute, (int) strlen(attribute), &av) == NULL)
		ddb_validation_error("The provided key element does not match the schema");
	item_value_from_dynamodb(&av, &natural);
	if (!item_value_to_key(&natural, type, &role, &result))
		ddb_validation_error("The provided key element does not match the schema");
	return result;
}

/* Reads a Key map for a table: exactly its key attributes. */
void
api_table_key(TableDef *def, JsonbContainer *key, Datum *pk, Datum *sk)
{
	int			want = def->keys.range_key ? 2 : 1;

	if (key == NULL)
		api_missing("key");
	if (!JsonContainerIsObject(key) || (int) JsonContainerSize(key) != want)
		ddb_validation_error("The provided key element does not match the schema");
	*pk = key_from_map(key, def->keys.hash_key, def->keys.hash_type, false);
	*sk = def->keys.range_key ?
		key_from_map(key, def->keys.range_key, def->keys.range_type, true) : (Datum) 0;
}

/* Pushes one key attribute as name: AttributeValue. */
static void
push_key_attribute(JsonbParseState **state, const char *name, Datum key)
{
	JsonbValue	v;

	ddb_push_key(state, name);
	item_key_to_value(key, &v);
	item_push_dynamodb_value(state, &v);
}

/* True when an attribute is one of the table's key attributes. */
static bool
is_table_key(TableDef *def, const char *name)
{
	return strcmp(name, def->keys.hash_key) == 0 ||
		(def->keys.range_key != NULL && strcmp(name, def->keys.range_key) == 0);
}

/* Pushes the attributes of one side of an index key that are not the table's keys. */
static void
push_index_side(JsonbParseState **state, TableDef *def, char **names, int n, Datum key)
{
	Datum		elements[KEY_SCHEMA_MAX_ATTRIBUTES];

	if (n > 1)
		key_tuple_elements(key, elements, KEY_SCHEMA_MAX_ATTRIBUTES);
	else
		elements[0] = key;
	for (int i = 0; i < n; i++)
		if (!is_table_key(def, names[i]))
			push_key_attribute(state, names[i], elements[i]);
}

/* Pushes the DynamoDB-JSON key attributes of a row. */
void
api_push_row_key(JsonbParseState **state, TableDef *def, IndexDef *index, RowKeys *keys)
{
	pushJsonbValue(state, WJB_BEGIN_OBJECT, NULL);
	push_key_attribute(state, def->keys.hash_key, keys->pk);
	if (def->keys.range_key)
		push_key_attribute(state, def->keys.range_key, keys->sk);
	if (index)
	{
		push_index_side(state, def, index->keys.hash_keys, index->keys.nhash, keys->gpk);
		push_index_side(state, def, index->keys.range_keys, index->keys.nrange, keys->gsk);
	}
	pushJsonbValue(state, WJB_END_OBJECT, NULL);
}

/* Compares two ddb_key datums in DynamoDB order. */
int
api_compare_keys(Datum a, Datum b)
{
	struct varlena *x = PG_DETOAST_DATUM_PACKED(a);
	struct varlena *y = PG_DETOAST_DATUM_PACKED(b);

	return key_compare_encoded(DDB_KEY_DATA(x), DDB_KEY_LEN(x), DDB_KEY_DATA(y), DDB_KEY_LEN(y));
}

/* The table an item operation's TableName names, checked as DynamoDB checks it. */
TableDef *
api_request_table(Jsonb *request)
{
	return table_def_get(api_table_name(api_required_string(request, "TableName", "tableName")));
}

/* True when two keys of one table address the same item. */
bool
api_same_key(Datum pk1, Datum sk1, Datum pk2, Datum sk2)
{
	return api_compare_keys(pk1, pk2) == 0 && (sk1 == (Datum) 0 || api_compare_keys(sk1, sk2) == 0);
}
