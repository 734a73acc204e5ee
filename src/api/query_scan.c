/*
 * query_scan.c — Query and Scan: 1 MB pages with LastEvaluatedKey, filters
 * (Limit counted before them), projections, Select COUNT and parallel
 * segments; for ddb.execute_for_merge, the keys of every row a Query or Scan read.
 * The key condition and the start key are read_keys.c's.
 */
#include "postgres.h"

#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "../ddb_errors.h"
#include "../item/item_codec.h"
#include "../key/ddb_key.h"
#include "../metering/metering.h"
#include "../metering/throttle.h"
#include "../request/request.h"
#include "../table/gsi.h"
#include "api.h"

/* DynamoDB's page: a Query or Scan stops once it has read 1 MB. */
#define PAGE_MAX_BYTES (1024 * 1024)

/* A row a page read, for EvaluatedKeys: its keys, its index among the rows kept (-1: filtered out), its size. */
typedef struct EvaluatedRow
{
	RowKeys		keys;
	int64		ordinal;
	int32		bytes;
} EvaluatedRow;

/*
 * The bytes a page of ddb.execute_for_merge may read (api_merge_page_bytes,
 * 0: DynamoDB's 1 MB): a router gives a node what is left of its page.
 */
int64		api_merge_page_bytes = 0;

/* A Query or Scan response in the making. */
typedef struct PageBuilder
{
	ReadRequest *req;
	JsonbParseState *state;		/* the Items array, when items are returned */
	bool		count_only;		/* Select COUNT */
	int64		limit;			/* -1: none; counts rows read, before the filter */
	int64		count;			/* rows returned */
	int64		scanned;		/* rows read */
	int64		bytes;			/* of the rows read */
	ExprNode   *filter;			/* FilterExpression, or NULL */
	ProjectionNode *projection; /* ProjectionExpression, or NULL */
	ExprHost	host;
	HostContext host_ctx;
	bool		table_items;	/* a local index's rows stand for the table's whole items */
	bool		filter_table_items; /* the filter reads a local index row's whole item */
	bool		more;			/* stopped early: LastEvaluatedKey is due */
	RowKeys		last;
	EvaluatedRow *evaluated;	/* every row read (ddb.execute_for_merge), or NULL */
	int			nevaluated;
	int			evaluated_size;
	MemoryContext cxt;
} PageBuilder;

/* Copies a key datum into the page's context (0 stays 0). */
static Datum
copy_key(Datum key, MemoryContext cxt)
{
	MemoryContext old;
	struct varlena *k;
	Datum		copy;

	if (key == (Datum) 0)
		return key;
	old = MemoryContextSwitchTo(cxt);
	k = PG_DETOAST_DATUM_PACKED(key);
	copy = PointerGetDatum(ddb_key_from_encoded(DDB_KEY_DATA(k), DDB_KEY_LEN(k)));
	MemoryContextSwitchTo(old);
	return copy;
}

/* Notes the row just read (page->last) for EvaluatedKeys, in the page's context. */
static void
note_evaluated(PageBuilder *page, int64 ordinal, int32 bytes)
{
	if (page->nevaluated == page->evaluated_size)
	{
		page->evaluated_size *= 2;
		/* repalloc keeps the array in the page's context */
		page->evaluated = repalloc(page->evaluated, page->evaluated_size * sizeof(EvaluatedRow));
	}
	page->evaluated[page->nevaluated].keys = page->last;
	page->evaluated[page->nevaluated].bytes = bytes;
	page->evaluated[page->nevaluated++].ordinal = ordinal;
}

