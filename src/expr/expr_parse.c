/*
 * expr_parse.c — lexer and recursive-descent parser of DynamoDB condition
 * expressions (grammar in expr.h).  Plain C: no server calls.
 */
#include "expr.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

typedef enum TokenKind
{
	TOK_EOF,
	TOK_NAME,					/* attribute name or function name */
	TOK_NAME_PLACEHOLDER,		/* #name */
	TOK_VALUE_PLACEHOLDER,		/* :value */
	TOK_NUMBER,					/* list index digits */
	TOK_AND,
	TOK_OR,
	TOK_NOT,
	TOK_BETWEEN,
	TOK_IN,
	TOK_LPAREN,
	TOK_RPAREN,
	TOK_COMMA,
	TOK_DOT,
	TOK_LBRACKET,
	TOK_RBRACKET,
	TOK_EQ,
	TOK_NE,
	TOK_LT,
	TOK_LE,
	TOK_GT,
	TOK_GE,
	TOK_PLUS,
	TOK_MINUS,
	TOK_INVALID
} TokenKind;

typedef struct Token
{
	TokenKind	kind;
	const char *start;
	int			len;
} Token;

typedef struct Parser
{
	const char *text;
	size_t		len;
	size_t		pos;			/* next unread byte */
	Token		tok;			/* current token */
	Token		prev;			/* the token before it (TOK_EOF at the first) */
	ExprNode   *group;			/* the content of the last parenthesised group */
	int			depth;			/* parentheses open around the current token */
	ExprArena  *arena;
	ExprError  *error;
	bool		failed;
} Parser;

/* Allocates zeroed memory from the arena. */
static void *
arena_alloc(Parser *p, size_t size)
{
	void	   *mem = p->arena->alloc(p->arena->context, size);

	memset(mem, 0, size);
	return mem;
}

/* Records the first error (a printf format and its arguments); later ones are consequences of it. */
static void __attribute__((format(printf, 2, 3)))
fail(Parser *p, const char *format,...)
{
	va_list		args;

	if (p->failed)
		return;
	p->failed = true;
	va_start(args, format);
	vsnprintf(p->error->message, sizeof(p->error->message), format, args);
	va_end(args);
	p->error->position = (int) (p->tok.start - p->text);
}

static void next_token(Parser *p);

/*
 * Records DynamoDB's syntax error for the current token: "near" is the text
 * from the token before it to the token after it, as DynamoDB shows it.
 */
static void
fail_syntax(Parser *p)
{
	Parser		ahead = *p;
	const char *near_start = p->prev.kind != TOK_EOF ? p->prev.start : p->tok.start;
	int			near_len;

	next_token(&ahead);
	near_len = (int) (ahead.tok.start + ahead.tok.len - near_start);
	if (p->tok.kind == TOK_EOF)
		fail(p, "Syntax error; token: <EOF>, near: \"%.*s\"", near_len > 60 ? 60 : near_len, near_start);
	else
		fail(p, "Syntax error; token: \"%.*s\", near: \"%.*s\"", p->tok.len > 40 ? 40 : p->tok.len, p->tok.start,
			 near_len > 60 ? 60 : near_len, near_start);
}

/* True for the white space the lexer skips. */
static inline bool
is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* True for the bytes of a name. */
static inline bool
is_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* True when the token's text equals a keyword, ignoring case. */
static bool
token_is_word(Token *t, const char *word)
{
	int			n = (int) strlen(word);

	if (t->len != n)
		return false;
	for (int i = 0; i < n; i++)
	{
		char		c = t->start[i];

		if (c >= 'a' && c <= 'z')
			c = (char) (c - 'a' + 'A');
		if (c != word[i])
			return false;
	}
	return true;
}

