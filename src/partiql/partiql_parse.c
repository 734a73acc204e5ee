/*
 * partiql_parse.c — PartiQL statements read into a Statement (partiql.h):
 * the tokenizer, literals (maps, lists, <<sets>>) as DynamoDB JSON, paths,
 * the WHERE's top-level conjuncts rendered in DynamoDB's condition syntax
 * with placeholders, UPDATE's SET and REMOVE, and ? parameters.
 */
#include "postgres.h"

#include <ctype.h>

#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/json.h"

#include "../ddb_errors.h"
#include "partiql.h"

typedef enum TokenKind
{
	TOK_END,
	TOK_WORD,					/* a bare identifier or keyword */
	TOK_QUOTED,					/* "identifier" */
	TOK_STRING,					/* 'string' */
	TOK_NUMBER,
	TOK_PARAM,					/* ? */
	TOK_PUNCT					/* { } [ ] << >> ( ) , . : = <> != < <= > >= * + - */
} TokenKind;

typedef struct Token
{
	TokenKind	kind;
	char	   *text;			/* unquoted for TOK_QUOTED and TOK_STRING */
} Token;

static char *parse_condition(Statement *st);
static void syntax_error(Statement *st, const char *what) pg_attribute_noreturn();

/* Raises DynamoDB's validation error for a statement that does not parse. */
static void
syntax_error(Statement *st, const char *what)
{
	Token	   *t = &st->tokens[st->pos];

	ddb_validation_error("Statement wasn't well formed, can't be processed: %s%s%s", what,
						 t->kind == TOK_END ? " at the end" : " near ",
						 t->kind == TOK_END ? "" : t->text);
}

/* Appends a token to the statement's list. */
static void
add_token(Statement *st, int *cap, TokenKind kind, char *text)
{
	if (st->ntokens == *cap)
	{
		*cap *= 2;
		st->tokens = repalloc(st->tokens, sizeof(Token) * *cap);
	}
	st->tokens[st->ntokens].kind = kind;
	st->tokens[st->ntokens].text = text;
	st->ntokens++;
}

/* Reads a quoted run ('...' or "..."), a doubled quote standing for one; returns the position after it. */
static int
read_quoted(Statement *st, const char *s, int i, char quote, StringInfo out)
{
	for (i++;; i++)
	{
		if (s[i] == '\0')
			ddb_validation_error("Statement wasn't well formed, can't be processed: an unterminated %s",
								 quote == '\'' ? "string" : "quoted identifier");
		if (s[i] == quote && s[i + 1] == quote)
		{
			appendStringInfoChar(out, quote);
			i++;
		}
		else if (s[i] == quote)
			return i + 1;
		else
			appendStringInfoChar(out, s[i]);
	}
}

/* Splits a statement into tokens. */
static void
tokenize(Statement *st, const char *s)
{
	static const char *const two[] = {"<<", ">>", "<>", "!=", "<=", ">="};
	int			cap = 32;
	int			i = 0;

	st->tokens = palloc(sizeof(Token) * cap);
	while (s[i] != '\0')
	{
		char		c = s[i];
		bool		matched = false;

		if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
		{
			i++;
			continue;
		}
		if (c == '\'' || c == '"')
		{
			StringInfoData text;

			initStringInfo(&text);
			i = read_quoted(st, s, i, c, &text);
			add_token(st, &cap, c == '\'' ? TOK_STRING : TOK_QUOTED, text.data);
			continue;
		}
		if (isalpha((unsigned char) c) || c == '_')
		{
			int			start = i;

			while (isalnum((unsigned char) s[i]) || s[i] == '_')
				i++;
			add_token(st, &cap, TOK_WORD, pnstrdup(s + start, i - start));
			continue;
		}
		if (isdigit((unsigned char) c) || (c == '.' && isdigit((unsigned char) s[i + 1])))
		{
			int			start = i;

			while (isdigit((unsigned char) s[i]) || s[i] == '.')
				i++;
			if ((s[i] == 'e' || s[i] == 'E') &&
				(isdigit((unsigned char) s[i + 1]) ||
				 ((s[i + 1] == '+' || s[i + 1] == '-') && isdigit((unsigned char) s[i + 2]))))
			{
				i += 2;
				while (isdigit((unsigned char) s[i]))
					i++;
			}
			add_token(st, &cap, TOK_NUMBER, pnstrdup(s + start, i - start));
			continue;
		}
		if (c == '?')
		{
			add_token(st, &cap, TOK_PARAM, pstrdup("?"));
			i++;
			continue;
		}
		for (size_t k = 0; k < lengthof(two) && !matched; k++)
			if (strncmp(s + i, two[k], 2) == 0)
			{
				add_token(st, &cap, TOK_PUNCT, pstrdup(two[k]));
				i += 2;
				matched = true;
			}
		if (matched)
			continue;
		if (strchr("{}[](),.:=<>*+-", c) == NULL)
			ddb_validation_error("Statement wasn't well formed, can't be processed: unexpected character %c", c);
		add_token(st, &cap, TOK_PUNCT, pnstrdup(s + i, 1));
		i++;
	}
	add_token(st, &cap, TOK_END, pstrdup(""));
}

