/*
 * key_gist.c — the GiST operator class of ddb_key.
 *
 * Leaf entries are plain ddb_key values (no compress/decompress, so index-
 * only scans return them as stored).  An internal entry is the range of the
 * keys below it, stored as a varlena whose first byte is GIST_RANGE_MARK
 * (never a key tag), a 16-bit lower-bound length, the lower bound and the
 * upper bound.  Builds are sorted (sort support), which packs neighbouring
 * keys into one page and keeps the page ranges disjoint.  Bounds longer than
 * GIST_BOUND_MAX are shortened to a wider range, so that an internal page
 * always holds several entries however long the keys are.
 */
#include "postgres.h"

#include "access/gist.h"
#include "access/stratnum.h"

#include "ddb_key.h"

/* Strategy numbers of the operator class (sql/key.sql). */
#define KEY_STRATEGY_LT 1
#define KEY_STRATEGY_LE 2
#define KEY_STRATEGY_EQ 3
#define KEY_STRATEGY_GE 4
#define KEY_STRATEGY_GT 5
#define KEY_STRATEGY_NE 6
#define KEY_STRATEGY_PREFIX 7
#define KEY_STRATEGY_SEGMENT_PREFIX 8

#define GIST_RANGE_MARK 0x00
#define GIST_BOUND_MAX 256

PG_FUNCTION_INFO_V1(ddb_key_gist_consistent);
PG_FUNCTION_INFO_V1(ddb_key_gist_union);
PG_FUNCTION_INFO_V1(ddb_key_gist_penalty);
PG_FUNCTION_INFO_V1(ddb_key_gist_picksplit);
PG_FUNCTION_INFO_V1(ddb_key_gist_same);

/* The key range an entry covers; a leaf key is the range [key, key]. */
typedef struct KeyBounds
{
	const uint8_t *lo;
	size_t		lolen;
	const uint8_t *hi;
	size_t		hilen;
} KeyBounds;

/* Reads the bounds of a GiST entry datum. */
static void
entry_bounds(Datum datum, KeyBounds *b)
{
	struct varlena *v = PG_DETOAST_DATUM_PACKED(datum);
	const uint8_t *data = (const uint8_t *) VARDATA_ANY(v);
	size_t		len = VARSIZE_ANY_EXHDR(v);
	uint16		lolen;

	if (data[0] != GIST_RANGE_MARK)
	{
		b->lo = b->hi = data;
		b->lolen = b->hilen = len;
		return;
	}
	memcpy(&lolen, data + 1, sizeof(lolen));
	b->lo = data + 1 + sizeof(lolen);
	b->lolen = lolen;
	b->hi = b->lo + lolen;
	b->hilen = len - 1 - sizeof(lolen) - lolen;
}

/* Builds the datum of a range; a one-key range is stored as the key. */
static Datum
range_datum(const KeyBounds *bounds)
{
	struct varlena *v;
	uint8_t    *p;
	uint8_t		upper[GIST_BOUND_MAX];
	KeyBounds	shortened = *bounds;
	const KeyBounds *b = &shortened;
	uint16		lolen;
	size_t		len;

	if (key_compare_encoded(b->lo, b->lolen, b->hi, b->hilen) == 0 &&
		b->lolen <= GIST_BOUND_MAX)
		return PointerGetDatum(ddb_key_from_encoded(b->lo, b->lolen));
	/* a prefix of lo is <= lo; the bound above a prefix of hi is > hi */
	if (shortened.lolen > GIST_BOUND_MAX)
		shortened.lolen = GIST_BOUND_MAX;
	if (shortened.hilen > GIST_BOUND_MAX)
	{
		shortened.hilen = key_prefix_upper_bound(shortened.hi, GIST_BOUND_MAX, upper);
		shortened.hi = upper;
	}
	lolen = (uint16) b->lolen;
	len = 1 + sizeof(lolen) + b->lolen + b->hilen;
	v = (struct varlena *) palloc(VARHDRSZ + len);
	SET_VARSIZE(v, VARHDRSZ + len);
	p = (uint8_t *) VARDATA(v);
	p[0] = GIST_RANGE_MARK;
	memcpy(p + 1, &lolen, sizeof(lolen));
	memcpy(p + 1 + sizeof(lolen), b->lo, b->lolen);
	memcpy(p + 1 + sizeof(lolen) + b->lolen, b->hi, b->hilen);
	return PointerGetDatum(v);
}