/* RowCallback of Query and Scan: adds a row unless the page is full. */
static bool
page_row(void *arg, Jsonb *item, int32 item_size, RowKeys *keys)
{
	PageBuilder *page = (PageBuilder *) arg;
	MemoryContext old;
	bool		kept;

	/* the page has read Limit rows, or 1 MB (a router's merge: what is left of it): stop before this row */
	if ((page->limit >= 0 && page->scanned >= page->limit) ||
		(page->scanned > 0 && page->bytes + item_size >
		 (page->evaluated && api_merge_page_bytes > 0 ? api_merge_page_bytes : PAGE_MAX_BYTES)))
	{
		page->more = true;
		return false;
	}
	page->scanned++;
	page->bytes += item_size;
	page->host_ctx.item = &item->root;
	if (page->table_items || page->filter_table_items)
	{
		Jsonb	   *whole = store_get(page->req->def, keys->pk, keys->sk);

		if (whole != NULL)
			page->host_ctx.item = &whole->root;
		if (whole != NULL && page->table_items)
			item = whole;
	}
	kept = page->filter == NULL || expr_eval_condition(page->filter, &page->host);
	if (kept)
	{
		/* the tree holds pointers into the item, so it must outlive the SPI row */
		old = MemoryContextSwitchTo(page->cxt);
		if (!page->count_only)
			item_push_dynamodb(&page->state,
							   page->projection ? &itemexpr_project(page->projection, item)->root
							   : &DatumGetJsonbPCopy(JsonbPGetDatum(item))->root);
		MemoryContextSwitchTo(old);
		page->count++;
	}
	page->last.pk = copy_key(keys->pk, page->cxt);
	page->last.sk = copy_key(keys->sk, page->cxt);
	page->last.gpk = copy_key(keys->gpk, page->cxt);
	page->last.gsk = copy_key(keys->gsk, page->cxt);
	if (page->evaluated)
		note_evaluated(page, kept ? page->count - 1 : -1, item_size);
	return true;
}

/* Pushes EvaluatedKeys: per row read, [its LastEvaluatedKey, its ordinal, its size in bytes]. */
static void
push_evaluated_keys(PageBuilder *page)
{
	JsonbValue	v;

	ddb_push_key(&page->state, "EvaluatedKeys");
	pushJsonbValue(&page->state, WJB_BEGIN_ARRAY, NULL);
	v.type = jbvNumeric;
	for (int i = 0; i < page->nevaluated; i++)
	{
		pushJsonbValue(&page->state, WJB_BEGIN_ARRAY, NULL);
		api_push_row_key(&page->state, page->req->def, page->req->index, &page->evaluated[i].keys);
		v.val.numeric = int64_to_numeric(page->evaluated[i].ordinal);
		pushJsonbValue(&page->state, WJB_ELEM, &v);
		v.val.numeric = int64_to_numeric(page->evaluated[i].bytes);
		pushJsonbValue(&page->state, WJB_ELEM, &v);
		pushJsonbValue(&page->state, WJB_END_ARRAY, NULL);
	}
	pushJsonbValue(&page->state, WJB_END_ARRAY, NULL);
}

/*
 * Checks Select against the projection as DynamoDB does, on the request as
 * sent (before AttributesToGet becomes a ProjectionExpression): a
 * projection with SPECIFIC_ATTRIBUTES and only then.
 */
static void
check_select_projection(Jsonb *request)
{
	char	   *select = api_string(request, "Select");
	JsonbValue	v;
	const char *given = api_field(request, "ProjectionExpression", &v) ? "ProjectionExpression" :
		api_field(request, "AttributesToGet", &v) ? "AttributesToGet" : NULL;

	/* its value was checked up front (api_check_request_members) */
	if (select == NULL)
		return;
	if (given && strcmp(select, "SPECIFIC_ATTRIBUTES") != 0)
		ddb_validation_error("Cannot specify the %s when choosing to get %s", given,
							 strcmp(select, "COUNT") == 0 ? "only the Count" : select);
	if (!given && strcmp(select, "SPECIFIC_ATTRIBUTES") == 0)
		ddb_validation_error("Must specify the AttributesToGet or ProjectionExpression when choosing to get SPECIFIC_ATTRIBUTES");
}