/* Reads the next token into p->tok. */
static void
next_token(Parser *p)
{
	const char *s = p->text;
	size_t		i = p->pos;
	Token	   *t = &p->tok;

	p->prev = p->tok;
	while (i < p->len && is_space(s[i]))
		i++;
	t->start = s + i;
	t->len = 1;
	if (i >= p->len)
	{
		t->kind = TOK_EOF;
		t->len = 0;
		p->pos = i;
		return;
	}
	switch (s[i])
	{
		case '(':
			t->kind = TOK_LPAREN;
			break;
		case ')':
			t->kind = TOK_RPAREN;
			break;
		case ',':
			t->kind = TOK_COMMA;
			break;
		case '.':
			t->kind = TOK_DOT;
			break;
		case '[':
			t->kind = TOK_LBRACKET;
			break;
		case ']':
			t->kind = TOK_RBRACKET;
			break;
		case '=':
			t->kind = TOK_EQ;
			break;
		case '<':
			t->kind = TOK_LT;
			if (i + 1 < p->len && s[i + 1] == '=')
				t->kind = TOK_LE, t->len = 2;
			else if (i + 1 < p->len && s[i + 1] == '>')
				t->kind = TOK_NE, t->len = 2;
			break;
		case '+':
			t->kind = TOK_PLUS;
			break;
		case '-':
			t->kind = TOK_MINUS;
			break;
		case '>':
			t->kind = TOK_GT;
			if (i + 1 < p->len && s[i + 1] == '=')
				t->kind = TOK_GE, t->len = 2;
			break;
		case '#':
		case ':':
			t->kind = s[i] == '#' ? TOK_NAME_PLACEHOLDER : TOK_VALUE_PLACEHOLDER;
			while (i + t->len < p->len && is_name_char(s[i + t->len]))
				t->len++;
			if (t->len == 1)
				t->kind = TOK_INVALID;
			break;
		default:
			if (s[i] >= '0' && s[i] <= '9')
			{
				t->kind = TOK_NUMBER;
				while (i + t->len < p->len && s[i + t->len] >= '0' && s[i + t->len] <= '9')
					t->len++;
			}
			else if (is_name_char(s[i]))
			{
				t->kind = TOK_NAME;
				while (i + t->len < p->len && is_name_char(s[i + t->len]))
					t->len++;
				if (token_is_word(t, "AND"))
					t->kind = TOK_AND;
				else if (token_is_word(t, "OR"))
					t->kind = TOK_OR;
				else if (token_is_word(t, "NOT"))
					t->kind = TOK_NOT;
				else if (token_is_word(t, "BETWEEN"))
					t->kind = TOK_BETWEEN;
				else if (token_is_word(t, "IN"))
					t->kind = TOK_IN;
			}
			else
				t->kind = TOK_INVALID;
	}
	p->pos = i + t->len;
}

/* Consumes a token of the given kind, or fails. */
static bool
expect(Parser *p, TokenKind kind)
{
	if (p->failed)
		return false;
	if (p->tok.kind != kind)
	{
		fail_syntax(p);
		return false;
	}
	next_token(p);
	return true;
}

/* A new node of a kind at the current token. */
static ExprNode *
new_node(Parser *p, ExprKind kind, const char *at)
{
	ExprNode   *n = arena_alloc(p, sizeof(ExprNode));

	n->kind = kind;
	n->position = (int) (at - p->text);
	return n;
}

