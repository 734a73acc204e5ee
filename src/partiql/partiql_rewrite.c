/*
 * partiql_rewrite.c — a parsed statement as the operation it stands for: a
 * SELECT is a Query when its WHERE pins the partition key with =, a Scan
 * otherwise; INSERT a PutItem that may not replace an item; UPDATE an
 * UpdateItem and DELETE a DeleteItem of the item the WHERE names by its
 * whole key, the rest of the WHERE their condition; a transaction's EXISTS a
 * ConditionCheck.  The operations serve them with their own checks and
 * errors, as src/api/legacy.c does for the legacy parameters.
 */
#include "postgres.h"

#include "utils/builtins.h"
#include "utils/json.h"

#include "../api/api.h"
#include "../ddb_errors.h"
#include "partiql.h"

/* True when placeholder p<i> ("#p" or ":v") occurs in text as a whole token. */
static bool
uses_placeholder(const char *text, const char *prefix, int i)
{
	char	   *ph = psprintf("%s%d", prefix, i);
	size_t		len = strlen(ph);

	for (const char *at = text ? strstr(text, ph) : NULL; at; at = strstr(at + 1, ph))
		if (!isdigit((unsigned char) at[len]))
			return true;
	return false;
}

/* Appends the request's expressions and the placeholders they use. */
static void
append_expressions(StringInfo out, Statement *st, const char *const *members, char **texts, int n)
{
	StringInfoData names;
	StringInfoData values;
	ListCell   *lc;

	initStringInfo(&names);
	initStringInfo(&values);
	for (int k = 0; k < n; k++)
		if (texts[k] != NULL && texts[k][0] != '\0')
		{
			appendStringInfo(out, ", \"%s\": ", members[k]);
			escape_json(out, texts[k]);
		}
	foreach(lc, st->names)
		for (int k = 0; k < n; k++)
			if (uses_placeholder(texts[k], "#p", foreach_current_index(lc)))
			{
				appendStringInfo(&names, "%s\"#p%d\": ", names.len ? ", " : "", foreach_current_index(lc));
				escape_json(&names, lfirst(lc));
				break;
			}
	foreach(lc, st->values)
		for (int k = 0; k < n; k++)
			if (uses_placeholder(texts[k], ":v", foreach_current_index(lc)))
			{
				appendStringInfo(&values, "%s\":v%d\": %s", values.len ? ", " : "", foreach_current_index(lc),
								 (char *) lfirst(lc));
				break;
			}
	if (names.len)
		appendStringInfo(out, ", \"ExpressionAttributeNames\": {%s}", names.data);
	if (values.len)
		appendStringInfo(out, ", \"ExpressionAttributeValues\": {%s}", values.data);
}

/* The WHERE's conjuncts other than those taken (as a key), joined with AND; NULL for none. */
char *
partiql_remaining_condition(List *conjuncts, List *taken)
{
	StringInfoData out;
	ListCell   *lc;

	initStringInfo(&out);
	foreach(lc, conjuncts)
		if (!list_member_ptr(taken, lfirst(lc)))
			appendStringInfo(&out, "%s%s", out.len ? " AND " : "", ((Conjunct *) lfirst(lc))->text);
	return out.len ? out.data : NULL;
}

/* The first conjunct of a kind on an attribute, or NULL. */
static Conjunct *
find_conjunct(List *conjuncts, const char *attribute, const char *kinds)
{
	ListCell   *lc;

	foreach(lc, conjuncts)
	{
		Conjunct   *c = lfirst(lc);

		if (attribute && c->attribute && strcmp(c->attribute, attribute) == 0 && strchr(kinds, c->kind))
			return c;
	}
	return NULL;
}

/* The Key of UPDATE and DELETE: equalities on every key attribute; *taken gets their conjuncts. */
static char *
statement_key(Statement *st, TableDef *def, List **taken)
{
	const char *attributes[2] = {def->keys.hash_key, def->keys.range_key};
	StringInfoData key;

	initStringInfo(&key);
	for (int k = 0; k < 2 && attributes[k]; k++)
	{
		Conjunct   *c = find_conjunct(st->conjuncts, attributes[k], "=");

		if (c == NULL)
			ddb_validation_error("Where clause does not contain a mandatory equality on all key attributes");
		appendStringInfo(&key, "%s", key.len ? ", " : "{");
		escape_json(&key, attributes[k]);
		appendStringInfo(&key, ": %s", (char *) list_nth(st->values, c->value));
		*taken = lappend(*taken, c);
	}
	appendStringInfoChar(&key, '}');
	return key.data;
}