/*
 * Checks Select against the index, after every other check (DynamoDB Local
 * was seen to report any other fault first): ALL_PROJECTED_ATTRIBUTES on an
 * index, ALL_ATTRIBUTES on a global index that projects all.  True when a
 * local index read returns the table's whole items (ALL_ATTRIBUTES on one
 * that does not project all: DynamoDB fetches them from the table).
 */
static bool
check_select_index(Jsonb *request, IndexDef *index)
{
	char	   *select = api_string(request, "Select");
	bool		all = select && strcmp(select, "ALL_ATTRIBUTES") == 0;

	if (select == NULL)
		return false;
	if (index == NULL && strcmp(select, "ALL_PROJECTED_ATTRIBUTES") == 0)
		ddb_validation_error("ALL_PROJECTED_ATTRIBUTES can be used only when Querying using an IndexName");
	if (!all || index == NULL || index->projection == PROJECT_ALL)
		return false;
	if (!index->local)
		ddb_validation_error("One or more parameter values were invalid: Select type ALL_ATTRIBUTES is not supported for global secondary index %s because its projection type is not ALL",
							 index->name);
	return true;
}

/*
 * Runs a read (filtered when filter is set) and builds DynamoDB's Query/Scan
 * response; table_items: a local index's rows stand for the table's whole
 * items; filter_table_items: only the filter reads them; evaluated_keys:
 * the response also has EvaluatedKeys (ddb.execute_for_merge).
 */
static Jsonb *
read_response(Jsonb *request, ReadRequest *req, Placeholders *ph, ExprNode *filter,
			  ProjectionNode *projection, bool table_items, bool filter_table_items,
			  bool evaluated_keys)
{
	PageBuilder page = {0};
	char	   *select = api_string(request, "Select");
	JsonbContainer *start = api_object(request, "ExclusiveStartKey");
	bool		consistent;
	JsonbValue	v;

	page.req = req;
	page.cxt = CurrentMemoryContext;
	page.filter = filter;
	page.projection = projection;
	page.table_items = table_items;
	page.filter_table_items = filter_table_items;
	if (evaluated_keys)
	{
		page.evaluated_size = 64;
		page.evaluated = palloc(page.evaluated_size * sizeof(EvaluatedRow));
	}
	if (filter)
		itemexpr_host(&page.host_ctx, ph, "FilterExpression", &page.host);
	page.limit = api_int(request, "Limit", 1, PG_INT32_MAX);
	/* one row past the limit tells whether the page is the last */
	req->batch_size = page.limit > 0 && page.limit < 256 ? (int) page.limit + 1 : 0;
	page.count_only = select && strcmp(select, "COUNT") == 0;
	consistent = api_bool(request, "ConsistentRead", false);
	if (consistent && req->index && !req->index->local)
		ddb_validation_error("Consistent reads are not supported on global secondary indexes");
	if (start)
		api_start_key(req, start);

	/* the items are pushed straight into the response as rows arrive */
	pushJsonbValue(&page.state, WJB_BEGIN_OBJECT, NULL);
	if (!page.count_only)
	{
		ddb_push_key(&page.state, "Items");
		pushJsonbValue(&page.state, WJB_BEGIN_ARRAY, NULL);
	}
	api_throttle_admit(req->def, req->index, THROTTLE_READ, true);
	store_read(req, page_row, &page);
	api_capacity_read(req->def->name, req->index, page.bytes, consistent);
	if (!page.count_only)
		pushJsonbValue(&page.state, WJB_END_ARRAY, NULL);
	/* a page cut by Limit ends with a LastEvaluatedKey, as DynamoDB's does */
	if (page.limit >= 0 && page.scanned == page.limit)
		page.more = true;
	ddb_push_key(&page.state, "Count");
	v.type = jbvNumeric;
	v.val.numeric = int64_to_numeric(page.count);
	pushJsonbValue(&page.state, WJB_VALUE, &v);
	ddb_push_key(&page.state, "ScannedCount");
	v.val.numeric = int64_to_numeric(page.scanned);
	pushJsonbValue(&page.state, WJB_VALUE, &v);
	if (page.more && page.scanned > 0)
	{
		ddb_push_key(&page.state, "LastEvaluatedKey");
		api_push_row_key(&page.state, req->def, req->index, &page.last);
	}
	if (page.evaluated)
		push_evaluated_keys(&page);
	return JsonbValueToJsonb(pushJsonbValue(&page.state, WJB_END_OBJECT, NULL));
}