/* path := (name | #name) ('.' (name | #name) | '[' digits ']')* */
static ExprNode *
parse_path(Parser *p)
{
	ExprNode   *n = new_node(p, EXPR_PATH, p->tok.start);
	int			cap = 4;
	ExprPathStep *steps = arena_alloc(p, sizeof(ExprPathStep) * cap);
	int			count = 0;
	bool		need_name = true;

	for (;;)
	{
		if (count == cap)
		{
			ExprPathStep *bigger = arena_alloc(p, sizeof(ExprPathStep) * cap * 2);

			memcpy(bigger, steps, sizeof(ExprPathStep) * cap);
			steps = bigger;
			cap *= 2;
		}
		if (need_name)
		{
			if (p->tok.kind != TOK_NAME && p->tok.kind != TOK_NAME_PLACEHOLDER)
			{
				fail_syntax(p);
				return NULL;
			}
			if (p->tok.kind == TOK_NAME && expr_is_reserved_word(p->tok.start, p->tok.len))
			{
				fail(p, "Attribute name is a reserved keyword; reserved keyword: %.*s",  p->tok.len, p->tok.start);
				return NULL;
			}
			steps[count].name = p->tok.start;
			steps[count].name_len = p->tok.len;
			steps[count].placeholder = p->tok.kind == TOK_NAME_PLACEHOLDER;
			count++;
			next_token(p);
			need_name = false;
		}
		else if (p->tok.kind == TOK_DOT)
		{
			next_token(p);
			need_name = true;
		}
		else if (p->tok.kind == TOK_LBRACKET)
		{
			long		index = 0;

			next_token(p);
			if (p->tok.kind != TOK_NUMBER)
			{
				fail_syntax(p);
				return NULL;
			}
			/* nine digits at most: every index fits an int */
			if (p->tok.len > 9)
			{
				fail(p, "The list index in a document path is too large");
				return NULL;
			}
			for (int i = 0; i < p->tok.len; i++)
				index = index * 10 + (p->tok.start[i] - '0');
			steps[count].index = (int) index;
			count++;
			next_token(p);
			if (!expect(p, TOK_RBRACKET))
				return NULL;
		}
		else
			break;
	}
	n->u.path.steps = steps;
	n->u.path.nsteps = count;
	return n;
}

static ExprNode *parse_or(Parser *p);

/* The function named by a token, or -1. */
static int
function_of(Token *t)
{
	static const char *const names[] = {"attribute_exists", "attribute_not_exists",
	"attribute_type", "begins_with", "contains", "size", "if_not_exists", "list_append"};

	for (int i = 0; i < (int) (sizeof(names) / sizeof(names[0])); i++)
		if ((int) strlen(names[i]) == t->len && memcmp(names[i], t->start, t->len) == 0)
			return i;
	return -1;
}

/* A document path at the current token, or DynamoDB's syntax error. */
static ExprNode *
parse_path_operand(Parser *p)
{
	if (p->tok.kind == TOK_NAME || p->tok.kind == TOK_NAME_PLACEHOLDER)
		return parse_path(p);
	fail_syntax(p);
	return NULL;
}

/* A :value placeholder, the current token. */
static ExprNode *
parse_value(Parser *p)
{
	ExprNode   *n = new_node(p, EXPR_VALUE, p->tok.start);

	n->u.value.name = p->tok.start;
	n->u.value.name_len = p->tok.len;
	next_token(p);
	return n;
}

/* function := name '(' operand (',' operand)* ')' with the operand counts DynamoDB needs. */
static ExprNode *
parse_function(Parser *p, ExprNode *(*parse_operand) (Parser *))
{
	ExprNode   *n = new_node(p, EXPR_FUNCTION, p->tok.start);
	int			fn = function_of(&p->tok);
	int			want;
	ExprNode   *args[8];
	int			nargs = 0;

	if (fn < 0)
	{
		fail(p, "Invalid function name; function: %.*s", p->tok.len > 60 ? 60 : p->tok.len, p->tok.start);
		return NULL;
	}
	next_token(p);
	if (!expect(p, TOK_LPAREN))
		return NULL;
	for (;;)
	{
		ExprNode   *arg = parse_operand(p);

		if (arg == NULL)
			return NULL;
		if (nargs < 8)
			args[nargs] = arg;
		nargs++;
		if (p->tok.kind != TOK_COMMA)
			break;
		next_token(p);
	}
	if (!expect(p, TOK_RPAREN))
		return NULL;
	want = (fn == FN_ATTRIBUTE_TYPE || fn == FN_BEGINS_WITH || fn == FN_CONTAINS ||
			fn == FN_IF_NOT_EXISTS || fn == FN_LIST_APPEND) ? 2 : 1;
	if (nargs != want)
	{
		fail(p, "Incorrect number of operands for operator or function; operator or function: %s, number of operands: %d",
			 expr_function_name((ExprFunction) fn), nargs);
		return NULL;
	}
	n->u.func.fn = (ExprFunction) fn;
	n->u.func.nargs = nargs;
	n->u.func.args = arena_alloc(p, sizeof(ExprNode *) * nargs);
	memcpy(n->u.func.args, args, sizeof(ExprNode *) * nargs);
	return n;
}