/* True when a rendered condition names a key attribute of a key schema at the head of a path. */
static bool
names_key(Statement *st, const char *text, const KeySchema *keys)
{
	ListCell   *lc;

	foreach(lc, st->names)
	{
		char	   *name = lfirst(lc);

		if ((strcmp(name, keys->hash_key) == 0 || (keys->range_key && strcmp(name, keys->range_key) == 0)) &&
			uses_placeholder(text, "#p", foreach_current_index(lc)))
			return true;
	}
	return false;
}

/* Rewrites a parsed statement into its operation's request. */
void
partiql_rewrite(Statement *st, Rewritten *out, bool consistent)
{
	TableDef   *def = table_def_get(st->table);
	StringInfoData req;
	List	   *taken = NIL;

	memset(out, 0, sizeof(Rewritten));
	initStringInfo(&req);
	appendStringInfoString(&req, "{\"TableName\": ");
	escape_json(&req, st->table);
	if (st->kind == 'S')
	{
		KeySchema  *keys = st->index ? &table_def_index(def, st->index)->keys : &def->keys;
		/* a multi-attribute index is read by a Scan that filters on its keys */
		bool		multi = KEY_SCHEMA_HASH_TUPLE(keys) || KEY_SCHEMA_RANGE_TUPLE(keys);
		Conjunct   *hash = multi ? NULL : find_conjunct(st->conjuncts, keys->hash_key, "=");
		const char *const members[2] = {"KeyConditionExpression", "FilterExpression"};
		char	   *texts[2] = {NULL, NULL};

		if (st->index)
		{
			appendStringInfoString(&req, ", \"IndexName\": ");
			escape_json(&req, st->index);
		}
		if (consistent)
			appendStringInfoString(&req, ", \"ConsistentRead\": true");
		if (hash)
		{
			Conjunct   *range = find_conjunct(st->conjuncts, keys->range_key, "=k");

			taken = list_make1(hash);
			texts[0] = hash->text;
			if (range)
			{
				taken = lappend(taken, range);
				texts[0] = psprintf("%s AND %s", hash->text, range->text);
			}
		}
		texts[1] = partiql_remaining_condition(st->conjuncts, taken);
		/* a Query may not filter on its keys: with more conditions on them, a Scan filters them all */
		if (hash && texts[1] && names_key(st, texts[1], keys))
		{
			hash = NULL;
			texts[0] = NULL;
			texts[1] = partiql_remaining_condition(st->conjuncts, NIL);
		}
		append_expressions(&req, st, members, texts, 2);
		out->run = hash ? api_query : api_scan;
	}
	else if (st->kind == 'I')
	{
		const char *const members[1] = {"ConditionExpression"};
		char	   *texts[1] = {psprintf("attribute_not_exists(%s)", partiql_name_placeholder(st, def->keys.hash_key))};

		appendStringInfo(&req, ", \"Item\": %s", st->item);
		append_expressions(&req, st, members, texts, 1);
		out->run = api_put_item;
		out->insert = true;
	}
	else
	{
		char	   *key = statement_key(st, def, &taken);
		char	   *rest = partiql_remaining_condition(st->conjuncts, taken);
		const char *const members[2] = {"ConditionExpression", "UpdateExpression"};
		char	   *texts[2] = {rest, NULL};

		appendStringInfo(&req, ", \"Key\": %s", key);
		if (st->kind == 'U' || st->kind == 'E')
		{
			/* an UPDATE changes an item that exists; EXISTS checks that it does */
			char	   *exists = psprintf("attribute_exists(%s)", partiql_name_placeholder(st, def->keys.hash_key));

			texts[0] = rest ? psprintf("%s AND (%s)", exists, rest) : exists;
		}
		if (st->kind == 'U')
			texts[1] = psprintf("%s%s%s%s", st->set.len ? "SET " : "", st->set.data,
								st->set.len && st->remove.len ? " " : "",
								st->remove.len ? psprintf("REMOVE %s", st->remove.data) : "");
		append_expressions(&req, st, members, texts, 2);
		out->run = st->kind == 'U' ? api_update_item : st->kind == 'E' ? api_condition_check : api_delete_item;
	}
	appendStringInfoChar(&req, '}');
	out->request = req.data;
}

/* The Key of a SELECT that must read one item (batches, transactions): equalities on the table's whole key. */
char *
partiql_single_item_key(Statement *st, List **taken)
{
	if (st->index)
		ddb_validation_error("A batch or a transaction reads items by their primary key, not from an index");
	return statement_key(st, table_def_get(st->table), taken);
}