/* The FilterExpression of a Query or Scan, parsed and its placeholders checked, or NULL. */
static ExprNode *
request_filter(Jsonb *request, Placeholders *ctx)
{
	return itemexpr_parse_filter(ctx, api_string(request, "FilterExpression"));
}

/* Adds the top-level attribute names a FilterExpression reads to *names, each once, in order. */
static void
filter_attributes(Placeholders *ph, const ExprNode *node, List **names)
{
	switch (node->kind)
	{
		case EXPR_PATH:
			if (node->u.path.steps[0].name != NULL)
			{
				char	   *name = itemexpr_step_name(ph, "FilterExpression", &node->u.path.steps[0]);
				ListCell   *lc;

				foreach(lc, *names)
				{
					if (strcmp((char *) lfirst(lc), name) == 0)
						return;
				}
				*names = lappend(*names, name);
			}
			return;
		case EXPR_VALUE:
			return;
		case EXPR_COMPARE:
			filter_attributes(ph, node->u.compare.left, names);
			filter_attributes(ph, node->u.compare.right, names);
			return;
		case EXPR_BETWEEN:
			filter_attributes(ph, node->u.between.operand, names);
			filter_attributes(ph, node->u.between.low, names);
			filter_attributes(ph, node->u.between.high, names);
			return;
		case EXPR_IN:
			filter_attributes(ph, node->u.in.operand, names);
			for (int i = 0; i < node->u.in.nlist; i++)
				filter_attributes(ph, node->u.in.list[i], names);
			return;
		case EXPR_NOT:
			filter_attributes(ph, node->u.logic.left, names);
			return;
		case EXPR_AND:
		case EXPR_OR:
		case EXPR_PLUS:
		case EXPR_MINUS:
			filter_attributes(ph, node->u.logic.left, names);
			filter_attributes(ph, node->u.logic.right, names);
			return;
		case EXPR_FUNCTION:
			for (int i = 0; i < node->u.func.nargs; i++)
				filter_attributes(ph, node->u.func.args[i], names);
			return;
	}
}

/*
 * Raises when a Query's FilterExpression names a key attribute of the keys
 * queried: DynamoDB wants those in the KeyConditionExpression.  The key
 * attributes are looked for in the key's order (hash first), as DynamoDB
 * Local reports them.
 */
static void
reject_key_in_filter(List *names, const KeySchema *keys)
{
	for (int i = 0; i < keys->nhash + keys->nrange; i++)
	{
		const char *key = i < keys->nhash ? keys->hash_keys[i] : keys->range_keys[i - keys->nhash];
		ListCell   *lc;

		foreach(lc, names)
			if (strcmp((const char *) lfirst(lc), key) == 0)
				ddb_validation_error("Filter Expression can only contain non-primary key attributes: Primary key attribute: %s",
									 key);
	}
}

/* list_sort's order of two names. */
static int
name_order(const ListCell *a, const ListCell *b)
{
	return strcmp((const char *) lfirst(a), (const char *) lfirst(b));
}

/* The names an index does not project, sorted and joined as DynamoDB lists them ("a, b"), or NULL. */
static char *
unprojected(TableDef *def, IndexDef *index, List *names)
{
	List	   *missing = NIL;
	StringInfoData out;
	ListCell   *lc;

	foreach(lc, names)
		if (!gsi_projects(def, index, (const char *) lfirst(lc)))
			missing = lappend(missing, lfirst(lc));
	if (missing == NIL)
		return NULL;
	list_sort(missing, name_order);
	initStringInfo(&out);
	foreach(lc, missing)
		appendStringInfo(&out, "%s%s", out.len ? ", " : "", (const char *) lfirst(lc));
	return out.data;
}

