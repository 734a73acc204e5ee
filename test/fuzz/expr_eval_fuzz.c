/*
 * expr_eval_fuzz.c — libFuzzer harness for the condition evaluator
 * (src/expr/expr_eval.c), through the parser (src/expr/expr_parse.c).
 *
 * The first input byte seeds a small pseudo-random document: top-level
 * attributes a..h of seed-chosen kinds (some missing), maps with one-letter
 * keys and lists for paths like a.b and c[1], and the values of :v0..:v9.
 * The rest is the expression.  When it parses, it is evaluated through a toy
 * host whose callbacks abort when the evaluator calls them outside the
 * contract of src/itemexpr/host.c (compare on two different or unorderable
 * kinds, equal on two kinds, begins_with other than S/S or B/B, a NULL or
 * foreign value reference, a path or value node of the wrong kind), and the
 * harness aborts when an invariant does not hold:
 *   - evaluating twice gives the same result, and the same as AND, OR and
 *     NOT worked out by the harness over the evaluator's results at the
 *     leaves (comparisons, BETWEEN, IN, functions);
 *   - NOT (c) is !c, (c) AND (c) and (c) OR (c) are c, and each of these
 *     wrappings parses whenever it fits EXPR_MAX_LENGTH;
 *   - for every comparison, BETWEEN, IN and function of the tree, rebuilt
 *     from its operands: = and <> disagree, two kinds or a missing operand
 *     are never equal, ordered operators hold only between two S, N or B and
 *     then exactly one of <, =, > does, = and < are symmetric, x = x holds
 *     for every present operand; BETWEEN is >= low AND <= high, IN is an OR
 *     of =, attribute_exists / attribute_not_exists follow the path's kind;
 *   - for all 256 seeds at start-up (LLVMFuzzerInitialize): x = x is true
 *     and x <> x false for every present attribute a..h (the reverse for a
 *     missing one), and every comparison and function with an attribute the
 *     document never has (zz_missing) is false, but for <> and
 *     attribute_not_exists.
 * The toy host resolves #x as x, and a :value other than :v0..:v9 to one of
 * those ten by a hash of its name (the server refuses undefined placeholders
 * before evaluating; here they still exercise the evaluator).
 * Build with test/fuzz/build.sh.
 */