/* Widens acc to cover b. */
static void
bounds_extend(KeyBounds *acc, const KeyBounds *b)
{
	if (key_compare_encoded(b->lo, b->lolen, acc->lo, acc->lolen) < 0)
	{
		acc->lo = b->lo;
		acc->lolen = b->lolen;
	}
	if (key_compare_encoded(b->hi, b->hilen, acc->hi, acc->hilen) > 0)
	{
		acc->hi = b->hi;
		acc->hilen = b->hilen;
	}
}

/* True when some key in [lo, hi] begins with the encoded prefix q. */
static bool
range_may_begin_with(const KeyBounds *b, const uint8_t *q, size_t qlen)
{
	/* the keys beginning with q are one contiguous run starting at q */
	return key_compare_encoded(b->hi, b->hilen, q, qlen) >= 0 &&
		(key_compare_encoded(b->lo, b->lolen, q, qlen) < 0 ||
		 key_begins_with(b->lo, b->lolen, q, qlen));
}

/* GiST consistent: may the subtree (or must the leaf) match the query? */
Datum
ddb_key_gist_consistent(PG_FUNCTION_ARGS)
{
	GISTENTRY  *entry = (GISTENTRY *) PG_GETARG_POINTER(0);
	struct varlena *query = PG_GETARG_DDB_KEY_PP(1);
	StrategyNumber strategy = (StrategyNumber) PG_GETARG_UINT16(2);
	bool	   *recheck = (bool *) PG_GETARG_POINTER(4);
	const uint8_t *q = DDB_KEY_DATA(query);
	size_t		qlen = DDB_KEY_LEN(query);
	bool		leaf = GIST_LEAF(entry);
	KeyBounds	b;

	*recheck = false;
	entry_bounds(entry->key, &b);
	if ((strategy == KEY_STRATEGY_PREFIX || strategy == KEY_STRATEGY_SEGMENT_PREFIX) &&
		q[0] == KEY_TAG_N)
		ddb_key_report_number_prefix();

	switch (strategy)
	{
		case KEY_STRATEGY_LT:
			PG_RETURN_BOOL(key_compare_encoded(b.lo, b.lolen, q, qlen) < 0);
		case KEY_STRATEGY_LE:
			PG_RETURN_BOOL(key_compare_encoded(b.lo, b.lolen, q, qlen) <= 0);
		case KEY_STRATEGY_EQ:
			PG_RETURN_BOOL(key_compare_encoded(b.lo, b.lolen, q, qlen) <= 0 &&
						   key_compare_encoded(b.hi, b.hilen, q, qlen) >= 0);
		case KEY_STRATEGY_GE:
			PG_RETURN_BOOL(key_compare_encoded(b.hi, b.hilen, q, qlen) >= 0);
		case KEY_STRATEGY_GT:
			PG_RETURN_BOOL(key_compare_encoded(b.hi, b.hilen, q, qlen) > 0);
		case KEY_STRATEGY_NE:
			PG_RETURN_BOOL(!leaf ||
						   key_compare_encoded(b.lo, b.lolen, q, qlen) != 0);
		case KEY_STRATEGY_PREFIX:
			PG_RETURN_BOOL(leaf ? key_begins_with(b.lo, b.lolen, q, qlen)
						   : range_may_begin_with(&b, q, qlen));
		case KEY_STRATEGY_SEGMENT_PREFIX:
			/* every key under q also begins with q */
			PG_RETURN_BOOL(leaf ? key_begins_with_segments(b.lo, b.lolen, q, qlen)
						   : range_may_begin_with(&b, q, qlen));
	}
	elog(ERROR, "ddb_model: unknown ddb_key GiST strategy %d", strategy);
	PG_RETURN_BOOL(false);
}

/* GiST union: the range covering every entry. */
Datum
ddb_key_gist_union(PG_FUNCTION_ARGS)
{
	GistEntryVector *entryvec = (GistEntryVector *) PG_GETARG_POINTER(0);
	KeyBounds	acc;

	entry_bounds(entryvec->vector[0].key, &acc);
	for (int i = 1; i < entryvec->n; i++)
	{
		KeyBounds	b;

		entry_bounds(entryvec->vector[i].key, &b);
		bounds_extend(&acc, &b);
	}
	PG_RETURN_DATUM(range_datum(&acc));
}