/*
 * DynamoDB's rules for an index read that names attributes the index does
 * not project: a Query's filter is refused; a projection is refused on a
 * global index, and on a local one fetches the table's items (true).
 */
static bool
check_index_projection(ReadRequest *req, List *filter_names, ProjectionNode *projection)
{
	char	   *missing;

	if (req->index == NULL || req->index->projection == PROJECT_ALL)
		return false;
	if ((missing = unprojected(req->def, req->index, filter_names)) != NULL)
		ddb_validation_error("One or more parameter values were invalid: Secondary index %s does not project one or more filter attributes: [%s]",
							 req->index->name, missing);
	if (projection == NULL ||
		(missing = unprojected(req->def, req->index, itemexpr_projection_attributes(projection))) == NULL)
		return false;
	if (!req->index->local)
		ddb_validation_error("One or more parameter values were invalid: Global secondary index %s does not project [%s]",
							 req->index->name, missing);
	return true;
}

/* A Query's request read and checked: its read, expressions and what its response needs. */
typedef struct QueryPlan
{
	Jsonb	   *request;		/* with legacy parameters rewritten */
	ReadRequest req;
	Placeholders ctx;
	ExprNode   *filter;
	ProjectionNode *projection;
	bool		table_items;
} QueryPlan;

/* Reads and checks a Query's request, in the order DynamoDB checks it. */
static void
query_prepare(Jsonb *request, QueryPlan *plan)
{
	ReadRequest *req = &plan->req;
	char	   *index_name = api_string(request, "IndexName");
	char	   *text;
	ExprNode   *cond;
	JsonbValue	limit;
	List	   *filter_names = NIL;

	req->def = api_request_table(request);
	req->index = index_name ? table_def_index(req->def, index_name) : NULL;
	req->forward = api_bool(request, "ScanIndexForward", true);
	check_select_projection(request);
	request = api_legacy_to_expressions(request, LEGACY_KEY_CONDITIONS | LEGACY_QUERY_FILTER | LEGACY_ATTRIBUTES_TO_GET,
										"FilterExpression and KeyConditionExpression are null");
	plan->request = request;
	text = api_string(request, "KeyConditionExpression");
	/* Query words a Limit below 1 its own way (Scan's is api_int's) */
	if (api_field(request, "Limit", &limit) && api_int(request, "Limit", PG_INT32_MIN, PG_INT32_MAX) < 1)
		ddb_validation_error("1 validation error detected: Value at 'Limit' failed to satisfy constraint: Member must have value greater than or equal to 1");
	if (text == NULL)
		ddb_validation_error("Either the KeyConditions or KeyConditionExpression parameter must be specified in the request.");
	/*
	 * every expression is parsed and checked before the key condition is
	 * read against the keys; the key condition's own operands are checked
	 * after the filter and the projection, as DynamoDB Local was seen to
	 */
	api_expr_context(request, &plan->ctx);
	cond = itemexpr_parse_condition(&plan->ctx, "KeyConditionExpression", text);
	plan->filter = request_filter(request, &plan->ctx);
	plan->projection = itemexpr_projection(&plan->ctx, api_string(request, "ProjectionExpression"));
	itemexpr_check(&plan->ctx, "KeyConditionExpression", cond);
	itemexpr_check_unused(&plan->ctx);
	api_key_condition(&plan->ctx, req, cond);
	if (plan->filter)
		filter_attributes(&plan->ctx, plan->filter, &filter_names);
	reject_key_in_filter(filter_names, req->index ? &req->index->keys : &req->def->keys);
	plan->table_items = check_index_projection(req, filter_names, plan->projection);
	plan->table_items |= check_select_index(request, req->index);
}

/* Query. */
Jsonb *
api_query(Jsonb *request)
{
	QueryPlan	plan = {0};

	query_prepare(request, &plan);
	return read_response(plan.request, &plan.req, &plan.ctx, plan.filter, plan.projection, plan.table_items, false, false);
}

