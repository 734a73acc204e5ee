/*
 * partiql.c — DynamoDB's PartiQL: ExecuteStatement, BatchExecuteStatement
 * and ExecuteTransaction.
 *
 * A statement (SELECT, INSERT, UPDATE, DELETE) is parsed here and rewritten
 * into the operation it stands for, as a DynamoDB JSON request whose
 * expressions use placeholders (#pN for names, :vN for values): a SELECT
 * becomes a Query when its WHERE pins the partition key with =, a Scan
 * otherwise; INSERT a PutItem that may not replace an item; UPDATE an
 * UpdateItem and DELETE a DeleteItem of the item the WHERE names by its
 * whole key, the rest of the WHERE their condition.  The operations serve
 * them with their own checks and errors, as legacy.c does for the legacy
 * parameters.
 */
#include "postgres.h"

#include <ctype.h>

#include "access/xact.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/json.h"
#include "utils/memutils.h"
#include "utils/resowner.h"

#include "../ddb_errors.h"
#include "api.h"

/* DynamoDB's limits on the statements of a batch and of a transaction. */
#define BATCH_MAX_STATEMENTS 25
#define TRANSACTION_MAX_STATEMENTS 100

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

/* A condition of the WHERE's top-level AND, rendered, with what key splitting needs. */
typedef struct Conjunct
{
	char	   *text;			/* in DynamoDB's condition syntax */
	char	   *attribute;		/* the attribute on the left when it is a bare name, else NULL */
	char		kind;			/* '=' equality, 'k' another key condition (<, BETWEEN, begins_with...), 'o' other */
	int			value;			/* for '=': the index of its value placeholder */
} Conjunct;

/* A parsed statement, rewritten. */
typedef struct Statement
{
	Token	   *tokens;
	int			ntokens;
	int			pos;
	JsonbContainer *params;		/* Parameters, or NULL */
	int			nparams;
	int			next_param;
	List	   *names;			/* char *: #p<i> stands for element i */
	List	   *values;			/* char *: the DynamoDB JSON of :v<i> */
	char		kind;			/* 'S'elect, 'I'nsert, 'U'pdate, 'D'elete, 'E'xists (a transaction's check) */
	char	   *table;
	char	   *index;			/* SELECT FROM "table"."index", or NULL */
	List	   *projection;		/* SELECT: List of List of path steps (char * names, or "[n]"), NIL for * */
	List	   *conjuncts;		/* Conjunct * of the WHERE */
	char	   *item;			/* INSERT: the item as DynamoDB JSON */
	StringInfoData set;			/* UPDATE: SET actions */
	StringInfoData remove;		/* UPDATE: REMOVE actions */
} Statement;

/* What a statement becomes: an operation and its request. */
typedef struct Rewritten
{
	Jsonb	   *(*run) (Jsonb *request);	/* api_query, api_scan, api_put_item, ... */
	char	   *request;		/* its request, JSON text */
	bool		insert;			/* a PutItem that may not replace: DuplicateItemException */
} Rewritten;

static char *parse_condition(Statement *st);
static void syntax_error(Statement *st, const char *what) pg_attribute_noreturn();