/* True when the current token is a name followed by '(' (a call). */
static bool
at_call(Parser *p)
{
	size_t		i = p->pos;

	if (p->tok.kind != TOK_NAME)
		return false;
	while (i < p->len && is_space(p->text[i]))
		i++;
	return i < p->len && p->text[i] == '(';
}

/* Records a parenthesised group's content; fails when it is itself one group, ((x)). */
static bool
close_group(Parser *p, ExprNode *content)
{
	if (content == p->group)
	{
		fail(p, "The expression has redundant parentheses;");
		return false;
	}
	p->group = content;
	return true;
}

/* True for an operand (a path, a value, size()) as opposed to a condition. */
static bool
is_operand(const ExprNode *n)
{
	return n->kind == EXPR_PATH || n->kind == EXPR_VALUE ||
		(n->kind == EXPR_FUNCTION && n->u.func.fn == FN_SIZE);
}

/* A condition where one is due: an operand standing alone is a syntax error. */
static ExprNode *
require_condition(Parser *p, ExprNode *n)
{
	if (n && is_operand(n))
	{
		fail_syntax(p);
		return NULL;
	}
	return n;
}

/* operand := path | :value | size(path) | '(' operand ')' */
static ExprNode *
parse_operand(Parser *p)
{
	ExprNode   *n;

	if (p->failed)
		return NULL;
	if (p->tok.kind == TOK_LPAREN)
	{
		next_token(p);
		n = parse_operand(p);
		if (n == NULL || !expect(p, TOK_RPAREN) || !close_group(p, n))
			return NULL;
		return n;
	}
	if (p->tok.kind == TOK_VALUE_PLACEHOLDER)
	{
		return parse_value(p);
	}
	if (at_call(p))
	{
		n = parse_function(p, parse_operand);
		if (n && n->u.func.fn != FN_SIZE)
		{
			fail(p, "The function is not allowed to be used this way in an expression; function: %s",  expr_function_name(n->u.func.fn));
			return NULL;
		}
		if (n && n->u.func.args[0]->kind != EXPR_PATH)
		{
			fail(p, "Incorrect operand type for operator or function; operator or function: size, operand type: not a document path");
			return NULL;
		}
		return n;
	}
	return parse_path_operand(p);
}

/* The comparator of a token, or -1. */
static int
comparator_of(TokenKind kind)
{
	switch (kind)
	{
		case TOK_EQ:
			return CMP_EQ;
		case TOK_NE:
			return CMP_NE;
		case TOK_LT:
			return CMP_LT;
		case TOK_LE:
			return CMP_LE;
		case TOK_GT:
			return CMP_GT;
		case TOK_GE:
			return CMP_GE;
		default:
			return -1;
	}
}