/* The current token. */
static Token *
peek(Statement *st)
{
	return &st->tokens[st->pos];
}

/* True (and consumed) when the current token is this keyword, in any case. */
static bool
accept_word(Statement *st, const char *word)
{
	if (peek(st)->kind == TOK_WORD && pg_strcasecmp(peek(st)->text, word) == 0)
	{
		st->pos++;
		return true;
	}
	return false;
}

/* True (and consumed) when the current token is this punctuation. */
static bool
accept_punct(Statement *st, const char *punct)
{
	if (peek(st)->kind == TOK_PUNCT && strcmp(peek(st)->text, punct) == 0)
	{
		st->pos++;
		return true;
	}
	return false;
}

/* Consumes a keyword the grammar requires. */
static void
expect_word(Statement *st, const char *word)
{
	if (!accept_word(st, word))
		syntax_error(st, psprintf("%s expected", word));
}

/* Consumes punctuation the grammar requires. */
static void
expect_punct(Statement *st, const char *punct)
{
	if (!accept_punct(st, punct))
		syntax_error(st, psprintf("'%s' expected", punct));
}

/* A name: a bare or a double-quoted identifier. */
static char *
parse_name(Statement *st, const char *what)
{
	Token	   *t = peek(st);

	if (t->kind != TOK_WORD && t->kind != TOK_QUOTED)
		syntax_error(st, psprintf("%s expected", what));
	st->pos++;
	return t->text;
}

/* The placeholder of an attribute name: #p<i>. */
char *
partiql_name_placeholder(Statement *st, const char *name)
{
	st->names = lappend(st->names, pstrdup(name));
	return psprintf("#p%d", list_length(st->names) - 1);
}

/* The placeholder of a value (DynamoDB JSON): :v<i>. */
static char *
value_placeholder(Statement *st, char *json)
{
	st->values = lappend(st->values, json);
	return psprintf(":v%d", list_length(st->values) - 1);
}

