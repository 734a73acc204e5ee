/*
 * expr_parse_fuzz.c — libFuzzer harness for the condition-expression parser
 * (src/expr/expr_parse.c).
 *
 * Parses the raw input with expr_parse_condition from an arena that mallocs
 * and records every allocation (all freed after each input, so LeakSanitizer
 * stays quiet), then aborts when an invariant does not hold:
 *   - on success the tree is well formed: valid kinds, operators and
 *     functions, positions within [0, len], paths and values that point into
 *     the input, the operand counts the parser enforces, 1..100 IN items,
 *     no NULL child;
 *   - on failure the message is a non-empty NUL-terminated string shorter
 *     than its buffer and the position is within [0, len];
 *   - a second parse of a copy of the input gives the same result, the same
 *     message and position, or the same tree;
 *   - an input longer than EXPR_MAX_LENGTH fails.
 * Build with test/fuzz/build.sh.
 */
#include "expr.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reports a broken invariant on stderr and aborts (libFuzzer saves the input). */
#define CHECK(cond) \
	do { \
		if (!(cond)) \
		{ \
			fprintf(stderr, "expr_parse_fuzz: invariant failed at line %d: %s\n", \
					__LINE__, #cond); \
			abort(); \
		} \
	} while (0)

/* The most IN items the parser accepts (DynamoDB's limit). */
#define MAX_IN_ITEMS 100

/* Every block the parser drew from the arena, so that all can be freed. */
typedef struct Recorder
{
	void	  **blocks;
	size_t		count;
	size_t		cap;
} Recorder;

/* The input one parse saw: its bytes and length. */
typedef struct Input
{
	const char *text;
	size_t		len;
} Input;

/* Arena callback: mallocs exactly size bytes and records the block. */
static void *
recording_alloc(void *context, size_t size)
{
	Recorder   *r = context;
	void	   *mem;

	if (r->count == r->cap)
	{
		size_t		cap = r->cap ? r->cap * 2 : 64;
		void	  **blocks = realloc(r->blocks, cap * sizeof(void *));

		CHECK(blocks != NULL);
		r->blocks = blocks;
		r->cap = cap;
	}
	/* the parser never asks for an empty block */
	CHECK(size > 0);
	mem = malloc(size);
	CHECK(mem != NULL);
	r->blocks[r->count++] = mem;
	return mem;
}

/* Frees every block the arena handed out and the record itself. */
static void
recorder_free(Recorder *r)
{
	for (size_t i = 0; i < r->count; i++)
		free(r->blocks[i]);
	free(r->blocks);
	r->blocks = NULL;
	r->count = r->cap = 0;
}

/* True when [p, p + n) lies inside the input. */
static int
inside_input(const Input *in, const char *p, int n)
{
	return p != NULL && n >= 0 && p >= in->text && p <= in->text + in->len &&
		(size_t) n <= (size_t) (in->text + in->len - p);
}

/* True for the bytes a name or placeholder is made of. */
static int
is_name_byte(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		(c >= '0' && c <= '9') || c == '_';
}

/* Checks a node's position and that its kind is one of ExprKind's. */
static void
check_header(const Input *in, const ExprNode *n)
{
	CHECK(n != NULL);
	CHECK(n->kind >= EXPR_PATH && n->kind <= EXPR_FUNCTION);
	CHECK(n->position >= 0 && (size_t) n->position <= in->len);
}

/* Checks a document path: a named first step, then names, placeholders and list indexes. */
static void
check_path(const Input *in, const ExprNode *n)
{
	CHECK(n->u.path.nsteps >= 1 && n->u.path.steps != NULL);
	/* a path starts with a name and at the name */
	CHECK(n->u.path.steps[0].name != NULL);
	CHECK(n->u.path.steps[0].name == in->text + n->position);
	for (int i = 0; i < n->u.path.nsteps; i++)
	{
		const ExprPathStep *s = &n->u.path.steps[i];

		if (s->name == NULL)
		{
			/* a list index is a non-negative number */
			CHECK(!s->placeholder);
			CHECK(s->index >= 0);
			continue;
		}
		/* a named step is a run of name bytes inside the input */
		CHECK(s->name_len >= 1 && inside_input(in, s->name, s->name_len));
		if (s->placeholder)
		{
			/* "#" and at least one name byte */
			CHECK(s->name[0] == '#' && s->name_len >= 2);
			for (int j = 1; j < s->name_len; j++)
				CHECK(is_name_byte(s->name[j]));
		}
		else
			for (int j = 0; j < s->name_len; j++)
				CHECK(is_name_byte(s->name[j]));
	}
}

/* Checks a :value placeholder: inside the input, at the node's position. */
static void
check_value(const Input *in, const ExprNode *n)
{
	CHECK(n->u.value.name_len >= 2);
	CHECK(inside_input(in, n->u.value.name, n->u.value.name_len));
	CHECK(n->u.value.name == in->text + n->position);
	CHECK(n->u.value.name[0] == ':');
	for (int j = 1; j < n->u.value.name_len; j++)
		CHECK(is_name_byte(n->u.value.name[j]));
}

/* Checks an operand: a path, a :value or size(operand). */
static void
check_operand(const Input *in, const ExprNode *n, int depth)
{
	check_header(in, n);
	CHECK(depth < (int) EXPR_MAX_LENGTH);
	switch (n->kind)
	{
		case EXPR_PATH:
			check_path(in, n);
			break;
		case EXPR_VALUE:
			check_value(in, n);
			break;
		case EXPR_FUNCTION:
			/* the only function allowed as an operand is size, with one operand */
			CHECK(n->u.func.fn == FN_SIZE);
			CHECK(n->u.func.nargs == 1 && n->u.func.args != NULL);
			CHECK(strcmp(expr_function_name(n->u.func.fn), "size") == 0);
			check_operand(in, n->u.func.args[0], depth + 1);
			break;
		default:
			CHECK(!"a condition node where an operand belongs");
	}
}

/* Checks a condition function: a valid id, its operand count, a path first for attribute_(not_)exists. */
static void
check_condition_function(const Input *in, const ExprNode *n, int depth)
{
	int			want;

	CHECK(n->u.func.fn >= FN_ATTRIBUTE_EXISTS && n->u.func.fn < FN_SIZE);
	CHECK(expr_function_name(n->u.func.fn) != NULL);
	want = (n->u.func.fn == FN_ATTRIBUTE_TYPE || n->u.func.fn == FN_BEGINS_WITH ||
			n->u.func.fn == FN_CONTAINS) ? 2 : 1;
	CHECK(n->u.func.nargs == want && n->u.func.args != NULL);
	/* attribute_exists and attribute_not_exists take a path; the others any operand first */
	CHECK(n->u.func.args[0] != NULL);
	if (n->u.func.fn == FN_ATTRIBUTE_EXISTS || n->u.func.fn == FN_ATTRIBUTE_NOT_EXISTS)
		CHECK(n->u.func.args[0]->kind == EXPR_PATH);
	for (int i = 0; i < n->u.func.nargs; i++)
		check_operand(in, n->u.func.args[i], depth + 1);
}

/* Checks a condition node and everything below it. */
static void
check_condition(const Input *in, const ExprNode *n, int depth)
{
	check_header(in, n);
	CHECK(depth < (int) EXPR_MAX_LENGTH);
	switch (n->kind)
	{
		case EXPR_COMPARE:
			CHECK(n->u.compare.op >= CMP_EQ && n->u.compare.op <= CMP_GE);
			CHECK(expr_compare_op_name(n->u.compare.op) != NULL);
			check_operand(in, n->u.compare.left, depth + 1);
			check_operand(in, n->u.compare.right, depth + 1);
			/* a comparison sits where its left operand starts, or at the '(' around it */
			CHECK(n->position <= n->u.compare.left->position);
			break;
		case EXPR_BETWEEN:
			check_operand(in, n->u.between.operand, depth + 1);
			check_operand(in, n->u.between.low, depth + 1);
			check_operand(in, n->u.between.high, depth + 1);
			CHECK(n->position <= n->u.between.operand->position);
			break;
		case EXPR_IN:
			check_operand(in, n->u.in.operand, depth + 1);
			CHECK(n->u.in.nlist >= 1 && n->u.in.nlist <= MAX_IN_ITEMS);
			CHECK(n->u.in.list != NULL);
			for (int i = 0; i < n->u.in.nlist; i++)
				check_operand(in, n->u.in.list[i], depth + 1);
			CHECK(n->position <= n->u.in.operand->position);
			break;
		case EXPR_AND:
		case EXPR_OR:
			check_condition(in, n->u.logic.left, depth + 1);
			check_condition(in, n->u.logic.right, depth + 1);
			/* the keyword lies between its two operands */
			CHECK(n->position > n->u.logic.left->position);
			CHECK(n->position < n->u.logic.right->position);
			break;
		case EXPR_NOT:
			check_condition(in, n->u.logic.left, depth + 1);
			CHECK(n->position < n->u.logic.left->position);
			break;
		case EXPR_FUNCTION:
			check_condition_function(in, n, depth);
			break;
		default:
			CHECK(!"an operand where a condition belongs");
	}
}

/* Checks a failed parse's error: a short non-empty message and a position in range. */
static void
check_error(const ExprError *e, size_t len)
{
	const char *nul = memchr(e->message, '\0', sizeof(e->message));

	CHECK(nul != NULL && nul > e->message);
	CHECK(e->position >= 0 && (size_t) e->position <= len);
}

/* True when two paths have the same steps (names compared by offset in their inputs). */
static int
same_path(const Input *a, const ExprNode *x, const Input *b, const ExprNode *y)
{
	if (x->u.path.nsteps != y->u.path.nsteps)
		return 0;
	for (int i = 0; i < x->u.path.nsteps; i++)
	{
		const ExprPathStep *s = &x->u.path.steps[i];
		const ExprPathStep *t = &y->u.path.steps[i];

		if ((s->name == NULL) != (t->name == NULL) || s->placeholder != t->placeholder)
			return 0;
		if (s->name == NULL ? s->index != t->index :
			(s->name - a->text != t->name - b->text || s->name_len != t->name_len))
			return 0;
	}
	return 1;
}

/* True when two trees of two parses of the same bytes are identical. */
static int
same_tree(const Input *a, const ExprNode *x, const Input *b, const ExprNode *y)
{
	if (x->kind != y->kind || x->position != y->position)
		return 0;
	switch (x->kind)
	{
		case EXPR_PATH:
			return same_path(a, x, b, y);
		case EXPR_VALUE:
			return x->u.value.name - a->text == y->u.value.name - b->text &&
				x->u.value.name_len == y->u.value.name_len;
		case EXPR_COMPARE:
			return x->u.compare.op == y->u.compare.op &&
				same_tree(a, x->u.compare.left, b, y->u.compare.left) &&
				same_tree(a, x->u.compare.right, b, y->u.compare.right);
		case EXPR_BETWEEN:
			return same_tree(a, x->u.between.operand, b, y->u.between.operand) &&
				same_tree(a, x->u.between.low, b, y->u.between.low) &&
				same_tree(a, x->u.between.high, b, y->u.between.high);
		case EXPR_IN:
			if (x->u.in.nlist != y->u.in.nlist ||
				!same_tree(a, x->u.in.operand, b, y->u.in.operand))
				return 0;
			for (int i = 0; i < x->u.in.nlist; i++)
				if (!same_tree(a, x->u.in.list[i], b, y->u.in.list[i]))
					return 0;
			return 1;
		case EXPR_AND:
		case EXPR_OR:
		case EXPR_PLUS:
		case EXPR_MINUS:
			return same_tree(a, x->u.logic.left, b, y->u.logic.left) &&
				same_tree(a, x->u.logic.right, b, y->u.logic.right);
		case EXPR_NOT:
			return same_tree(a, x->u.logic.left, b, y->u.logic.left);
		case EXPR_FUNCTION:
			if (x->u.func.fn != y->u.func.fn || x->u.func.nargs != y->u.func.nargs)
				return 0;
			for (int i = 0; i < x->u.func.nargs; i++)
				if (!same_tree(a, x->u.func.args[i], b, y->u.func.args[i]))
					return 0;
			return 1;
	}
	return 0;
}

/* libFuzzer entry point: parse twice, check the tree or the error, free everything. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Recorder	rec1 = {NULL, 0, 0};
	Recorder	rec2 = {NULL, 0, 0};
	ExprArena	arena1 = {recording_alloc, &rec1};
	ExprArena	arena2 = {recording_alloc, &rec2};
	ExprError	err1;
	ExprError	err2;
	/* an exact-size copy, so that a read past the end is an ASan report */
	char	   *copy = malloc(size ? size : 1);
	Input		in1 = {(const char *) data, size};
	Input		in2 = {copy, size};
	ExprNode   *root1;
	ExprNode   *root2;

	CHECK(copy != NULL);
	if (size)
		memcpy(copy, data, size);
	/* different garbage in each error, so that a message left unset shows */
	memset(&err1, 0xA5, sizeof(err1));
	memset(&err2, 0x5A, sizeof(err2));

	root1 = expr_parse_condition(in1.text, size, &arena1, &err1);
	root2 = expr_parse_condition(in2.text, size, &arena2, &err2);

	/* too long an expression is refused */
	if (size > EXPR_MAX_LENGTH)
		CHECK(root1 == NULL);
	/* the same bytes give the same outcome */
	CHECK((root1 == NULL) == (root2 == NULL));
	if (root1 != NULL)
	{
		check_condition(&in1, root1, 0);
		check_condition(&in2, root2, 0);
		CHECK(same_tree(&in1, root1, &in2, root2));
	}
	else
	{
		check_error(&err1, size);
		check_error(&err2, size);
		CHECK(strcmp(err1.message, err2.message) == 0);
		CHECK(err1.position == err2.position);
	}

	recorder_free(&rec1);
	recorder_free(&rec2);
	free(copy);
	return 0;
}