/* The rest of a comparison after its left operand: comparator operand | BETWEEN ... | IN (...). */
static ExprNode *
parse_comparison_rest(Parser *p, ExprNode *left, const char *at)
{
	ExprNode   *n;
	int			op;

	op = comparator_of(p->tok.kind);
	if (op >= 0)
	{
		next_token(p);
		n = new_node(p, EXPR_COMPARE, at);
		n->u.compare.op = (ExprCompareOp) op;
		n->u.compare.left = left;
		n->u.compare.right = parse_operand(p);
		return n->u.compare.right ? n : NULL;
	}
	if (p->tok.kind == TOK_BETWEEN)
	{
		next_token(p);
		n = new_node(p, EXPR_BETWEEN, at);
		n->u.between.operand = left;
		n->u.between.low = parse_operand(p);
		if (!expect(p, TOK_AND))
			return NULL;
		n->u.between.high = parse_operand(p);
		return n->u.between.high ? n : NULL;
	}
	if (p->tok.kind == TOK_IN)
	{
		/* from the arena: a 100-entry array here would sit in every recursion frame */
		ExprNode  **list = arena_alloc(p, sizeof(ExprNode *) * 100);
		int			count = 0;

		next_token(p);
		if (!expect(p, TOK_LPAREN))
			return NULL;
		for (;;)
		{
			ExprNode   *item = parse_operand(p);

			if (item == NULL)
				return NULL;
			if (count == 100)
			{
				fail(p, "Too many operands for the IN operator; the maximum is 100");
				return NULL;
			}
			list[count++] = item;
			if (p->tok.kind != TOK_COMMA)
				break;
			next_token(p);
		}
		if (!expect(p, TOK_RPAREN))
			return NULL;
		n = new_node(p, EXPR_IN, at);
		n->u.in.operand = left;
		n->u.in.nlist = count;
		n->u.in.list = list;
		return n;
	}
	fail_syntax(p);
	return NULL;
}

/*
 * comparison := operand rest.  Inside parentheses an operand may stand
 * alone, "(a) = :v": it goes back up to the group, which goes on with it.
 */
static ExprNode *
parse_comparison(Parser *p)
{
	const char *at = p->tok.start;
	ExprNode   *left = parse_operand(p);

	if (left == NULL)
		return NULL;
	if (p->tok.kind == TOK_RPAREN && p->depth > 0)
		return left;
	return parse_comparison_rest(p, left, at);
}

/* not := NOT not | '(' condition ')' | '(' operand ')' rest | function | comparison */
static ExprNode *
parse_not(Parser *p)
{
	ExprNode   *n;
	const char *at = p->tok.start;

	if (p->failed)
		return NULL;
	if (p->tok.kind == TOK_NOT)
	{
		next_token(p);
		n = new_node(p, EXPR_NOT, at);
		n->u.logic.left = require_condition(p, parse_not(p));
		return n->u.logic.left ? n : NULL;
	}
	if (p->tok.kind == TOK_LPAREN)
	{
		next_token(p);
		p->depth++;
		n = parse_or(p);
		p->depth--;
		if (n == NULL || !expect(p, TOK_RPAREN) || !close_group(p, n))
			return NULL;
		/* an operand in parentheses: its comparison follows, unless an outer group closes first */
		if (is_operand(n) && !(p->tok.kind == TOK_RPAREN && p->depth > 0))
			return parse_comparison_rest(p, n, at);
		return n;
	}
	/* a condition function; size(...) starts a comparison instead */
	if (at_call(p) && !(p->tok.len == 4 && memcmp(p->tok.start, "size", 4) == 0))
	{
		n = parse_function(p, parse_operand);
		if (n && (n->u.func.fn == FN_IF_NOT_EXISTS || n->u.func.fn == FN_LIST_APPEND))
		{
			fail(p, "The function is not allowed in a condition expression; function: %s",  expr_function_name(n->u.func.fn));
			return NULL;
		}
		if (n && n->u.func.args[0]->kind != EXPR_PATH)
		{
			fail(p, "Operator or function requires a document path; operator or function: %s",  expr_function_name(n->u.func.fn));
			return NULL;
		}
		return n;
	}
	return parse_comparison(p);
}

