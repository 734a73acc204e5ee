/*
 * expr_parse.c — the recursive-descent parser of DynamoDB's expressions:
 * conditions, UpdateExpression and ProjectionExpression (grammar in expr.h)
 * over expr_lex.c's tokens.  Plain C: no server calls.
 */
#include "expr_lexer.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* A new node of a kind at the current token. */
static ExprNode *
new_node(Parser *p, ExprKind kind, const char *at)
{
	ExprNode   *n = expr_alloc(p, sizeof(ExprNode));

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
	ExprPathStep *steps = expr_alloc(p, sizeof(ExprPathStep) * cap);
	int			count = 0;
	bool		need_name = true;

	for (;;)
	{
		if (count == cap)
		{
			ExprPathStep *bigger = expr_alloc(p, sizeof(ExprPathStep) * cap * 2);

			memcpy(bigger, steps, sizeof(ExprPathStep) * cap);
			steps = bigger;
			cap *= 2;
		}
		if (need_name)
		{
			if (p->tok.kind != TOK_NAME && p->tok.kind != TOK_NAME_PLACEHOLDER)
			{
				expr_fail_syntax(p);
				return NULL;
			}
			if (p->tok.kind == TOK_NAME && expr_is_reserved_word(p->tok.start, p->tok.len))
				expr_misuse(p, "Attribute name is a reserved keyword; reserved keyword: %.*s", p->tok.len, p->tok.start);
			steps[count].name = p->tok.start;
			steps[count].name_len = p->tok.len;
			steps[count].placeholder = p->tok.kind == TOK_NAME_PLACEHOLDER;
			count++;
			expr_next_token(p);
			need_name = false;
		}
		else if (p->tok.kind == TOK_DOT)
		{
			expr_next_token(p);
			need_name = true;
		}
		else if (p->tok.kind == TOK_LBRACKET)
		{
			long		index = 0;

			expr_next_token(p);
			if (p->tok.kind != TOK_NUMBER)
			{
				expr_fail_syntax(p);
				return NULL;
			}
			/* nine digits at most: every index fits an int */
			if (p->tok.len > 9)
			{
				expr_fail(p, "The list index in a document path is too large");
				return NULL;
			}
			for (int i = 0; i < p->tok.len; i++)
				index = index * 10 + (p->tok.start[i] - '0');
			steps[count].index = (int) index;
			count++;
			expr_next_token(p);
			if (!expr_expect(p, TOK_RBRACKET))
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
	expr_fail_syntax(p);
	return NULL;
}

/* A :value placeholder, the current token. */
static ExprNode *
parse_value(Parser *p)
{
	ExprNode   *n = new_node(p, EXPR_VALUE, p->tok.start);

	n->u.value.name = p->tok.start;
	n->u.value.name_len = p->tok.len;
	expr_next_token(p);
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
		expr_misuse(p, "Invalid function name; function: %.*s", p->tok.len > 60 ? 60 : p->tok.len, p->tok.start);
	expr_next_token(p);
	if (!expr_expect(p, TOK_LPAREN))
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
		expr_next_token(p);
	}
	if (!expr_expect(p, TOK_RPAREN))
		return NULL;
	want = (fn == FN_ATTRIBUTE_TYPE || fn == FN_BEGINS_WITH || fn == FN_CONTAINS ||
			fn == FN_IF_NOT_EXISTS || fn == FN_LIST_APPEND) ? 2 : 1;
	if (fn >= 0 && nargs != want)
		expr_misuse(p, "Incorrect number of operands for operator or function; operator or function: %s, number of operands: %d",
					expr_function_name((ExprFunction) fn), nargs);
	n->u.func.fn = (ExprFunction) fn;
	nargs = nargs < 8 ? nargs : 8;
	n->u.func.nargs = nargs;
	n->u.func.args = expr_alloc(p, sizeof(ExprNode *) * nargs);
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
	while (i < p->len && expr_is_space(p->text[i]))
		i++;
	return i < p->len && p->text[i] == '(';
}

/* Records a parenthesised group's content; fails when it is itself one group, ((x)). */
static bool
close_group(Parser *p, ExprNode *content)
{
	if (content == p->group)
	{
		expr_fail(p, "The expression has redundant parentheses;");
		return false;
	}
	p->group = content;
	return true;
}

/* '(' inner ')' at an opening parenthesis: the group's content, or NULL after failing. */
static ExprNode *
parse_group(Parser *p, ExprNode *(*inner) (Parser *))
{
	ExprNode   *n;

	expr_next_token(p);
	n = inner(p);
	if (n == NULL || !expr_expect(p, TOK_RPAREN) || !close_group(p, n))
		return NULL;
	return n;
}

/* True for an operand (a path, a value, size()) as opposed to a condition. */
static bool
is_operand(const ExprNode *n)
{
	return n->kind == EXPR_PATH || n->kind == EXPR_VALUE ||
		(n->kind == EXPR_FUNCTION && n->u.func.fn == FN_SIZE);
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

/* DynamoDB's error for a function used where its result cannot go (a misuse). */
static void
misuse_function(Parser *p, const ExprNode *fn)
{
	expr_misuse(p, "The function is not allowed to be used this way in an expression; function: %s",
			  expr_function_name(fn->u.func.fn));
}

/*
 * A condition where one is due: size() standing alone is a function used
 * the wrong way, any other operand a syntax error.
 */
static ExprNode *
require_condition(Parser *p, ExprNode *n)
{
	if (n && n->kind == EXPR_FUNCTION && n->u.func.fn == FN_SIZE)
	{
		misuse_function(p, n);
		return n;
	}
	if (n && is_operand(n))
	{
		expr_fail_syntax(p);
		return NULL;
	}
	return n;
}

/* True when the current token goes on with a comparison: a comparator, BETWEEN or IN. */
static bool
at_comparison_rest(Parser *p)
{
	return comparator_of(p->tok.kind) >= 0 || p->tok.kind == TOK_BETWEEN || p->tok.kind == TOK_IN;
}

/* True for size() followed by what may follow a condition (its misuse, not a syntax error). */
static bool
size_as_condition(Parser *p, const ExprNode *n)
{
	return n->kind == EXPR_FUNCTION && n->u.func.fn == FN_SIZE &&
		(p->tok.kind == TOK_EOF || p->tok.kind == TOK_AND || p->tok.kind == TOK_OR ||
		 p->tok.kind == TOK_RPAREN);
}

/* operand := path | :value | size(path) | '(' operand ')' */
static ExprNode *
parse_operand(Parser *p)
{
	ExprNode   *n;

	if (p->failed)
		return NULL;
	if (p->tok.kind == TOK_LPAREN)
		return parse_group(p, parse_operand);
	if (p->tok.kind == TOK_VALUE_PLACEHOLDER)
	{
		return parse_value(p);
	}
	if (at_call(p))
	{
		n = parse_function(p, parse_operand);
		if (n && n->u.func.fn != FN_SIZE)
			misuse_function(p, n);
		else if (n && n->u.func.args[0]->kind != EXPR_PATH)
			expr_misuse(p, "Incorrect operand type for operator or function; operator or function: size, operand type: not a document path");
		return n;
	}
	return parse_path_operand(p);
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
		expr_next_token(p);
		n = new_node(p, EXPR_COMPARE, at);
		n->u.compare.op = (ExprCompareOp) op;
		n->u.compare.left = left;
		n->u.compare.right = parse_operand(p);
		return n->u.compare.right ? n : NULL;
	}
	if (p->tok.kind == TOK_BETWEEN)
	{
		expr_next_token(p);
		n = new_node(p, EXPR_BETWEEN, at);
		n->u.between.operand = left;
		n->u.between.low = parse_operand(p);
		if (!expr_expect(p, TOK_AND))
			return NULL;
		n->u.between.high = parse_operand(p);
		return n->u.between.high ? n : NULL;
	}
	if (p->tok.kind == TOK_IN)
	{
		/* from the arena: a 100-entry array here would sit in every recursion frame */
		ExprNode  **list = expr_alloc(p, sizeof(ExprNode *) * 100);
		int			count = 0;

		expr_next_token(p);
		if (!expr_expect(p, TOK_LPAREN))
			return NULL;
		for (;;)
		{
			ExprNode   *item = parse_operand(p);

			if (item == NULL)
				return NULL;
			if (count == 100)
			{
				expr_fail(p, "Too many operands for the IN operator; the maximum is 100");
				return NULL;
			}
			list[count++] = item;
			if (p->tok.kind != TOK_COMMA)
				break;
			expr_next_token(p);
		}
		if (!expr_expect(p, TOK_RPAREN))
			return NULL;
		n = new_node(p, EXPR_IN, at);
		n->u.in.operand = left;
		n->u.in.nlist = count;
		n->u.in.list = list;
		return n;
	}
	expr_fail_syntax(p);
	return NULL;
}

/*
 * comparison := operand rest.  Inside parentheses an operand may stand
 * alone, "(a) = :v": it goes back up to the group, which goes on with it.
 * size() where a condition could end goes back up too, to be refused
 * where a condition is due.
 */
static ExprNode *
parse_comparison(Parser *p)
{
	const char *at = p->tok.start;
	ExprNode   *left = parse_operand(p);

	if (left == NULL)
		return NULL;
	if ((p->tok.kind == TOK_RPAREN && p->depth > 0) || size_as_condition(p, left))
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
		expr_next_token(p);
		n = new_node(p, EXPR_NOT, at);
		n->u.logic.left = require_condition(p, parse_not(p));
		return n->u.logic.left ? n : NULL;
	}
	if (p->tok.kind == TOK_LPAREN)
	{
		expr_next_token(p);
		p->depth++;
		n = parse_or(p);
		p->depth--;
		if (n == NULL || !expr_expect(p, TOK_RPAREN) || !close_group(p, n))
			return NULL;
		/*
		 * an operand in parentheses: its comparison follows, unless an outer
		 * group closes first (or it is size() where a condition could end)
		 */
		if (is_operand(n) && !(p->tok.kind == TOK_RPAREN && p->depth > 0) &&
			!size_as_condition(p, n))
			return parse_comparison_rest(p, n, at);
		return n;
	}
	/* a condition function; size(...) starts a comparison instead */
	if (at_call(p) && !(p->tok.len == 4 && memcmp(p->tok.start, "size", 4) == 0))
	{
		n = parse_function(p, parse_operand);
		if (n && (n->u.func.fn == FN_IF_NOT_EXISTS || n->u.func.fn == FN_LIST_APPEND))
			expr_misuse(p, "The function is not allowed in a condition expression; function: %s", expr_function_name(n->u.func.fn));
		if (n && (n->u.func.fn == FN_ATTRIBUTE_EXISTS || n->u.func.fn == FN_ATTRIBUTE_NOT_EXISTS) &&
			n->u.func.args[0]->kind != EXPR_PATH)
			expr_misuse(p, "Operator or function requires a document path; operator or function: %s", expr_function_name(n->u.func.fn));
		if (n && at_comparison_rest(p))
		{
			/* a condition function compared: refused once the comparison parses */
			misuse_function(p, n);
			return parse_comparison_rest(p, n, at);
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

		expr_next_token(p);
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

/* Parses a condition expression. */
ExprNode *
expr_parse_condition(const char *text, size_t len, ExprArena *arena, ExprError *error)
{
	Parser		p;
	ExprNode   *root;

	if (!expr_start_parse(&p, text, len, arena, error))
		return NULL;
	root = require_condition(&p, parse_or(&p));
	if (root && p.tok.kind != TOK_EOF)
		expr_fail_syntax(&p);
	return expr_finish(&p) ? root : NULL;
}

/*
 * operand of a SET value: path | :v | if_not_exists(path, operand)
 * | list_append(operand, operand) | '(' operand ')'
 */
static ExprNode *
parse_set_operand(Parser *p)
{
	ExprNode   *n;

	if (p->failed)
		return NULL;
	if (p->tok.kind == TOK_LPAREN)
		return parse_group(p, parse_set_operand);
	if (p->tok.kind == TOK_VALUE_PLACEHOLDER)
	{
		return parse_value(p);
	}
	if (at_call(p))
	{
		n = parse_function(p, parse_set_operand);
		if (n == NULL)
			return NULL;
		if ((int) n->u.func.fn >= 0 && n->u.func.fn != FN_IF_NOT_EXISTS && n->u.func.fn != FN_LIST_APPEND)
			expr_misuse(p, "The function is not allowed in an update expression; function: %s", expr_function_name(n->u.func.fn));
		if (n->u.func.fn == FN_IF_NOT_EXISTS && n->u.func.args[0]->kind != EXPR_PATH)
			expr_misuse(p, "Operator or function requires a document path; operator or function: if_not_exists");
		return n;
	}
	return parse_path_operand(p);
}

/*
 * A SET value: operand, operand + operand, operand - operand, or one of
 * these in parentheses ("(a + b)" ends the value: "(a + b) + c" is a
 * syntax error in DynamoDB, as is a sum inside an operand).
 */
static ExprNode *
parse_set_value(Parser *p)
{
	const char *at = p->tok.start;
	ExprNode   *left;
	ExprNode   *n;

	if (p->failed)
		return NULL;
	if (p->tok.kind == TOK_LPAREN)
	{
		left = parse_group(p, parse_set_value);
		if (left == NULL || left->kind == EXPR_PLUS || left->kind == EXPR_MINUS)
			return left;
	}
	else
		left = parse_set_operand(p);
	if (left == NULL || (p->tok.kind != TOK_PLUS && p->tok.kind != TOK_MINUS))
		return left;
	n = new_node(p, p->tok.kind == TOK_PLUS ? EXPR_PLUS : EXPR_MINUS, at);
	expr_next_token(p);
	n->u.logic.left = left;
	n->u.logic.right = parse_set_operand(p);
	return n->u.logic.right ? n : NULL;
}

/*
 * list_append may only be a SET value of its own (DynamoDB refuses it inside
 * a sum, inside if_not_exists or inside another list_append); false after
 * failing on the first misplaced one.
 */
static bool
check_list_append_use(Parser *p, const ExprNode *n, bool whole_value)
{
	switch (n->kind)
	{
		case EXPR_PLUS:
		case EXPR_MINUS:
			return check_list_append_use(p, n->u.logic.left, false) &&
				check_list_append_use(p, n->u.logic.right, false);
		case EXPR_FUNCTION:
			if (n->u.func.fn == FN_LIST_APPEND && !whole_value)
			{
				misuse_function(p, n);
				return false;
			}
			for (int i = 0; i < n->u.func.nargs; i++)
				if (!check_list_append_use(p, n->u.func.args[i], false))
					return false;
			return true;
		default:
			return true;
	}
}

/* The clause an update keyword starts, or -1. */
static int
clause_of(Token *t)
{
	if (t->kind != TOK_NAME)
		return -1;
	if (expr_token_is_word(t, "SET"))
		return ACTION_SET;
	if (expr_token_is_word(t, "REMOVE"))
		return ACTION_REMOVE;
	if (expr_token_is_word(t, "ADD"))
		return ACTION_ADD;
	if (expr_token_is_word(t, "DELETE"))
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
	if (!expr_start_parse(&p, text, len, arena, error))
		return false;
	out->actions = expr_alloc(&p, sizeof(ExprAction) * cap);
	while (!p.failed && p.tok.kind != TOK_EOF)
	{
		int			clause = clause_of(&p.tok);

		if (clause < 0)
		{
			expr_fail_syntax(&p);
			break;
		}
		if (seen[clause])
		{
			expr_fail(&p, "The \"%s\" section can only be used once in an update expression;", clause_names[clause]);
			break;
		}
		seen[clause] = true;
		expr_next_token(&p);
		for (;;)
		{
			ExprAction *action;

			if (out->nactions == cap)
			{
				ExprAction *bigger = expr_alloc(&p, sizeof(ExprAction) * cap * 2);

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
				if (!expr_expect(&p, TOK_EQ))
					break;
				action->value = parse_set_value(&p);
			}
			else if (clause != ACTION_REMOVE)
			{
				if (p.tok.kind != TOK_VALUE_PLACEHOLDER)
				{
					expr_fail_syntax(&p);
					break;
				}
				action->value = parse_set_operand(&p);
			}
			if (p.failed)
				break;
			out->nactions++;
			if (p.tok.kind != TOK_COMMA)
				break;
			expr_next_token(&p);
		}
	}
	for (int i = 0; i < out->nactions && !p.failed; i++)
		if (out->actions[i].kind == ACTION_SET)
			check_list_append_use(&p, out->actions[i].value, true);
	return expr_finish(&p);
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
	if (!expr_start_parse(&p, text, len, arena, error))
		return false;
	out->paths = expr_alloc(&p, sizeof(ExprNode *) * cap);
	for (;;)
	{
		ExprNode   *path = parse_path(&p);

		if (path == NULL)
			return false;
		if (out->npaths == cap)
		{
			ExprNode  **bigger = expr_alloc(&p, sizeof(ExprNode *) * cap * 2);

			memcpy(bigger, out->paths, sizeof(ExprNode *) * cap);
			out->paths = bigger;
			cap *= 2;
		}
		out->paths[out->npaths++] = path;
		if (p.tok.kind != TOK_COMMA)
			break;
		expr_next_token(&p);
	}
	if (p.tok.kind != TOK_EOF)
		expr_fail_syntax(&p);
	return expr_finish(&p);
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

	return (int) fn >= 0 && (int) fn < (int) (sizeof(names) / sizeof(names[0])) ? names[fn] : "unknown";
}