/* Raises a ValidationException for a statement that does not parse. */
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
static char *
name_placeholder(Statement *st, const char *name)
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
	appendStringInfoString(&out, name_placeholder(st, name));
	if (steps)
		*steps = list_make1(name);
	for (;;)
	{
		if (accept_punct(st, "."))
		{
			name = parse_name(st, "an attribute name");
			appendStringInfo(&out, ".%s", name_placeholder(st, name));
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
static void
parse_statement(Statement *st, const char *text, JsonbContainer *params)
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
static char *
remaining_condition(List *conjuncts, List *taken)
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
static void
rewrite(Statement *st, Rewritten *out, bool consistent)
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
		Conjunct   *hash = find_conjunct(st->conjuncts, keys->hash_key, "=");
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
		texts[1] = remaining_condition(st->conjuncts, taken);
		/* a Query may not filter on its keys: with more conditions on them, a Scan filters them all */
		if (hash && texts[1] && names_key(st, texts[1], keys))
		{
			hash = NULL;
			texts[0] = NULL;
			texts[1] = remaining_condition(st->conjuncts, NIL);
		}
		append_expressions(&req, st, members, texts, 2);
		out->run = hash ? api_query : api_scan;
	}
	else if (st->kind == 'I')
	{
		const char *const members[1] = {"ConditionExpression"};
		char	   *texts[1] = {psprintf("attribute_not_exists(%s)", name_placeholder(st, def->keys.hash_key))};

		appendStringInfo(&req, ", \"Item\": %s", st->item);
		append_expressions(&req, st, members, texts, 1);
		out->run = api_put_item;
		out->insert = true;
	}
	else
	{
		char	   *key = statement_key(st, def, &taken);
		char	   *rest = remaining_condition(st->conjuncts, taken);
		const char *const members[2] = {"ConditionExpression", "UpdateExpression"};
		char	   *texts[2] = {rest, NULL};

		appendStringInfo(&req, ", \"Key\": %s", key);
		if (st->kind == 'U' || st->kind == 'E')
		{
			/* an UPDATE changes an item that exists; EXISTS checks that it does */
			char	   *exists = psprintf("attribute_exists(%s)", name_placeholder(st, def->keys.hash_key));

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

/* A JSON text as jsonb. */
static Jsonb *
text_to_jsonb(const char *text)
{
	return DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(text)));
}

/* The attribute value a path reaches in a DynamoDB JSON item, or NULL. */
static JsonbValue *
value_at_path(JsonbContainer *item, List *steps)
{
	JsonbValue *v = NULL;
	ListCell   *lc;

	foreach(lc, steps)
	{
		char	   *step = lfirst(lc);
		JsonbValue *inner;

		if (v != NULL)
		{
			/* into {"M": {...}} or {"L": [...]} */
			if (v->type != jbvBinary)
				return NULL;
			inner = getKeyJsonValueFromContainer(v->val.binary.data, step[0] == '[' ? "L" : "M",
												 1, NULL);
			if (inner == NULL || inner->type != jbvBinary)
				return NULL;
			item = inner->val.binary.data;
		}
		if (step[0] == '[')
		{
			if (!JsonContainerIsArray(item))
				return NULL;
			v = getIthJsonbValueFromContainer(item, (uint32) atoi(step + 1));
		}
		else
			v = JsonContainerIsObject(item) ? getKeyJsonValueFromContainer(item, step, strlen(step), NULL) : NULL;
		if (v == NULL)
			return NULL;
	}
	return v;
}

/* A SELECT's item as its projection shapes it: each path's value under the path's last name. */
static JsonbValue *
project_item(JsonbValue *item, List *projection)
{
	JsonbParseState *state = NULL;
	JsonbValue *projected;
	ListCell   *lc;

	if (projection == NIL || item->type != jbvBinary)
		return item;
	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	foreach(lc, projection)
	{
		List	   *steps = lfirst(lc);
		JsonbValue *v = value_at_path(item->val.binary.data, steps);
		char	   *name = NULL;
		ListCell   *sc;

		if (v == NULL)
			continue;
		foreach(sc, steps)
			if (((char *) lfirst(sc))[0] != '[')
				name = lfirst(sc);
		ddb_push_key(&state, name);
		pushJsonbValue(&state, WJB_VALUE, v);
	}
	projected = palloc(sizeof(JsonbValue));
	ddb_binary_value(JsonbValueToJsonb(pushJsonbValue(&state, WJB_END_OBJECT, NULL)), projected);
	return projected;
}

/* Runs a rewritten statement; INSERT's failed condition is DynamoDB's DuplicateItemException. */
static Jsonb *
run_rewritten(Rewritten *rw, Jsonb *request)
{
	MemoryContext cxt = CurrentMemoryContext;
	Jsonb	   *volatile response = NULL;

	if (!rw->insert)
		return rw->run(request);
	PG_TRY();
	{
		response = rw->run(request);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		if (edata->sqlerrcode != ERRCODE_DDB_CONDITIONAL_CHECK_FAILED)
			PG_RE_THROW();
		FlushErrorState();
		ereport(ERROR,
				(errcode(ERRCODE_DDB_DUPLICATE_ITEM),
				 errmsg("Duplicate primary key exists in table")));
	}
	PG_END_TRY();
	return response;
}

/* A Statement member as text, checked. */
static char *
statement_text(Jsonb *request)
{
	char	   *text = api_string(request, "Statement");

	if (text == NULL)
		api_missing("statement");
	if (strlen(text) < 1 || strlen(text) > 8192)
		ddb_validation_error("1 validation error detected: Value at 'statement' failed to satisfy constraint: "
							 "Member must have length less than or equal to 8192 and greater than or equal to 1");
	return text;
}

/* The Parameters of a statement, or NULL. */
static JsonbContainer *
statement_params(Jsonb *request)
{
	JsonbValue	v;

	if (!api_field(request, "Parameters", &v))
		return NULL;
	if (v.type != jbvBinary || !JsonContainerIsArray(v.val.binary.data))
		ddb_validation_error("Parameters must be a list of AttributeValues");
	if (JsonContainerSize(v.val.binary.data) == 0)
		ddb_validation_error("1 validation error detected: Value '[]' at 'parameters' failed to satisfy constraint: "
							 "Member must have length greater than or equal to 1");
	return v.val.binary.data;
}

/* The ExclusiveStartKey a NextToken stands for (the JSON text of a LastEvaluatedKey), checked. */
static char *
next_token_key(const char *token)
{
	MemoryContext cxt = CurrentMemoryContext;
	volatile bool valid = true;

	PG_TRY();
	{
		Jsonb	   *key = text_to_jsonb(token);

		valid = JB_ROOT_IS_OBJECT(key) && !JB_ROOT_IS_SCALAR(key);
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(cxt);
		FlushErrorState();
		valid = false;
	}
	PG_END_TRY();
	if (!valid)
		ddb_validation_error("The provided NextToken is not valid");
	return pstrdup(token);
}

/* The Key of a SELECT that must read one item (batches, transactions): equalities on the table's whole key. */
static char *
single_item_key(Statement *st, List **taken)
{
	if (st->index)
		ddb_validation_error("A batch or a transaction reads items by their primary key, not from an index");
	return statement_key(st, table_def_get(st->table), taken);
}

/*
 * Runs one statement; *items (SELECT) gets its items as the projection
 * shapes them, *next its LastEvaluatedKey.  With single_item (a batch), a
 * SELECT must name one item by its whole key.
 */
static void
run_statement(Jsonb *request, List **items, JsonbValue *next, const char **table, int64 limit, bool single_item)
{
	Statement	st;
	Rewritten	rw;
	Jsonb	   *response;
	char	   *req;
	JsonbValue	v;

	parse_statement(&st, statement_text(request), statement_params(request));
	if (st.kind == 'E')
		ddb_validation_error("EXISTS is only allowed in a transaction (ExecuteTransaction)");
	*table = st.table;
	if (single_item && st.kind == 'S')
	{
		List	   *taken = NIL;

		single_item_key(&st, &taken);
	}
	rewrite(&st, &rw, api_bool(request, "ConsistentRead", false));
	req = rw.request;
	if (st.kind == 'S' && (limit > 0 || api_field(request, "NextToken", &v)))
	{
		StringInfoData more;

		initStringInfo(&more);
		appendBinaryStringInfo(&more, req, strlen(req) - 1);
		if (limit > 0)
			appendStringInfo(&more, ", \"Limit\": " INT64_FORMAT, limit);
		if (api_field(request, "NextToken", &v))
			appendStringInfo(&more, ", \"ExclusiveStartKey\": %s", next_token_key(api_string(request, "NextToken")));
		appendStringInfoChar(&more, '}');
		req = more.data;
	}
	response = run_rewritten(&rw, text_to_jsonb(req));
	if (items && st.kind == 'S')
	{
		JsonbValue *found = getKeyJsonValueFromContainer(&response->root, "Items", 5, NULL);
		JsonbValue *last = getKeyJsonValueFromContainer(&response->root, "LastEvaluatedKey", 16, NULL);

		if (found && found->type == jbvBinary)
			for (uint32 i = 0; i < JsonContainerSize(found->val.binary.data); i++)
				*items = lappend(*items, project_item(getIthJsonbValueFromContainer(found->val.binary.data, i),
													  st.projection));
		if (last && next)
			*next = *last;
	}
}

/* Pushes "Items": [...] of a response. */
static void
push_items(JsonbParseState **state, List *items)
{
	ListCell   *lc;

	ddb_push_key(state, "Items");
	pushJsonbValue(state, WJB_BEGIN_ARRAY, NULL);
	foreach(lc, items)
		pushJsonbValue(state, WJB_ELEM, lfirst(lc));
	pushJsonbValue(state, WJB_END_ARRAY, NULL);
}

/* ExecuteStatement: one PartiQL statement. */
Jsonb *
api_execute_statement(Jsonb *request)
{
	JsonbParseState *state = NULL;
	List	   *items = NIL;
	JsonbValue	next = {.type = jbvNull};
	const char *table;

	run_statement(request, &items, &next, &table, api_int(request, "Limit", 1, INT_MAX), false);
	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	push_items(&state, items);
	if (next.type != jbvNull)
		ddb_push_string(&state, "NextToken", JsonbToCString(NULL, next.val.binary.data, next.val.binary.len));
	return JsonbValueToJsonb(pushJsonbValue(&state, WJB_END_OBJECT, NULL));
}

/* The statements of a batch or transaction: 1 to max objects. */
static JsonbContainer *
statement_list(Jsonb *request, const char *field, const char *member, int max)
{
	JsonbValue	v;
	int			n;

	if (!api_field(request, field, &v))
		api_missing(member);
	if (v.type != jbvBinary || !JsonContainerIsArray(v.val.binary.data))
		ddb_validation_error("%s must be a list", field);
	n = JsonContainerSize(v.val.binary.data);
	if (n < 1)
		ddb_validation_error("1 validation error detected: Value '[]' at '%s' failed to satisfy constraint: "
							 "Member must have length greater than or equal to 1", member);
	if (n > max)
		ddb_validation_error("1 validation error detected: Value at '%s' failed to satisfy constraint: "
							 "Member must have length less than or equal to %d", member, max);
	return v.val.binary.data;
}

/* Element i of a statement list as a request of its own. */
static Jsonb *
list_element(JsonbContainer *list, int i)
{
	JsonbValue *v = getIthJsonbValueFromContainer(list, i);

	if (v->type != jbvBinary || !JsonContainerIsObject(v->val.binary.data))
		ddb_validation_error("A statement must be an object with a Statement");
	return JsonbValueToJsonb(v);
}

/* DynamoDB's short error code of a batch response: ResourceNotFound, ConditionalCheckFailed, ... */
static const char *
batch_error_code(int sqlerrcode)
{
	if (sqlerrcode == ERRCODE_DDB_RESOURCE_NOT_FOUND)
		return "ResourceNotFound";
	if (sqlerrcode == ERRCODE_DDB_CONDITIONAL_CHECK_FAILED)
		return "ConditionalCheckFailed";
	if (sqlerrcode == ERRCODE_DDB_DUPLICATE_ITEM)
		return "DuplicateItem";
	if (sqlerrcode == ERRCODE_DDB_TRANSACTION_CANCELED)
		return "TransactionConflict";
	return "ValidationError";
}

/*
 * BatchExecuteStatement: up to 25 statements, each on its own (in a
 * subtransaction): a failed one is an Error in its response, the others
 * take effect.
 */
Jsonb *
api_batch_execute_statement(Jsonb *request)
{
	JsonbContainer *list = statement_list(request, "Statements", "statements", BATCH_MAX_STATEMENTS);
	int			n = JsonContainerSize(list);
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	JsonbParseState *state = NULL;

	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	ddb_push_key(&state, "Responses");
	pushJsonbValue(&state, WJB_BEGIN_ARRAY, NULL);
	for (int i = 0; i < n; i++)
	{
		Jsonb	   *element = list_element(list, i);
		List	   *volatile items = NIL;
		const char *volatile table = NULL;
		ErrorData  *volatile failure = NULL;

		BeginInternalSubTransaction(NULL);
		MemoryContextSwitchTo(cxt);
		PG_TRY();
		{
			List	   *found = NIL;
			const char *name = NULL;

			run_statement(element, &found, NULL, &name, -1, true);
			items = found;
			table = name;
			ReleaseCurrentSubTransaction();
		}
		PG_CATCH();
		{
			ErrorData  *edata;

			MemoryContextSwitchTo(cxt);
			edata = CopyErrorData();
			FlushErrorState();
			RollbackAndReleaseCurrentSubTransaction();
			if (ERRCODE_TO_CATEGORY(edata->sqlerrcode) != ERRCODE_TO_CATEGORY(ERRCODE_DDB_VALIDATION))
			{
				MemoryContextSwitchTo(cxt);
				CurrentResourceOwner = owner;
				ReThrowError(edata);
			}
			failure = edata;
		}
		PG_END_TRY();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;

		pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
		if (failure)
		{
			ddb_push_key(&state, "Error");
			pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
			ddb_push_string(&state, "Code", batch_error_code(failure->sqlerrcode));
			ddb_push_string(&state, "Message", failure->message);
			pushJsonbValue(&state, WJB_END_OBJECT, NULL);
		}
		else
		{
			ddb_push_string(&state, "TableName", table);
			if (items != NIL)
			{
				ddb_push_key(&state, "Item");
				pushJsonbValue(&state, WJB_VALUE, linitial(items));
			}
		}
		pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	}
	pushJsonbValue(&state, WJB_END_ARRAY, NULL);
	return JsonbValueToJsonb(pushJsonbValue(&state, WJB_END_OBJECT, NULL));
}

/*
 * ExecuteTransaction: up to 100 statements, all reads (a TransactGetItems)
 * or all writes and EXISTS checks (a TransactWriteItems), each addressing
 * one item by its key; an INSERT that finds its item cancels with the
 * reason DuplicateItem.
 */
Jsonb *
api_execute_transaction(Jsonb *request)
{
	JsonbContainer *list = statement_list(request, "TransactStatements", "transactStatements",
										  TRANSACTION_MAX_STATEMENTS);
	int			n = JsonContainerSize(list);
	StringInfoData actions;
	char		kind = 0;
	List	   *projections = NIL;
	char	   *token = api_string(request, "ClientRequestToken");
	bool	   *inserts = palloc0(sizeof(bool) * n);

	initStringInfo(&actions);
	for (int i = 0; i < n; i++)
	{
		Jsonb	   *element = list_element(list, i);
		Statement	st;
		Rewritten	rw;
		const char *wrapper;

		parse_statement(&st, statement_text(element), statement_params(element));
		if (kind != 0 && (kind == 'S') != (st.kind == 'S'))
			ddb_validation_error("Transactions must contain only read statements or only write statements");
		kind = st.kind;
		if (st.kind == 'S')
		{
			List	   *taken = NIL;
			char	   *key = single_item_key(&st, &taken);
			StringInfoData get;

			if (remaining_condition(st.conjuncts, taken) != NULL)
				ddb_validation_error("Where clause of a read in a transaction may only name the key attributes");
			initStringInfo(&get);
			appendStringInfoString(&get, "{\"TableName\": ");
			escape_json(&get, st.table);
			appendStringInfo(&get, ", \"Key\": %s}", key);
			appendStringInfo(&actions, "%s{\"Get\": %s}", i ? ", " : "", get.data);
			projections = lappend(projections, st.projection);
			continue;
		}
		rewrite(&st, &rw, false);
		wrapper = st.kind == 'I' ? "Put" : st.kind == 'U' ? "Update" : st.kind == 'E' ? "ConditionCheck" : "Delete";
		appendStringInfo(&actions, "%s{\"%s\": %s}", i ? ", " : "", wrapper, rw.request);
		inserts[i] = rw.insert;
	}
	if (kind == 'S')
	{
		Jsonb	   *response = api_transact_get_items(text_to_jsonb(psprintf("{\"TransactItems\": [%s]}", actions.data)));
		JsonbParseState *state = NULL;
		JsonbValue *responses;
		ListCell   *lc;

		responses = getKeyJsonValueFromContainer(&response->root, "Responses", 9, NULL);
		pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
		ddb_push_key(&state, "Responses");
		pushJsonbValue(&state, WJB_BEGIN_ARRAY, NULL);
		foreach(lc, projections)
		{
			JsonbValue *r = getIthJsonbValueFromContainer(responses->val.binary.data, foreach_current_index(lc));
			JsonbValue *item = getKeyJsonValueFromContainer(r->val.binary.data, "Item", 4, NULL);

			pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
			if (item)
			{
				ddb_push_key(&state, "Item");
				pushJsonbValue(&state, WJB_VALUE, project_item(item, lfirst(lc)));
			}
			pushJsonbValue(&state, WJB_END_OBJECT, NULL);
		}
		pushJsonbValue(&state, WJB_END_ARRAY, NULL);
		return JsonbValueToJsonb(pushJsonbValue(&state, WJB_END_OBJECT, NULL));
	}
	appendStringInfoChar(&actions, ']');
	if (token)
	{
		appendStringInfoString(&actions, ", \"ClientRequestToken\": ");
		escape_json(&actions, token);
	}
	api_transact_write(text_to_jsonb(psprintf("{\"TransactItems\": [%s}", actions.data)), inserts);
	return ddb_empty_object();
}