/* operand (op operand)*, left-associative: a chain of one logical operator. */
static ExprNode *
parse_chain(Parser *p, TokenKind op, ExprKind kind, ExprNode *(*parse_operand) (Parser *))
{
	ExprNode   *left = parse_operand(p);

	while (left && p->tok.kind == op)
	{
		ExprNode   *n = new_node(p, kind, p->tok.start);

		next_token(p);
		n->u.logic.left = require_condition(p, left);
		n->u.logic.right = require_condition(p, parse_operand(p));
		left = n->u.logic.left && n->u.logic.right ? n : NULL;
	}
	return left;
}

/* and := not (AND not)* */
static ExprNode *
parse_and(Parser *p)
{
	return parse_chain(p, TOK_AND, EXPR_AND, parse_not);
}

/* or := and (OR and)* */
static ExprNode *
parse_or(Parser *p)
{
	return parse_chain(p, TOK_OR, EXPR_OR, parse_and);
}

/*
 * Starts parsing an expression: the parser set up at its first token; false
 * (with the error) for an expression over DynamoDB's 4 KB or an empty one.
 */
static bool
start_parse(Parser *p, const char *text, size_t len, ExprArena *arena, ExprError *error)
{
	Parser		start = {text, len, 0, {TOK_EOF, text, 0}, {TOK_EOF, text, 0}, NULL, 0, arena, error, false};

	*p = start;
	if (len > EXPR_MAX_LENGTH)
	{
		snprintf(error->message, sizeof(error->message),
				 "Expression size has exceeded the maximum allowed size; expression size: %zu", len);
		error->position = 0;
		return false;
	}
	next_token(p);
	if (p->tok.kind == TOK_EOF)
	{
		snprintf(error->message, sizeof(error->message), "The expression can not be empty;");
		error->position = 0;
		return false;
	}
	return true;
}

/* Parses a condition expression. */
ExprNode *
expr_parse_condition(const char *text, size_t len, ExprArena *arena, ExprError *error)
{
	Parser		p;
	ExprNode   *root;

	if (!start_parse(&p, text, len, arena, error))
		return NULL;
	root = require_condition(&p, parse_or(&p));
	if (root && p.tok.kind != TOK_EOF)
		fail_syntax(&p);
	return p.failed ? NULL : root;
}

/* operand of a SET value: path | :v | if_not_exists(path, operand) | list_append(operand, operand) */
static ExprNode *
parse_set_operand(Parser *p)
{
	ExprNode   *n;

	if (p->failed)
		return NULL;
	if (p->tok.kind == TOK_VALUE_PLACEHOLDER)
	{
		return parse_value(p);
	}
	if (at_call(p))
	{
		n = parse_function(p, parse_set_operand);
		if (n == NULL)
			return NULL;
		if (n->u.func.fn != FN_IF_NOT_EXISTS && n->u.func.fn != FN_LIST_APPEND)
		{
			fail(p, "Invalid function name; function: %s", expr_function_name(n->u.func.fn));
			return NULL;
		}
		if (n->u.func.fn == FN_IF_NOT_EXISTS && n->u.func.args[0]->kind != EXPR_PATH)
		{
			fail(p, "Operator or function requires a document path; operator or function: if_not_exists");
			return NULL;
		}
		return n;
	}
	return parse_path_operand(p);
}

/* A SET value: operand, or operand + operand, or operand - operand. */
static ExprNode *
parse_set_value(Parser *p)
{
	const char *at = p->tok.start;
	ExprNode   *left = parse_set_operand(p);
	ExprNode   *n;

	if (left == NULL || (p->tok.kind != TOK_PLUS && p->tok.kind != TOK_MINUS))
		return left;
	n = new_node(p, p->tok.kind == TOK_PLUS ? EXPR_PLUS : EXPR_MINUS, at);
	next_token(p);
	n->u.logic.left = left;
	n->u.logic.right = parse_set_operand(p);
	return n->u.logic.right ? n : NULL;
}

