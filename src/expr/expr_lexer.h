/*
 * expr_lexer.h — the expression language's token stream, shared by the
 * lexer (expr_lex.c) and the parser (expr_parse.c) only: tokens, the
 * parser's state, the arena and the first error.  Plain C.
 */
#ifndef DDB_EXPR_LEXER_H
#define DDB_EXPR_LEXER_H

#include <stdbool.h>
#include <stddef.h>

#include "expr.h"

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
	ExprError	misuse;			/* the first misuse met (see expr_misuse) */
	bool		misused;
} Parser;

/* True for the white space the lexer skips. */
static inline bool
expr_is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Allocates zeroed memory from the arena. */
extern void *expr_alloc(Parser *p, size_t size);

/* Records the first error (a printf format and its arguments); later ones are consequences of it. */
extern void expr_fail(Parser *p, const char *format,...) __attribute__((format(printf, 2, 3)));

/* Records DynamoDB's syntax error for the current token. */
extern void expr_fail_syntax(Parser *p);

/*
 * Records the first misuse (a reserved word as a name, a function where it
 * cannot go, a wrong operand count) and lets parsing go on: DynamoDB reports
 * a syntax error anywhere in the expression before any misuse.
 */
extern void expr_misuse(Parser *p, const char *format,...) __attribute__((format(printf, 2, 3)));

/* Ends a parse: true when it succeeded; otherwise the syntax error, or else the first misuse, is the error. */
extern bool expr_finish(Parser *p);

/* True when a token is a given word, in any case. */
extern bool expr_token_is_word(Token *t, const char *word);

/* Reads the next token into p->tok. */
extern void expr_next_token(Parser *p);

/* Consumes a token of the given kind, or fails. */
extern bool expr_expect(Parser *p, TokenKind kind);

/* Starts parsing an expression at its first token; false (with the error) for one over 4 KB or empty. */
extern bool expr_start_parse(Parser *p, const char *text, size_t len, ExprArena *arena, ExprError *error);

#endif							/* DDB_EXPR_LEXER_H */
