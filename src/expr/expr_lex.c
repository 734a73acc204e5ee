/*
 * expr_lex.c — the lexer of DynamoDB's expression language: tokens (names,
 * #name and :value placeholders, numbers, keywords, operators), the arena,
 * and the first error with DynamoDB's "near" text.  Plain C: no server calls.
 */
#include "expr_lexer.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Allocates zeroed memory from the arena. */
void *
expr_alloc(Parser *p, size_t size)
{
	void	   *mem = p->arena->alloc(p->arena->context, size);

	memset(mem, 0, size);
	return mem;
}

/* Records the first error (a printf format and its arguments); later ones are consequences of it. */
void
expr_fail(Parser *p, const char *format,...)
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

/* Records the first misuse; the parse goes on to find any syntax error first. */
void
expr_misuse(Parser *p, const char *format,...)
{
	va_list		args;

	if (p->misused)
		return;
	p->misused = true;
	va_start(args, format);
	vsnprintf(p->misuse.message, sizeof(p->misuse.message), format, args);
	va_end(args);
	p->misuse.position = (int) (p->tok.start - p->text);
}

/* Ends a parse: a syntax error wins, then the first misuse. */
bool
expr_finish(Parser *p)
{
	if (!p->failed && p->misused)
	{
		p->failed = true;
		*p->error = p->misuse;
	}
	return !p->failed;
}

/*
 * Records DynamoDB's syntax error for the current token: "near" is the text
 * from the token before it to the token after it, as DynamoDB shows it.
 */
void
expr_fail_syntax(Parser *p)
{
	Parser		ahead = *p;
	const char *near_start = p->prev.kind != TOK_EOF ? p->prev.start : p->tok.start;
	int			near_len;

	expr_next_token(&ahead);
	near_len = (int) (ahead.tok.start + ahead.tok.len - near_start);
	if (p->tok.kind == TOK_EOF)
		expr_fail(p, "Syntax error; token: \"<EOF>\", near: \"%.*s\"", near_len > 60 ? 60 : near_len, near_start);
	else
		expr_fail(p, "Syntax error; token: \"%.*s\", near: \"%.*s\"", p->tok.len > 40 ? 40 : p->tok.len, p->tok.start,
			 near_len > 60 ? 60 : near_len, near_start);
}

/* True for the bytes of a name. */
static inline bool
is_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* True when the token's text equals a keyword, ignoring case. */
bool
expr_token_is_word(Token *t, const char *word)
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
void
expr_next_token(Parser *p)
{
	const char *s = p->text;
	size_t		i = p->pos;
	Token	   *t = &p->tok;

	p->prev = p->tok;
	while (i < p->len && expr_is_space(s[i]))
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
				if (expr_token_is_word(t, "AND"))
					t->kind = TOK_AND;
				else if (expr_token_is_word(t, "OR"))
					t->kind = TOK_OR;
				else if (expr_token_is_word(t, "NOT"))
					t->kind = TOK_NOT;
				else if (expr_token_is_word(t, "BETWEEN"))
					t->kind = TOK_BETWEEN;
				else if (expr_token_is_word(t, "IN"))
					t->kind = TOK_IN;
			}
			else
				t->kind = TOK_INVALID;
	}
	p->pos = i + t->len;
}

/* Consumes a token of the given kind, or fails. */
bool
expr_expect(Parser *p, TokenKind kind)
{
	if (p->failed)
		return false;
	if (p->tok.kind != kind)
	{
		expr_fail_syntax(p);
		return false;
	}
	expr_next_token(p);
	return true;
}

/*
 * Starts parsing an expression: the parser set up at its first token; false
 * (with the error) for an expression over DynamoDB's 4 KB or an empty one.
 */
bool
expr_start_parse(Parser *p, const char *text, size_t len, ExprArena *arena, ExprError *error)
{
	Parser		start = {text, len, 0, {TOK_EOF, text, 0}, {TOK_EOF, text, 0}, NULL, 0, arena, error, false, {{0}, 0}, false};

	*p = start;
	if (len > EXPR_MAX_LENGTH)
	{
		snprintf(error->message, sizeof(error->message),
				 "Expression size has exceeded the maximum allowed size; expression size: %zu", len);
		error->position = 0;
		return false;
	}
	expr_next_token(p);
	if (p->tok.kind == TOK_EOF)
	{
		snprintf(error->message, sizeof(error->message), "The expression can not be empty;");
		error->position = 0;
		return false;
	}
	return true;
}