/* The clause an update keyword starts, or -1. */
static int
clause_of(Token *t)
{
	if (t->kind != TOK_NAME)
		return -1;
	if (token_is_word(t, "SET"))
		return ACTION_SET;
	if (token_is_word(t, "REMOVE"))
		return ACTION_REMOVE;
	if (token_is_word(t, "ADD"))
		return ACTION_ADD;
	if (token_is_word(t, "DELETE"))
		return ACTION_DELETE;
	return -1;
}

/* Parses an UpdateExpression (grammar in expr.h). */
bool
expr_parse_update(const char *text, size_t len, ExprArena *arena, ExprUpdate *out,
				  ExprError *error)
{
	static const char *const clause_names[] = {"SET", "REMOVE", "ADD", "DELETE"};
	Parser		p;
	bool		seen[4] = {false, false, false, false};
	int			cap = 8;

	out->nactions = 0;
	out->actions = NULL;
	if (!start_parse(&p, text, len, arena, error))
		return false;
	out->actions = arena_alloc(&p, sizeof(ExprAction) * cap);
	while (!p.failed && p.tok.kind != TOK_EOF)
	{
		int			clause = clause_of(&p.tok);

		if (clause < 0)
		{
			fail_syntax(&p);
			break;
		}
		if (seen[clause])
		{
			fail(&p, "The \"%s\" section can only be used once in an update expression;", clause_names[clause]);
			break;
		}
		seen[clause] = true;
		next_token(&p);
		for (;;)
		{
			ExprAction *action;

			if (out->nactions == cap)
			{
				ExprAction *bigger = arena_alloc(&p, sizeof(ExprAction) * cap * 2);

				memcpy(bigger, out->actions, sizeof(ExprAction) * cap);
				out->actions = bigger;
				cap *= 2;
			}
			action = &out->actions[out->nactions];
			action->kind = (ExprActionKind) clause;
			action->path = parse_path(&p);
			action->value = NULL;
			if (action->path == NULL)
				break;
			if (clause == ACTION_SET)
			{
				if (!expect(&p, TOK_EQ))
					break;
				action->value = parse_set_value(&p);
			}
			else if (clause != ACTION_REMOVE)
			{
				if (p.tok.kind != TOK_VALUE_PLACEHOLDER)
				{
					fail_syntax(&p);
					break;
				}
				action->value = parse_set_operand(&p);
			}
			if (p.failed)
				break;
			out->nactions++;
			if (p.tok.kind != TOK_COMMA)
				break;
			next_token(&p);
		}
	}
	return !p.failed;
}

/* Parses a ProjectionExpression: path (',' path)*. */
bool
expr_parse_projection(const char *text, size_t len, ExprArena *arena, ExprProjection *out,
					  ExprError *error)
{
	Parser		p;
	int			cap = 8;

	out->npaths = 0;
	out->paths = NULL;
	if (!start_parse(&p, text, len, arena, error))
		return false;
	out->paths = arena_alloc(&p, sizeof(ExprNode *) * cap);
	for (;;)
	{
		ExprNode   *path = parse_path(&p);

		if (path == NULL)
			return false;
		if (out->npaths == cap)
		{
			ExprNode  **bigger = arena_alloc(&p, sizeof(ExprNode *) * cap * 2);

			memcpy(bigger, out->paths, sizeof(ExprNode *) * cap);
			out->paths = bigger;
			cap *= 2;
		}
		out->paths[out->npaths++] = path;
		if (p.tok.kind != TOK_COMMA)
			break;
		next_token(&p);
	}
	if (p.tok.kind != TOK_EOF)
		fail_syntax(&p);
	return !p.failed;
}

/* The comparator's text. */
const char *
expr_compare_op_name(ExprCompareOp op)
{
	static const char *const names[] = {"=", "<>", "<", "<=", ">", ">="};

	return names[op];
}

/* The function's name. */
const char *
expr_function_name(ExprFunction fn)
{
	static const char *const names[] = {"attribute_exists", "attribute_not_exists",
	"attribute_type", "begins_with", "contains", "size", "if_not_exists", "list_append"};

	return names[fn];
}