/* Query with EvaluatedKeys, the key and ordinal of every row read (ddb.execute_for_merge). */
Jsonb *
api_query_for_merge(Jsonb *request)
{
	QueryPlan	plan = {0};

	query_prepare(request, &plan);
	return read_response(plan.request, &plan.req, &plan.ctx, plan.filter, plan.projection, plan.table_items, false, true);
}

/*
 * The partition key value (a ddb_key datum) a valid Query reads the table
 * or a local index by, or (Datum) 0 for a global index: where a router
 * sends it.  Raises what the Query would raise for an invalid request.
 */
Datum
api_query_partition_key(Jsonb *request)
{
	QueryPlan	plan = {0};

	api_check_request_members(request, "Query");
	query_prepare(request, &plan);
	return plan.req.index && !plan.req.index->local ? (Datum) 0 : plan.req.pk;
}

/* Scan; with evaluated_keys, its response also has EvaluatedKeys (ddb.execute_for_merge). */
static Jsonb *
scan(Jsonb *request, bool evaluated_keys)
{
	ReadRequest req = {0};
	Placeholders ctx;
	ExprNode   *filter;
	ProjectionNode *projection;
	char	   *index_name = api_string(request, "IndexName");
	int64		segment = api_int(request, "Segment", 0, 999999);
	int64		total = api_int(request, "TotalSegments", 1, 1000000);
	bool		table_items;
	bool		filter_table_items = false;
	List	   *filter_names = NIL;

	req.def = api_request_table(request);
	req.index = index_name ? table_def_index(req.def, index_name) : NULL;
	check_select_projection(request);
	req.scan = true;
	req.forward = true;
	request = api_legacy_to_expressions(request, LEGACY_SCAN_FILTER | LEGACY_ATTRIBUTES_TO_GET, "FilterExpression is null");
	api_expr_context(request, &ctx);
	filter = request_filter(request, &ctx);
	projection = itemexpr_projection(&ctx, api_string(request, "ProjectionExpression"));
	if (filter == NULL && projection == NULL)
		api_reject_placeholders(request, "FilterExpression is null");
	/* only a filter can use values: a projection does not make them usable */
	if (filter == NULL && ctx.values)
		ddb_validation_error("ExpressionAttributeValues can only be specified when using expressions: FilterExpression is null");
	if ((segment >= 0) != (total >= 0))
		ddb_validation_error(segment >= 0 ?
							 "The TotalSegments parameter is required but was not present in the request when Segment parameter is present" :
							 "The Segment parameter is required but was not present in the request when parameter TotalSegments is present");
	if (segment >= total && total >= 0)
		ddb_validation_error("The Segment parameter is zero-based and must be less than parameter TotalSegments: Segment: %lld is not less than TotalSegments: %lld",
							 (long long) segment, (long long) total);
	if (total > 0)
	{
		req.segment = (int) segment;
		req.total_segments = (int) total;
	}
	itemexpr_check_unused(&ctx);
	/*
	 * a Scan's filter may name attributes the index does not project: on a
	 * local index DynamoDB fetches them from the table, a global index's
	 * entries are all there is
	 */
	if (filter && req.index && req.index->local && req.index->projection != PROJECT_ALL)
	{
		filter_attributes(&ctx, filter, &filter_names);
		filter_table_items = unprojected(req.def, req.index, filter_names) != NULL;
	}
	table_items = check_index_projection(&req, NIL, projection);
	table_items |= check_select_index(request, req.index);
	return read_response(request, &req, &ctx, filter, projection, table_items, filter_table_items, evaluated_keys);
}

/* Scan. */
Jsonb *
api_scan(Jsonb *request)
{
	return scan(request, false);
}

/* Scan with EvaluatedKeys, the key and ordinal of every row read (ddb.execute_for_merge). */
Jsonb *
api_scan_for_merge(Jsonb *request)
{
	return scan(request, true);
}