/* A literal (string, number, boolean, null, ?, tuple, list, set) as DynamoDB JSON. */
static char *
parse_literal(Statement *st)
{
	Token	   *t = peek(st);
	StringInfoData out;

	initStringInfo(&out);
	check_stack_depth();
	if (t->kind == TOK_STRING)
	{
		st->pos++;
		appendStringInfoString(&out, "{\"S\": ");
		escape_json(&out, t->text);
		appendStringInfoChar(&out, '}');
	}
	else if (t->kind == TOK_NUMBER || (t->kind == TOK_PUNCT && strcmp(t->text, "-") == 0 &&
									   st->tokens[st->pos + 1].kind == TOK_NUMBER))
	{
		bool		negative = accept_punct(st, "-");

		appendStringInfo(&out, "{\"N\": \"%s%s\"}", negative ? "-" : "", peek(st)->text);
		st->pos++;
	}
	else if (accept_word(st, "TRUE") || accept_word(st, "FALSE"))
		appendStringInfo(&out, "{\"BOOL\": %s}", pg_strcasecmp(st->tokens[st->pos - 1].text, "TRUE") == 0 ? "true" : "false");
	else if (accept_word(st, "NULL"))
		appendStringInfoString(&out, "{\"NULL\": true}");
	else if (t->kind == TOK_PARAM)
	{
		JsonbValue *param;

		st->pos++;
		if (st->params == NULL || st->next_param >= st->nparams)
			ddb_validation_error("Number of parameters in request and statement don't match.");
		param = getIthJsonbValueFromContainer(st->params, st->next_param++);
		if (param->type != jbvBinary || !JsonContainerIsObject(param->val.binary.data))
			ddb_validation_error("Supplied AttributeValue is empty, must contain exactly one of the supported datatypes");
		appendStringInfoString(&out, JsonbToCString(NULL, param->val.binary.data, param->val.binary.len));
	}
	else if (accept_punct(st, "{"))
	{
		appendStringInfoString(&out, "{\"M\": {");
		for (int n = 0; !accept_punct(st, "}"); n++)
		{
			Token	   *key;

			if (n > 0)
				expect_punct(st, ",");
			key = peek(st);
			if (key->kind != TOK_STRING && key->kind != TOK_QUOTED)
				syntax_error(st, "an attribute name in quotes expected");
			st->pos++;
			expect_punct(st, ":");
			appendStringInfoString(&out, n > 0 ? ", " : "");
			escape_json(&out, key->text);
			appendStringInfo(&out, ": %s", parse_literal(st));
		}
		appendStringInfoString(&out, "}}");
	}
	else if (accept_punct(st, "["))
	{
		appendStringInfoString(&out, "{\"L\": [");
		for (int n = 0; !accept_punct(st, "]"); n++)
		{
			if (n > 0)
				expect_punct(st, ",");
			appendStringInfo(&out, "%s%s", n > 0 ? ", " : "", parse_literal(st));
		}
		appendStringInfoString(&out, "]}");
	}
	else if (accept_punct(st, "<<"))
	{
		char		set_type = 0;

		appendStringInfoString(&out, "{\"?S\": [");
		for (int n = 0; !accept_punct(st, ">>"); n++)
		{
			Token	   *e;

			if (n > 0)
				expect_punct(st, ",");
			e = peek(st);
			if (e->kind != TOK_STRING && e->kind != TOK_NUMBER)
				syntax_error(st, "a string or a number expected in a set");
			if (set_type != 0 && set_type != (e->kind == TOK_STRING ? 'S' : 'N'))
				ddb_validation_error("A set may not hold both strings and numbers");
			set_type = e->kind == TOK_STRING ? 'S' : 'N';
			appendStringInfoString(&out, n > 0 ? ", " : "");
			escape_json(&out, e->text);
			st->pos++;
		}
		if (set_type == 0)
			ddb_validation_error("One or more parameter values were invalid: An string set  may not be empty");
		out.data[2] = set_type;	/* the ? of {"?S": [...]}: SS or NS */
		appendStringInfoString(&out, "]}");
	}
	else
		syntax_error(st, "a value expected");
	return out.data;
}

/* True when the current token starts a literal. */
static bool
at_literal(Statement *st)
{
	Token	   *t = peek(st);

	return t->kind == TOK_STRING || t->kind == TOK_NUMBER || t->kind == TOK_PARAM ||
		(t->kind == TOK_PUNCT && (strcmp(t->text, "{") == 0 || strcmp(t->text, "[") == 0 ||
								  strcmp(t->text, "<<") == 0 || strcmp(t->text, "-") == 0)) ||
		(t->kind == TOK_WORD && (pg_strcasecmp(t->text, "TRUE") == 0 || pg_strcasecmp(t->text, "FALSE") == 0 ||
								 pg_strcasecmp(t->text, "NULL") == 0));
}

/*
 * A document path (a.b[2]."c d"), rendered with name placeholders; *steps
 * (if asked) gets its steps: names, and "[n]" for list elements.
 */