#include "expr.h"
#include "expr_eval.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reports a broken invariant on stderr and aborts (libFuzzer saves the input). */
#define CHECK(cond) \
	do { \
		if (!(cond)) \
		{ \
			fprintf(stderr, "expr_eval_fuzz: invariant failed at line %d: %s\n", \
					__LINE__, #cond); \
			abort(); \
		} \
	} while (0)

#define POOL_MAX 512			/* toy values in one document */
#define MAX_KIDS 4				/* elements of a toy map, list or set */
#define NUM_MAX 16				/* size() results host->number may be given */
#define NTOP 8					/* top-level attributes a..h */
#define NVALUES 10				/* placeholders :v0..:v9 */

/* A toy value: its kind, a number or a few bytes, or up to MAX_KIDS elements. */
typedef struct ToyVal
{
	ExprValueKind kind;
	int			num;			/* N; BOOL as 0 or 1 */
	char		bytes[4];		/* S, B */
	int			len;
	int			nkids;			/* M, L, SS, NS, BS */
	int			kids[MAX_KIDS]; /* pool indexes */
	char		keys[MAX_KIDS]; /* M: each element's one-letter key */
} ToyVal;

/* The document of one seed: a pool of values and what names them. */
typedef struct Doc
{
	ToyVal		pool[POOL_MAX];
	int			count;
	int			top[NTOP];		/* a..h: pool index, -1 when missing */
	int			values[NVALUES];	/* :v0..:v9 */
	int			numbers[NUM_MAX];	/* N values 0..NUM_MAX-1, for host->number */
	uint32_t	rng;
} Doc;

/* A byte string of the toy S and B domains. */
typedef struct Bytes
{
	const char *b;
	int			len;
} Bytes;

/* S values: short strings, prefixes of each other, and every type name. */
static const Bytes s_domain[] = {
	{"", 0}, {"a", 1}, {"ab", 2}, {"abc", 3}, {"b", 1}, {"ba", 2},
	{"S", 1}, {"N", 1}, {"B", 1}, {"BOOL", 4}, {"NULL", 4}, {"M", 1},
	{"L", 1}, {"SS", 2}, {"NS", 2}, {"BS", 2}
};

/* B values: bytes that sort differently signed and unsigned. */
static const Bytes b_domain[] = {
	{"", 0}, {"\x00", 1}, {"\x00\x80", 2}, {"\x80", 1}, {"a", 1}, {"ab", 2}
};

/* The type names attribute_type knows, in ExprValueKind order from EV_S. */
static const char *const type_names[] = {"S", "N", "B", "BOOL", "NULL", "M", "L", "SS", "NS", "BS"};

/* Every block the parser drew from the arena, so that all can be freed. */
typedef struct Recorder
{
	void	  **blocks;
	size_t		count;
	size_t		cap;
} Recorder;

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

/* ---- the toy document ---- */

/* xorshift32: the document's next pseudo-random number below n. */
static int
rand_below(Doc *d, int n)
{
	d->rng ^= d->rng << 13;
	d->rng ^= d->rng >> 17;
	d->rng ^= d->rng << 5;
	return (int) (d->rng % (uint32_t) n);
}

/* A random kind: any of the ten at depth 0 and 1, a scalar below. */
static ExprValueKind
random_kind(Doc *d, int depth)
{
	return (ExprValueKind) (1 + rand_below(d, depth < 2 ? 10 : 5));
}

/* A fresh pool slot of a kind. */
static int
new_slot(Doc *d, ExprValueKind kind)
{
	CHECK(d->count < POOL_MAX);
	memset(&d->pool[d->count], 0, sizeof(ToyVal));
	d->pool[d->count].kind = kind;
	return d->count++;
}

/* Copies one entry of a byte domain into a value. */
static void
set_bytes(ToyVal *v, const Bytes *b)
{
	memcpy(v->bytes, b->b, (size_t) b->len);
	v->len = b->len;
}

static int	new_value(Doc *d, ExprValueKind kind, int depth);

/* Appends an element to a container (and its key, for a map). */
static void
add_kid(Doc *d, int at, int kid, char key)
{
	ToyVal	   *v = &d->pool[at];

	v->keys[v->nkids] = key;
	v->kids[v->nkids++] = kid;
}

/* Fills a map (keys among a..d, ascending) or a list (0..MAX_KIDS elements). */
static void
fill_container(Doc *d, int at, int depth)
{
	if (d->pool[at].kind == EV_M)
	{
		for (char key = 'a'; key < 'a' + MAX_KIDS; key++)
			if (rand_below(d, 2))
				add_kid(d, at, new_value(d, random_kind(d, depth + 1), depth + 1), key);
		return;
	}
	for (int i = rand_below(d, MAX_KIDS + 1); i > 0; i--)
		add_kid(d, at, new_value(d, random_kind(d, depth + 1), depth + 1), 0);
}

/* Fills a set: a non-empty subset of four distinct elements of its kind. */
static void
fill_set(Doc *d, int at)
{
	ExprValueKind elem = d->pool[at].kind == EV_SS ? EV_S :
		d->pool[at].kind == EV_NS ? EV_N : EV_B;
	int			mask = 1 + rand_below(d, 15);

	for (int i = 0; i < MAX_KIDS; i++)
	{
		int			kid;

		if (!(mask & (1 << i)))
			continue;
		kid = new_slot(d, elem);
		if (elem == EV_S)
			set_bytes(&d->pool[kid], &s_domain[1 + i]);
		else if (elem == EV_B)
			set_bytes(&d->pool[kid], &b_domain[1 + i]);
		else
			d->pool[kid].num = i - 1;
		add_kid(d, at, kid, 0);
	}
}

/* A new random value of a kind; its pool index. */
static int
new_value(Doc *d, ExprValueKind kind, int depth)
{
	int			at = new_slot(d, kind);
	ToyVal	   *v = &d->pool[at];

	switch (kind)
	{
		case EV_S:
			set_bytes(v, &s_domain[rand_below(d, (int) (sizeof(s_domain) / sizeof(s_domain[0])))]);
			break;
		case EV_N:
			v->num = rand_below(d, 7) - 3;
			break;
		case EV_B:
			set_bytes(v, &b_domain[rand_below(d, (int) (sizeof(b_domain) / sizeof(b_domain[0])))]);
			break;
		case EV_BOOL:
			v->num = rand_below(d, 2);
			break;
		case EV_M:
		case EV_L:
			fill_container(d, at, depth);
			break;
		case EV_SS:
		case EV_NS:
		case EV_BS:
			fill_set(d, at);
			break;
		default:
			break;
	}
	return at;
}

/* Builds the document of a seed byte (the same seed gives the same document). */
static void
doc_build(Doc *d, uint8_t seed)
{
	d->count = 0;
	d->rng = 0x9E3779B9u ^ ((uint32_t) seed * 0x01000193u);
	for (int i = 0; i < NTOP; i++)
	{
		int			r = rand_below(d, 12);

		d->top[i] = r >= 10 ? -1 : new_value(d, (ExprValueKind) (1 + r), 0);
	}
	for (int i = 0; i < NVALUES; i++)
		d->values[i] = new_value(d, random_kind(d, 0), 0);
	for (int n = 0; n < NUM_MAX; n++)
	{
		d->numbers[n] = new_slot(d, EV_N);
		d->pool[d->numbers[n]].num = n;
	}
}

/* ---- the toy host ---- */

/* The ExprValue of a pool entry. */
static ExprValue
ref_of(Doc *d, int at)
{
	ExprValue	v = {d->pool[at].kind, &d->pool[at]};

	return v;
}

/* The toy value behind an ExprValue; aborts on a missing, NULL or foreign ref or a wrong kind. */
static const ToyVal *
toy(const Doc *d, ExprValue v)
{
	uintptr_t	p = (uintptr_t) v.ref;
	uintptr_t	base = (uintptr_t) d->pool;

	CHECK(v.kind > EV_MISSING && v.kind <= EV_BS);
	CHECK(p >= base && p < base + (uintptr_t) d->count * sizeof(ToyVal));
	CHECK((p - base) % sizeof(ToyVal) == 0);
	CHECK(((const ToyVal *) v.ref)->kind == v.kind);
	return v.ref;
}

/* A path step's one-letter name (a #placeholder stands for its name), or 0. */
static char
step_letter(const ExprPathStep *s)
{
	int			skip = s->placeholder ? 1 : 0;

	CHECK(s->name_len > skip);
	return s->name_len == skip + 1 ? s->name[skip] : 0;
}

/* The element of a container at a path step, or -1. */
static int
step_into(const Doc *d, int at, const ExprPathStep *s)
{
	const ToyVal *v = &d->pool[at];
	char		key;

	if (s->name == NULL)
		return v->kind == EV_L && s->index < v->nkids ? v->kids[s->index] : -1;
	key = step_letter(s);
	if (v->kind != EV_M)
		return -1;
	for (int i = 0; i < v->nkids; i++)
		if (v->keys[i] == key)
			return v->kids[i];
	return -1;
}

/* host->path: walks a..h, map keys and list indexes; EV_MISSING when absent. */
static ExprValue
host_path(void *ctx, const ExprNode *path)
{
	Doc		   *d = ctx;
	ExprValue	missing = {EV_MISSING, NULL};
	char		first;
	int			at;

	CHECK(path != NULL && path->kind == EXPR_PATH);
	CHECK(path->u.path.nsteps >= 1 && path->u.path.steps != NULL);
	CHECK(path->u.path.steps[0].name != NULL);
	first = step_letter(&path->u.path.steps[0]);
	at = first >= 'a' && first < 'a' + NTOP ? d->top[first - 'a'] : -1;
	for (int i = 1; i < path->u.path.nsteps && at >= 0; i++)
	{
		CHECK(path->u.path.steps[i].name != NULL || path->u.path.steps[i].index >= 0);
		at = step_into(d, at, &path->u.path.steps[i]);
	}
	return at < 0 ? missing : ref_of(d, at);
}

/* Which of :v0..:v9 a placeholder name stands for (others by a hash). */
static int
placeholder_index(const char *name, int len)
{
	unsigned	h = 0;

	if (len == 3 && name[1] == 'v' && name[2] >= '0' && name[2] <= '9')
		return name[2] - '0';
	for (int i = 0; i < len; i++)
		h = h * 31 + (unsigned char) name[i];
	return (int) (h % NVALUES);
}

/* host->value: the value of :v0..:v9. */
static ExprValue
host_value(void *ctx, const ExprNode *value)
{
	Doc		   *d = ctx;

	CHECK(value != NULL && value->kind == EXPR_VALUE);
	CHECK(value->u.value.name != NULL && value->u.value.name_len >= 2);
	CHECK(value->u.value.name[0] == ':');
	return ref_of(d, d->values[placeholder_index(value->u.value.name, value->u.value.name_len)]);
}

/* memcmp order of two byte strings (unsigned), shorter first on a tie. */
static int
bytes_cmp(const ToyVal *x, const ToyVal *y)
{
	int			n = x->len < y->len ? x->len : y->len;
	int			c = memcmp(x->bytes, y->bytes, (size_t) n);

	return c != 0 ? c : (x->len > y->len) - (x->len < y->len);
}

/* host->compare: only two values of one kind among S, N and B. */
static int
host_compare(void *ctx, ExprValue a, ExprValue b)
{
	const ToyVal *x = toy(ctx, a);
	const ToyVal *y = toy(ctx, b);

	CHECK(a.kind == b.kind && (a.kind == EV_S || a.kind == EV_N || a.kind == EV_B));
	if (a.kind == EV_N)
		return (x->num > y->num) - (x->num < y->num);
	return bytes_cmp(x, y);
}

static bool toy_equal(const Doc *d, const ToyVal *x, const ToyVal *y);

/* True when a set holds an element equal to y. */
static bool
set_has(const Doc *d, const ToyVal *set, const ToyVal *y)
{
	for (int i = 0; i < set->nkids; i++)
		if (d->pool[set->kids[i]].kind == y->kind && toy_equal(d, &d->pool[set->kids[i]], y))
			return true;
	return false;
}

/* Deep equality of two toy values of one kind (sets as sets). */
static bool
toy_equal(const Doc *d, const ToyVal *x, const ToyVal *y)
{
	CHECK(x->kind == y->kind);
	switch (x->kind)
	{
		case EV_S:
		case EV_B:
			return bytes_cmp(x, y) == 0;
		case EV_N:
		case EV_BOOL:
			return x->num == y->num;
		case EV_NULL:
			return true;
		case EV_SS:
		case EV_NS:
		case EV_BS:
			for (int i = 0; i < x->nkids; i++)
				if (!set_has(d, y, &d->pool[x->kids[i]]))
					return false;
			return x->nkids == y->nkids;
		default:
			/* M (keys ascending) and L: element by element */
			if (x->nkids != y->nkids)
				return false;
			for (int i = 0; i < x->nkids; i++)
				if (x->keys[i] != y->keys[i] ||
					d->pool[x->kids[i]].kind != d->pool[y->kids[i]].kind ||
					!toy_equal(d, &d->pool[x->kids[i]], &d->pool[y->kids[i]]))
					return false;
			return true;
	}
}

/* host->equal: only two values of one kind. */
static bool
host_equal(void *ctx, ExprValue a, ExprValue b)
{
	const ToyVal *x = toy(ctx, a);
	const ToyVal *y = toy(ctx, b);

	CHECK(a.kind == b.kind);
	return toy_equal(ctx, x, y);
}

/* host->begins_with: only S on S or B on B. */
static bool
host_begins_with(void *ctx, ExprValue a, ExprValue prefix)
{
	const ToyVal *x = toy(ctx, a);
	const ToyVal *p = toy(ctx, prefix);

	CHECK((a.kind == EV_S || a.kind == EV_B) && a.kind == prefix.kind);
	return p->len <= x->len && memcmp(x->bytes, p->bytes, (size_t) p->len) == 0;
}

/* True when the bytes of y occur in those of x. */
static bool
has_substring(const ToyVal *x, const ToyVal *y)
{
	for (int i = 0; i + y->len <= x->len; i++)
		if (memcmp(x->bytes + i, y->bytes, (size_t) y->len) == 0)
			return true;
	return false;
}

/* host->contains: a substring of an S, an element of a set or a list. */
static bool
host_contains(void *ctx, ExprValue a, ExprValue b)
{
	const ToyVal *x = toy(ctx, a);
	const ToyVal *y = toy(ctx, b);

	switch (a.kind)
	{
		case EV_S:
			return b.kind == EV_S && has_substring(x, y);
		case EV_SS:
		case EV_NS:
		case EV_BS:
		case EV_L:
			return set_has(ctx, x, y);
		default:
			return false;
	}
}

/* host->size: bytes of an S or B, elements of a set, map or list; -1 otherwise. */
static long
host_size(void *ctx, ExprValue a)
{
	const ToyVal *x;

	if (a.kind == EV_MISSING)
	{
		CHECK(a.ref == NULL);
		return -1;
	}
	x = toy(ctx, a);
	switch (a.kind)
	{
		case EV_S:
		case EV_B:
			return x->len;
		case EV_N:
		case EV_BOOL:
		case EV_NULL:
			return -1;
		default:
			return x->nkids;
	}
}

/* host->number: an N value for a size the host gave. */
static ExprValue
host_number(void *ctx, long n)
{
	Doc		   *d = ctx;

	CHECK(n >= 0 && n <= MAX_KIDS);
	return ref_of(d, d->numbers[n]);
}

/* host->type_name: the kind an S names, or -1 (the server raises instead). */
static int
host_type_name(void *ctx, ExprValue name)
{
	const ToyVal *x = toy(ctx, name);

	CHECK(name.kind == EV_S);
	for (int i = 0; i < (int) (sizeof(type_names) / sizeof(type_names[0])); i++)
		if ((int) strlen(type_names[i]) == x->len && memcmp(type_names[i], x->bytes, (size_t) x->len) == 0)
			return i + 1;
	return -1;
}

/* A host whose callbacks all check that they get this document as ctx. */
static ExprHost
make_host(Doc *d)
{
	ExprHost	h = {d, host_path, host_value, host_compare, host_equal, host_begins_with,
	host_contains, host_size, host_number, host_type_name};

	return h;
}

/* ---- evaluation and invariants ---- */

/* Evaluates a condition twice and checks both results agree. */
static bool
eval(const ExprHost *h, const ExprNode *cond)
{
	bool		r = expr_eval_condition(cond, h);

	CHECK(expr_eval_condition(cond, h) == r);
	return r;
}

/* Parses and evaluates text: 0 or 1, or -1 when it does not parse. */
static int
parse_eval(const ExprHost *h, const char *text, size_t len)
{
	Recorder	rec = {NULL, 0, 0};
	ExprArena	arena = {recording_alloc, &rec};
	ExprError	err;
	ExprNode   *root = expr_parse_condition(text, len, &arena, &err);
	int			r = root ? eval(h, root) : -1;

	recorder_free(&rec);
	return r;
}

/* Appends word, then "(" text ")", at p; returns the end. */
static char *
append_group(char *p, const char *word, const char *text, size_t len)
{
	size_t		wlen = strlen(word);

	memcpy(p, word, wlen);
	p += wlen;
	*p++ = '(';
	memcpy(p, text, len);
	p += len;
	*p++ = ')';
	return p;
}

/* Evaluates prefix(text)join(text) (no join: prefix(text)); -1 when too long. */
static int
eval_wrapped(const ExprHost *h, const char *text, size_t len, const char *prefix,
			 const char *join)
{
	size_t		total = strlen(prefix) + 2 + len + (join ? strlen(join) + 2 + len : 0);
	char	   *buf;
	char	   *end;
	int			r;

	if (total > EXPR_MAX_LENGTH)
		return -1;
	buf = malloc(total);
	CHECK(buf != NULL);
	end = append_group(buf, prefix, text, len);
	if (join)
		end = append_group(end, join, text, len);
	CHECK((size_t) (end - buf) == total);
	r = parse_eval(h, buf, total);
	free(buf);

	/*
	 * a condition that parses still parses in parentheses, after NOT, AND,
	 * OR; unless it is itself in parentheses: ((c)) is DynamoDB's redundant
	 * parentheses error
	 */
	if (r < 0)
	{
		size_t		i = 0;

		while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r'))
			i++;
		CHECK(i < len && text[i] == '(');
	}
	return r;
}

/* Checks NOT (c) == !c, (c) AND (c) == c and (c) OR (c) == c. */
static void
check_wrappings(const ExprHost *h, const char *text, size_t len, bool c)
{
	int			r;

	if ((r = eval_wrapped(h, text, len, "NOT ", NULL)) >= 0)
		CHECK(r == !c);
	if ((r = eval_wrapped(h, text, len, "", " AND ")) >= 0)
		CHECK(r == c);
	if ((r = eval_wrapped(h, text, len, "", " OR ")) >= 0)
		CHECK(r == c);
}

/* An operand's value, asked of the host as the evaluator would. */
static ExprValue
operand_value(const ExprHost *h, const ExprNode *n)
{
	ExprValue	missing = {EV_MISSING, NULL};
	long		size;

	if (n->kind == EXPR_PATH)
		return h->path(h->ctx, n);
	if (n->kind == EXPR_VALUE)
		return h->value(h->ctx, n);
	CHECK(n->kind == EXPR_FUNCTION && n->u.func.fn == FN_SIZE);
	size = h->size(h->ctx, h->path(h->ctx, n->u.func.args[0]));
	return size >= 0 ? h->number(h->ctx, size) : missing;
}

/* The kind of an operand's value. */
static ExprValueKind
operand_kind(const ExprHost *h, const ExprNode *n)
{
	return operand_value(h, n).kind;
}

/* True for the kinds <, <=, >, >= and BETWEEN order. */
static bool
orderable(ExprValueKind k)
{
	return k == EV_S || k == EV_N || k == EV_B;
}

/* Evaluates x op y, a comparison built from two operands of the tree. */
static bool
eval_cmp(const ExprHost *h, ExprCompareOp op, const ExprNode *x, const ExprNode *y)
{
	ExprNode	n;

	memset(&n, 0, sizeof(n));
	n.kind = EXPR_COMPARE;
	n.u.compare.op = op;
	n.u.compare.left = (ExprNode *) x;
	n.u.compare.right = (ExprNode *) y;
	return eval(h, &n);
}

/* DynamoDB's comparison laws between two operands x and y. */
static void
check_compare_laws(const ExprHost *h, const ExprNode *x, const ExprNode *y)
{
	ExprValueKind kx = operand_kind(h, x);
	ExprValueKind ky = operand_kind(h, y);
	bool		r[CMP_GE + 1];

	for (int op = CMP_EQ; op <= CMP_GE; op++)
		r[op] = eval_cmp(h, (ExprCompareOp) op, x, y);
	CHECK(r[CMP_NE] == !r[CMP_EQ]);
	/* a missing attribute equals nothing; two kinds are never equal */
	if (kx == EV_MISSING || kx != ky)
		CHECK(!r[CMP_EQ]);
	/* a present operand equals itself */
	if (x == y && kx != EV_MISSING)
		CHECK(r[CMP_EQ]);
	if (kx == ky && orderable(kx))
	{
		CHECK(r[CMP_LT] + r[CMP_EQ] + r[CMP_GT] == 1);
		CHECK(r[CMP_LE] == (r[CMP_LT] || r[CMP_EQ]));
		CHECK(r[CMP_GE] == (r[CMP_GT] || r[CMP_EQ]));
	}
	else
		CHECK(!r[CMP_LT] && !r[CMP_LE] && !r[CMP_GT] && !r[CMP_GE]);
	CHECK(eval_cmp(h, CMP_EQ, y, x) == r[CMP_EQ]);
	CHECK(eval_cmp(h, CMP_LT, y, x) == r[CMP_GT]);
}

/* BETWEEN is operand >= low AND operand <= high. */
static void
check_between(const ExprHost *h, const ExprNode *n)
{
	bool		ge = eval_cmp(h, CMP_GE, n->u.between.operand, n->u.between.low);
	bool		le = eval_cmp(h, CMP_LE, n->u.between.operand, n->u.between.high);

	CHECK(eval(h, n) == (ge && le));
	check_compare_laws(h, n->u.between.operand, n->u.between.low);
	check_compare_laws(h, n->u.between.operand, n->u.between.high);
}

/* IN is true when the operand equals one of the items. */
static void
check_in(const ExprHost *h, const ExprNode *n)
{
	bool		any = false;

	for (int i = 0; i < n->u.in.nlist; i++)
		any = eval_cmp(h, CMP_EQ, n->u.in.operand, n->u.in.list[i]) || any;
	CHECK(eval(h, n) == any);
	check_compare_laws(h, n->u.in.operand, n->u.in.operand);
}

/* A condition function against the kinds of its operands. */
static void
check_function(const ExprHost *h, const ExprNode *n)
{
	bool		r = eval(h, n);
	ExprValueKind ka = operand_kind(h, n->u.func.args[0]);
	ExprValueKind kb = n->u.func.nargs > 1 ? operand_kind(h, n->u.func.args[1]) : EV_MISSING;

	switch (n->u.func.fn)
	{
		case FN_ATTRIBUTE_EXISTS:
			CHECK(r == (ka != EV_MISSING));
			break;
		case FN_ATTRIBUTE_NOT_EXISTS:
			CHECK(r == (ka == EV_MISSING));
			break;
		case FN_ATTRIBUTE_TYPE:
			CHECK(r == (ka != EV_MISSING && kb == EV_S &&
						h->type_name(h->ctx, operand_value(h, n->u.func.args[1])) == (int) ka));
			break;
		case FN_BEGINS_WITH:
			CHECK(!r || ((ka == EV_S || ka == EV_B) && ka == kb));
			break;
		default:
			CHECK(!r || (ka != EV_MISSING && kb != EV_MISSING));
	}
	check_compare_laws(h, n->u.func.args[0], n->u.func.args[0]);
}

/* Walks the tree and checks the laws at every comparison, BETWEEN, IN and function. */
static void
check_laws(const ExprHost *h, const ExprNode *n)
{
	switch (n->kind)
	{
		case EXPR_AND:
		case EXPR_OR:
			check_laws(h, n->u.logic.left);
			check_laws(h, n->u.logic.right);
			break;
		case EXPR_NOT:
			check_laws(h, n->u.logic.left);
			break;
		case EXPR_COMPARE:
			check_compare_laws(h, n->u.compare.left, n->u.compare.right);
			check_compare_laws(h, n->u.compare.left, n->u.compare.left);
			check_compare_laws(h, n->u.compare.right, n->u.compare.right);
			break;
		case EXPR_BETWEEN:
			check_between(h, n);
			break;
		case EXPR_IN:
			check_in(h, n);
			break;
		case EXPR_FUNCTION:
			check_function(h, n);
			break;
		default:
			CHECK(!"an operand where a condition belongs");
	}
}

/* AND, OR and NOT worked out by the harness over the evaluator's leaf results. */
static bool
logic_result(const ExprHost *h, const ExprNode *n)
{
	bool		l;
	bool		r;

	switch (n->kind)
	{
		case EXPR_AND:
		case EXPR_OR:
			/* both sides, without short-circuit: the toy host has no side effects */
			l = logic_result(h, n->u.logic.left);
			r = logic_result(h, n->u.logic.right);
			return n->kind == EXPR_AND ? l && r : l || r;
		case EXPR_NOT:
			return !logic_result(h, n->u.logic.left);
		default:
			return eval(h, n);
	}
}

/* ---- the fixed checks of a seed ---- */

/* Evaluates a fixed expression with each '@' replaced by c; aborts unless it gives want. */
static void
expect_fixed(const ExprHost *h, const char *tmpl, char c, int want)
{
	char		buf[64];
	size_t		n = strlen(tmpl);
	int			r;

	CHECK(n < sizeof(buf));
	for (size_t i = 0; i < n; i++)
		buf[i] = tmpl[i] == '@' ? c : tmpl[i];
	r = parse_eval(h, buf, n);
	if (r != want)
	{
		fprintf(stderr, "expr_eval_fuzz: invariant failed: \"%.*s\" gave %d, not %d\n",
				(int) n, buf, r, want);
		abort();
	}
}

/* Comparisons and functions with an attribute the document never has. */
static const struct
{
	const char *text;			/* '@' stands for the digit of :v0..:v9 */
	int			want;
}			missing_checks[] = {
	{"zz_missing = :v@", 0}, {"zz_missing <> :v@", 1}, {"zz_missing < :v@", 0},
	{"zz_missing <= :v@", 0}, {"zz_missing > :v@", 0}, {"zz_missing >= :v@", 0},
	{":v@ = zz_missing", 0}, {":v@ <> zz_missing", 1}, {":v@ < zz_missing", 0},
	{"zz_missing BETWEEN :v@ AND :v@", 0}, {"zz_missing IN (:v@, :v@)", 0},
	{"begins_with(zz_missing, :v@)", 0}, {"contains(zz_missing, :v@)", 0},
	{"attribute_type(zz_missing, :v@)", 0}, {"size(zz_missing) = :v@", 0},
	{"size(zz_missing) <> :v@", 1}, {"NOT zz_missing = :v@", 1},
	{"attribute_exists(zz_missing)", 0}, {"attribute_not_exists(zz_missing)", 1},
	{"zz_missing = zz_missing", 0}, {"zz_missing <> zz_missing", 1},
	{"zz_missing = :v@ OR attribute_not_exists(zz_missing)", 1},
	{"attribute_not_exists(zz_missing) AND zz_missing = :v@", 0}
};

/* x = x, x <> x and friends on the top-level attribute a letter names. */
static void
check_attribute(const ExprHost *h, const Doc *d, char letter)
{
	int			at = d->top[letter - 'a'];
	ExprValueKind k = at < 0 ? EV_MISSING : d->pool[at].kind;

	expect_fixed(h, "@ = @", letter, k != EV_MISSING);
	expect_fixed(h, "@ <> @", letter, k == EV_MISSING);
	expect_fixed(h, "#@ = @", letter, k != EV_MISSING);
	expect_fixed(h, "@ < @", letter, 0);
	expect_fixed(h, "@ <= @", letter, orderable(k));
	expect_fixed(h, "@ BETWEEN #@ AND @", letter, orderable(k));
	expect_fixed(h, "@ IN (zz_missing, @)", letter, k != EV_MISSING);
	expect_fixed(h, "attribute_exists(@)", letter, k != EV_MISSING);
	expect_fixed(h, "attribute_not_exists(#@)", letter, k == EV_MISSING);
}

/* The fixed checks of one seed's document. */
static void
check_seed(uint8_t seed)
{
	static Doc	doc;
	ExprHost	h = make_host(&doc);

	doc_build(&doc, seed);
	for (char letter = 'a'; letter < 'a' + NTOP; letter++)
		check_attribute(&h, &doc, letter);
	for (char digit = '0'; digit <= '9'; digit++)
		for (size_t i = 0; i < sizeof(missing_checks) / sizeof(missing_checks[0]); i++)
			expect_fixed(&h, missing_checks[i].text, digit, missing_checks[i].want);
}

/* libFuzzer start-up: the fixed checks of all 256 seeds. */
int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void) argc;
	(void) argv;
	for (int seed = 0; seed < 256; seed++)
		check_seed((uint8_t) seed);
	return 0;
}

/* libFuzzer entry point: seed byte, expression; parse, evaluate, check, free. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static Doc	doc;
	ExprHost	h = make_host(&doc);
	Recorder	rec = {NULL, 0, 0};
	ExprArena	arena = {recording_alloc, &rec};
	ExprError	err;
	size_t		len;
	char	   *text;
	ExprNode   *root;

	if (size == 0)
		return 0;
	/* an exact-size copy of the expression, so that a read past its end is an ASan report */
	len = size - 1;
	text = malloc(len ? len : 1);
	CHECK(text != NULL);
	memcpy(text, data + 1, len);
	doc_build(&doc, data[0]);
	root = expr_parse_condition(text, len, &arena, &err);
	if (root != NULL)
	{
		bool		c = eval(&h, root);

		CHECK(logic_result(&h, root) == c);
		check_laws(&h, root);
		check_wrappings(&h, text, len, c);
	}
	recorder_free(&rec);
	free(text);
	return 0;
}
