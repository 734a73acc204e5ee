/*
 * key_support.c — planner support for ^@ and <@ on a btree-indexed ddb_key.
 *
 * A prefix test becomes the range  key >= prefix AND key < upper(prefix).
 * With a constant prefix the bound is computed while planning, as core does
 * for text ^@.  With a prefix that is only known at execution (a parameter
 * of a generic plan) the bound is left as a call of the upper-bound function
 * over the parameter, which btree evaluates once when the scan starts; core's
 * text ^@ falls back to a sequential scan there.
 */
#include "postgres.h"

#include "access/stratnum.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_type_d.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "nodes/pathnodes.h"
#include "nodes/supportnodes.h"
#include "optimizer/optimizer.h"
#include "parser/parse_func.h"
#include "utils/lsyscache.h"

#include "ddb_key.h"
#include "key_prefix.h"

PG_FUNCTION_INFO_V1(ddb_key_begins_with_support);
PG_FUNCTION_INFO_V1(ddb_key_begins_with_segments_support);

/* A ddb_key constant node. */
static Expr *
key_const(Oid keytype, struct varlena *key)
{
	return (Expr *) makeConst(keytype, -1, InvalidOid, -1,
							  PointerGetDatum(key), false, false);
}

/* The OID of the SQL upper-bound function that lives beside funcid. */
static Oid
upper_bound_function(Oid funcid, Oid keytype, bool segments)
{
	char	   *schema = get_namespace_name(get_func_namespace(funcid));
	const char *name = segments ? "segment_prefix_upper_bound" : "prefix_upper_bound";

	return LookupFuncName(list_make2(makeString(schema), makeString(pstrdup(name))),
						  1, &keytype, false);
}

/* Builds the index conditions for a prefix clause, or NIL if it has none. */
static List *
prefix_index_conditions(SupportRequestIndexCondition *req, bool segments)
{
	List	   *args;
	Expr	   *keyexpr;
	Expr	   *prefixexpr;
	Expr	   *upper;
	Oid			keytype;
	Oid			geop;
	Oid			ltop;

	if (is_opclause(req->node))
		args = ((OpExpr *) req->node)->args;
	else if (is_funcclause(req->node))
		args = ((FuncExpr *) req->node)->args;
	else
		return NIL;
	if (list_length(args) != 2 || req->indexarg != 0 ||
		req->index->relam != BTREE_AM_OID)
		return NIL;

	keyexpr = (Expr *) linitial(args);
	prefixexpr = (Expr *) lsecond(args);
	keytype = exprType((Node *) keyexpr);
	geop = get_opfamily_member(req->opfamily, keytype, keytype,
							   BTGreaterEqualStrategyNumber);
	ltop = get_opfamily_member(req->opfamily, keytype, keytype,
							   BTLessStrategyNumber);
	if (!OidIsValid(geop) || !OidIsValid(ltop))
		return NIL;
	/* the prefix must be computable once, before the scan */
	if (contain_volatile_functions((Node *) prefixexpr) ||
		bms_is_member(req->index->rel->relid,
					  pull_varnos(req->root, (Node *) prefixexpr)))
		return NIL;

	if (IsA(prefixexpr, Const))
	{
		Const	   *c = (Const *) prefixexpr;
		struct varlena *bound;

		if (c->constisnull)
			return NIL;
		bound = ddb_key_range_upper(PG_DETOAST_DATUM_PACKED(c->constvalue), segments);
		/* an all-0xFF binary prefix has no upper bound among storable keys */
		if (DDB_KEY_TAG(bound) == KEY_TAG_ABOVE_ALL)
			upper = NULL;
		else
			upper = key_const(keytype, bound);
	}
	else
		upper = (Expr *) makeFuncExpr(upper_bound_function(req->funcid, keytype, segments),
									  keytype, list_make1(copyObject(prefixexpr)),
									  InvalidOid, InvalidOid, COERCE_EXPLICIT_CALL);

	/* ^@ is exactly the range; <@ also admits "prefix" + bytes below '#' */
	req->lossy = segments;
	if (upper == NULL)
		return list_make1(make_opclause(geop, BOOLOID, false, keyexpr, prefixexpr,
										InvalidOid, InvalidOid));
	return list_make2(make_opclause(geop, BOOLOID, false, keyexpr, prefixexpr,
									InvalidOid, InvalidOid),
					  make_opclause(ltop, BOOLOID, false, keyexpr, upper,
									InvalidOid, InvalidOid));
}

/* Answers a planner support request for one of the two prefix functions. */
static Datum
prefix_support(Node *rawreq, bool segments)
{
	if (IsA(rawreq, SupportRequestIndexCondition))
	{
		List	   *conds = prefix_index_conditions((SupportRequestIndexCondition *) rawreq,
													segments);

		if (conds != NIL)
			PG_RETURN_POINTER(conds);
	}
	PG_RETURN_POINTER(NULL);
}

/* Planner support of ddb.begins_with (operator ^@). */
Datum
ddb_key_begins_with_support(PG_FUNCTION_ARGS)
{
	return prefix_support((Node *) PG_GETARG_POINTER(0), false);
}

/* Planner support of ddb.begins_with_segments (operator <@). */
Datum
ddb_key_begins_with_segments_support(PG_FUNCTION_ARGS)
{
	return prefix_support((Node *) PG_GETARG_POINTER(0), true);
}