static char *
parse_path(Statement *st, List **steps)
{
	StringInfoData out;
	char	   *name = parse_name(st, "an attribute name");

	initStringInfo(&out);
	appendStringInfoString(&out, partiql_name_placeholder(st, name));
	if (steps)
		*steps = list_make1(name);
	for (;;)
	{
		if (accept_punct(st, "."))
		{
			name = parse_name(st, "an attribute name");
			appendStringInfo(&out, ".%s", partiql_name_placeholder(st, name));
			if (steps)
				*steps = lappend(*steps, name);
		}
		else if (accept_punct(st, "["))
		{
			Token	   *n = peek(st);

			if (n->kind != TOK_NUMBER || strspn(n->text, "0123456789") != strlen(n->text))
				syntax_error(st, "a list index expected");
			st->pos++;
			expect_punct(st, "]");
			appendStringInfo(&out, "[%s]", n->text);
			if (steps)
				*steps = lappend(*steps, psprintf("[%s]", n->text));
		}
		else
			return out.data;
	}
}

/* An operand of a condition or an update: a path, a value, or a function call. */
static char *
parse_operand(Statement *st)
{
	if (at_literal(st))
		return value_placeholder(st, parse_literal(st));
	if (peek(st)->kind == TOK_WORD && st->tokens[st->pos + 1].kind == TOK_PUNCT &&
		strcmp(st->tokens[st->pos + 1].text, "(") == 0)
	{
		StringInfoData out;
		char	   *function = parse_name(st, "a function");

		initStringInfo(&out);
		appendStringInfo(&out, "%s(", function);
		expect_punct(st, "(");
		for (int n = 0; !accept_punct(st, ")"); n++)
		{
			if (n > 0)
				expect_punct(st, ",");
			appendStringInfo(&out, "%s%s", n > 0 ? ", " : "", parse_operand(st));
		}
		appendStringInfoChar(&out, ')');
		return out.data;
	}
	return parse_path(st, NULL);
}