/* How far apart two keys a < b are, for penalties: earlier divergence is farther. */
static float
key_distance(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	size_t		n = alen < blen ? alen : blen;
	size_t		common = 0;
	int			ca;
	int			cb;

	while (common < n && a[common] == b[common])
		common++;
	ca = common < alen ? a[common] : 0;
	cb = common < blen ? b[common] : 0;
	return (float) (KEY_MAX_ENCODED + 1 - common) + (float) abs(cb - ca) / 256.0f;
}

/* GiST penalty: how much the original range must grow to take the new one. */
Datum
ddb_key_gist_penalty(PG_FUNCTION_ARGS)
{
	GISTENTRY  *orig = (GISTENTRY *) PG_GETARG_POINTER(0);
	GISTENTRY  *add = (GISTENTRY *) PG_GETARG_POINTER(1);
	float	   *penalty = (float *) PG_GETARG_POINTER(2);
	KeyBounds	o;
	KeyBounds	n;

	entry_bounds(orig->key, &o);
	entry_bounds(add->key, &n);
	*penalty = 0.0f;
	if (key_compare_encoded(n.lo, n.lolen, o.lo, o.lolen) < 0)
		*penalty += key_distance(n.lo, n.lolen, o.lo, o.lolen);
	if (key_compare_encoded(n.hi, n.hilen, o.hi, o.hilen) > 0)
		*penalty += key_distance(o.hi, o.hilen, n.hi, n.hilen);
	PG_RETURN_POINTER(penalty);
}

/* An entry of a page being split, with its bounds. */
typedef struct SplitItem
{
	OffsetNumber offset;
	KeyBounds	bounds;
} SplitItem;

/* Orders split items by lower bound, then upper bound. */
static int
split_item_cmp(const void *a, const void *b)
{
	const KeyBounds *x = &((const SplitItem *) a)->bounds;
	const KeyBounds *y = &((const SplitItem *) b)->bounds;
	int			c = key_compare_encoded(x->lo, x->lolen, y->lo, y->lolen);

	return c != 0 ? c : key_compare_encoded(x->hi, x->hilen, y->hi, y->hilen);
}

/* GiST picksplit: sort the entries and cut the page in the middle. */
Datum
ddb_key_gist_picksplit(PG_FUNCTION_ARGS)
{
	GistEntryVector *entryvec = (GistEntryVector *) PG_GETARG_POINTER(0);
	GIST_SPLITVEC *v = (GIST_SPLITVEC *) PG_GETARG_POINTER(1);
	int			nitems = entryvec->n - FirstOffsetNumber;
	SplitItem  *items = palloc(sizeof(SplitItem) * nitems);
	int			half = nitems / 2;
	KeyBounds	left;
	KeyBounds	right;

	for (int i = 0; i < nitems; i++)
	{
		items[i].offset = (OffsetNumber) (i + FirstOffsetNumber);
		entry_bounds(entryvec->vector[i + FirstOffsetNumber].key, &items[i].bounds);
	}
	qsort(items, nitems, sizeof(SplitItem), split_item_cmp);

	v->spl_left = palloc(sizeof(OffsetNumber) * nitems);
	v->spl_right = palloc(sizeof(OffsetNumber) * nitems);
	v->spl_nleft = v->spl_nright = 0;
	left = items[0].bounds;
	right = items[half].bounds;
	for (int i = 0; i < nitems; i++)
	{
		if (i < half)
		{
			v->spl_left[v->spl_nleft++] = items[i].offset;
			bounds_extend(&left, &items[i].bounds);
		}
		else
		{
			v->spl_right[v->spl_nright++] = items[i].offset;
			bounds_extend(&right, &items[i].bounds);
		}
	}
	v->spl_ldatum = range_datum(&left);
	v->spl_rdatum = range_datum(&right);
	PG_RETURN_POINTER(v);
}

/* GiST same: are two entries byte-identical? */
Datum
ddb_key_gist_same(PG_FUNCTION_ARGS)
{
	struct varlena *a = PG_GETARG_DDB_KEY_PP(0);
	struct varlena *b = PG_GETARG_DDB_KEY_PP(1);
	bool	   *result = (bool *) PG_GETARG_POINTER(2);

	*result = VARSIZE_ANY_EXHDR(a) == VARSIZE_ANY_EXHDR(b) &&
		memcmp(VARDATA_ANY(a), VARDATA_ANY(b), VARSIZE_ANY_EXHDR(a)) == 0;
	PG_RETURN_POINTER(result);
}