/* A predicate: a parenthesised condition, NOT, a function, or a comparison; fills conj's key facts. */
static char *
parse_predicate(Statement *st, Conjunct *conj)
{
	static const char *const comparisons[] = {"=", "<>", "!=", "<", "<=", ">", ">="};
	Token	   *first = peek(st);
	int			values_before = list_length(st->values);
	char	   *left;

	check_stack_depth();
	conj->kind = 'o';
	if (accept_punct(st, "("))
	{
		char	   *inner = parse_condition(st);

		expect_punct(st, ")");
		return psprintf("(%s)", inner);
	}
	if (accept_word(st, "NOT"))
		return psprintf("NOT %s", parse_predicate(st, conj));
	if (first->kind == TOK_WORD && st->tokens[st->pos + 1].kind == TOK_PUNCT &&
		strcmp(st->tokens[st->pos + 1].text, "(") == 0)
	{
		int			names_before = list_length(st->names);
		char	   *call = parse_operand(st);
		char	   *bare_first = psprintf("%s(#p%d,", first->text, names_before);

		/* begins_with(sort key, value) is a key condition; size(...) is an operand */
		if (strcmp(first->text, "begins_with") == 0 && strncmp(call, bare_first, strlen(bare_first)) == 0)
		{
			conj->attribute = list_nth(st->names, names_before);
			conj->kind = 'k';
		}
		if (peek(st)->kind != TOK_PUNCT && peek(st)->kind != TOK_WORD)
			return call;
		if (peek(st)->kind == TOK_PUNCT && strchr("=<>!", peek(st)->text[0]) == NULL)
			return call;
		if (peek(st)->kind == TOK_WORD && pg_strcasecmp(peek(st)->text, "BETWEEN") != 0 &&
			pg_strcasecmp(peek(st)->text, "IN") != 0)
			return call;
		conj->kind = 'o';
		conj->attribute = NULL;
		left = call;
	}
	else
		left = parse_operand(st);
	/* a bare name on the left: "#p<i>" alone */
	if (left[0] == '#' && strchr(left, '.') == NULL && strchr(left, '[') == NULL)
		conj->attribute = llast(st->names);
	for (size_t i = 0; i < lengthof(comparisons); i++)
		if (accept_punct(st, comparisons[i]))
		{
			char	   *right = parse_operand(st);

			conj->kind = strcmp(comparisons[i], "=") == 0 ? '=' :
				(strcmp(comparisons[i], "<>") == 0 || strcmp(comparisons[i], "!=") == 0) ? 'o' : 'k';
			conj->value = list_length(st->values) - 1;
			if (list_length(st->values) != values_before + 1 || right[0] != ':')
				conj->kind = 'o';	/* a key condition compares a name with one value */
			return psprintf("%s %s %s", left, strcmp(comparisons[i], "!=") == 0 ? "<>" : comparisons[i], right);
		}
	if (accept_word(st, "BETWEEN"))
	{
		char	   *low = parse_operand(st);
		char	   *high;

		expect_word(st, "AND");
		high = parse_operand(st);
		conj->kind = 'k';
		return psprintf("%s BETWEEN %s AND %s", left, low, high);
	}
	if (accept_word(st, "IN"))
	{
		StringInfoData out;
		const char *close = "]";

		if (!accept_punct(st, "["))
		{
			expect_punct(st, "(");
			close = ")";
		}
		initStringInfo(&out);
		appendStringInfo(&out, "%s IN (", left);
		for (int n = 0; !accept_punct(st, close); n++)
		{
			if (n > 0)
				expect_punct(st, ",");
			appendStringInfo(&out, "%s%s", n > 0 ? ", " : "", parse_operand(st));
		}
		appendStringInfoChar(&out, ')');
		return out.data;
	}
	if (accept_word(st, "IS"))
	{
		bool		negated = accept_word(st, "NOT");

		if (accept_word(st, "MISSING"))
			return psprintf("%s(%s)", negated ? "attribute_exists" : "attribute_not_exists", left);
		if (accept_word(st, "NULL"))
			return psprintf("%sattribute_type(%s, %s)", negated ? "NOT " : "", left,
							value_placeholder(st, pstrdup("{\"S\": \"NULL\"}")));
		syntax_error(st, "MISSING or NULL expected");
	}
	syntax_error(st, "a comparison expected");
	return NULL;
}

/* A condition of ANDs, rendered; top-level conjuncts are kept apart only by parse_where. */
static char *
parse_and(Statement *st, List **conjuncts)
{
	StringInfoData out;

	initStringInfo(&out);
	do
	{
		Conjunct   *conj = palloc0(sizeof(Conjunct));

		conj->text = parse_predicate(st, conj);
		*conjuncts = lappend(*conjuncts, conj);
		appendStringInfo(&out, "%s%s", out.len > 0 ? " AND " : "", conj->text);
	} while (accept_word(st, "AND"));
	return out.data;
}

/* A whole condition (ORs of ANDs), rendered. */
static char *
parse_condition(Statement *st)
{
	List	   *ignored = NIL;
	char	   *text = parse_and(st, &ignored);

	while (accept_word(st, "OR"))
		text = psprintf("%s OR %s", text, parse_and(st, &ignored));
	return text;
}

/* WHERE: its top-level conjuncts, or one 'o' conjunct for the whole when it has a top-level OR. */
static void
parse_where(Statement *st)
{
	List	   *conjuncts = NIL;
	char	   *text = parse_and(st, &conjuncts);

	if (peek(st)->kind == TOK_WORD && pg_strcasecmp(peek(st)->text, "OR") == 0)
	{
		Conjunct   *whole = palloc0(sizeof(Conjunct));

		while (accept_word(st, "OR"))
		{
			List	   *ignored = NIL;

			text = psprintf("%s OR %s", text, parse_and(st, &ignored));
		}
		whole->text = psprintf("(%s)", text);
		whole->kind = 'o';
		conjuncts = list_make1(whole);
	}
	st->conjuncts = conjuncts;
}

/* "table" or "table"."index". */
static void
parse_table(Statement *st, bool index_allowed)
{
	st->table = parse_name(st, "a table name");
	if (index_allowed && accept_punct(st, "."))
		st->index = parse_name(st, "an index name");
}

/* UPDATE's SET and REMOVE clauses. */
static void
parse_update_actions(Statement *st)
{
	initStringInfo(&st->set);
	initStringInfo(&st->remove);
	for (;;)
	{
		if (accept_word(st, "SET"))
		{
			do
			{
				char	   *path = parse_path(st, NULL);
				char	   *value;

				expect_punct(st, "=");
				value = parse_operand(st);
				if (accept_punct(st, "+"))
					value = psprintf("%s + %s", value, parse_operand(st));
				else if (accept_punct(st, "-"))
					value = psprintf("%s - %s", value, parse_operand(st));
				appendStringInfo(&st->set, "%s%s = %s", st->set.len ? ", " : "", path, value);
			} while (accept_punct(st, ","));
		}
		else if (accept_word(st, "REMOVE"))
		{
			do
				appendStringInfo(&st->remove, "%s%s", st->remove.len ? ", " : "", parse_path(st, NULL));
			while (accept_punct(st, ","));
		}
		else
			break;
	}
	if (st->set.len == 0 && st->remove.len == 0)
		syntax_error(st, "SET or REMOVE expected");
}

/* Parses a statement; Parameters bind its ? in order. */
void
partiql_parse(Statement *st, const char *text, JsonbContainer *params)
{
	memset(st, 0, sizeof(Statement));
	st->params = params;
	st->nparams = params ? JsonContainerSize(params) : 0;
	tokenize(st, text);
	if (accept_word(st, "SELECT"))
	{
		st->kind = 'S';
		if (!accept_punct(st, "*"))
		{
			do
			{
				List	   *steps;

				parse_path(st, &steps);
				st->projection = lappend(st->projection, steps);
			} while (accept_punct(st, ","));
			/* projection paths are read from whole items, not placeholders */
			st->names = NIL;
		}
		expect_word(st, "FROM");
		parse_table(st, true);
		if (accept_word(st, "WHERE"))
			parse_where(st);
	}
	else if (accept_word(st, "INSERT"))
	{
		st->kind = 'I';
		expect_word(st, "INTO");
		parse_table(st, false);
		expect_word(st, "VALUE");
		if (!(peek(st)->kind == TOK_PUNCT && strcmp(peek(st)->text, "{") == 0))
			syntax_error(st, "a tuple {...} expected");
		st->item = parse_literal(st);
		/* the item is the map's content: {"M": {...}} without its wrapper */
		st->item = pnstrdup(st->item + strlen("{\"M\": "), strlen(st->item) - strlen("{\"M\": ") - 1);
	}
	else if (accept_word(st, "UPDATE"))
	{
		st->kind = 'U';
		parse_table(st, false);
		parse_update_actions(st);
		expect_word(st, "WHERE");
		parse_where(st);
	}
	else if (accept_word(st, "DELETE"))
	{
		st->kind = 'D';
		expect_word(st, "FROM");
		parse_table(st, false);
		expect_word(st, "WHERE");
		parse_where(st);
	}
	else if (accept_word(st, "EXISTS"))
	{
		/* EXISTS(SELECT * FROM table WHERE key ... AND condition): a ConditionCheck */
		st->kind = 'E';
		expect_punct(st, "(");
		expect_word(st, "SELECT");
		expect_punct(st, "*");
		expect_word(st, "FROM");
		parse_table(st, false);
		expect_word(st, "WHERE");
		parse_where(st);
		expect_punct(st, ")");
	}
	else
		syntax_error(st, "SELECT, INSERT, UPDATE, DELETE or EXISTS expected");
	if (peek(st)->kind != TOK_END)
		syntax_error(st, "the end of the statement expected");
	if (st->next_param != st->nparams)
		ddb_validation_error("Number of parameters in request and statement don't match.");
}
