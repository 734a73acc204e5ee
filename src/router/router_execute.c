/*
 * router_execute.c — ddb_router.execute_metered(role, operation, request),
 * what ddb-gateway calls on a router: ddb.execute_metered's contract (the
 * capacity by table on the first line, then the response), served by the
 * shard nodes.  Item operations and a Query of a table or local index go to
 * the node of their partition key; the operations that span nodes are the
 * SQL functions ddb_router.<operation> (sql/router/); the
 * catalog's read-only operations are the router's own (its catalog is the
 * nodes'), and so are ListStreams (a stream's ARN is the router's) and the
 * account's DescribeLimits and DescribeEndpoints (the gateway's address);
 * the operations of point-in-time recovery are refused, but for its
 * description, and so are exports and imports, but for their descriptions
 * and listings.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "../ddb_errors.h"
#include "router.h"

PG_FUNCTION_INFO_V1(ddb_router_execute_metered);

/* How the router serves an operation. */
typedef enum Routing
{
	ROUTE_ITEM_KEY,				/* the node of the Key's partition key */
	ROUTE_ITEM_KEY_WRITE,		/* the same, a write */
	ROUTE_ITEM_WRITE,			/* the node of the Item's partition key, a write */
	ROUTE_QUERY,				/* the node of the key condition's partition key, or every node for a global index */
	ROUTE_SQL,					/* ddb_router.<function>(role, request): spans nodes */
	ROUTE_LOCAL					/* the router's catalog */
} Routing;

static const struct
{
	const char *operation;
	Routing		routing;
	const char *function;		/* ROUTE_SQL's, and ROUTE_QUERY's for a global index */
}			routes[] = {
	{"GetItem", ROUTE_ITEM_KEY, NULL},
	{"DeleteItem", ROUTE_ITEM_KEY_WRITE, NULL},
	{"UpdateItem", ROUTE_ITEM_KEY_WRITE, NULL},
	{"PutItem", ROUTE_ITEM_WRITE, NULL},
	{"Query", ROUTE_QUERY, "ddb_router.query_global_index"},
	{"Scan", ROUTE_SQL, "ddb_router.scan"},
	{"BatchGetItem", ROUTE_SQL, "ddb_router.batch_get_item"},
	{"BatchWriteItem", ROUTE_SQL, "ddb_router.batch_write_item"},
	{"TransactWriteItems", ROUTE_SQL, "ddb_router.transact"},
	{"TransactGetItems", ROUTE_SQL, "ddb_router.transact"},
	{"CreateTable", ROUTE_SQL, "ddb_router.change_table"},
	{"DeleteTable", ROUTE_SQL, "ddb_router.change_table"},
	{"UpdateTable", ROUTE_SQL, "ddb_router.change_table"},
	{"UpdateTimeToLive", ROUTE_SQL, "ddb_router.change_table"},
	{"TagResource", ROUTE_SQL, "ddb_router.change_table"},
	{"UntagResource", ROUTE_SQL, "ddb_router.change_table"},
	{"DescribeTable", ROUTE_SQL, "ddb_router.describe_table"},
	{"ExecuteStatement", ROUTE_SQL, "ddb_router.execute_statement"},
	{"BatchExecuteStatement", ROUTE_SQL, "ddb_router.batch_execute_statement"},
	{"ExecuteTransaction", ROUTE_SQL, "ddb_router.transact"},
	{"DescribeStream", ROUTE_SQL, "ddb_router.describe_stream"},
	{"GetShardIterator", ROUTE_SQL, "ddb_router.get_shard_iterator"},
	{"GetRecords", ROUTE_SQL, "ddb_router.get_records"},
	{"ListStreams", ROUTE_LOCAL, NULL},
	{"ListTables", ROUTE_LOCAL, NULL},
	{"DescribeTimeToLive", ROUTE_LOCAL, NULL},
	{"ListTagsOfResource", ROUTE_LOCAL, NULL},
	{"DescribeLimits", ROUTE_LOCAL, NULL},
	{"DescribeEndpoints", ROUTE_LOCAL, NULL},
	/* the shards keep no point-in-time recovery history (sql/router/pitr.sql) */
	{"UpdateContinuousBackups", ROUTE_SQL, "ddb_router.refuse_pitr"},
	{"RestoreTableToPointInTime", ROUTE_SQL, "ddb_router.refuse_pitr"},
	{"DescribeContinuousBackups", ROUTE_LOCAL, NULL},
	/* no export nor import through a router (sql/router/transfer.sql): the router finds none */
	{"ExportTableToPointInTime", ROUTE_SQL, "ddb_router.refuse_transfer"},
	{"ImportTable", ROUTE_SQL, "ddb_router.refuse_transfer"},
	{"DescribeExport", ROUTE_LOCAL, NULL},
	{"ListExports", ROUTE_LOCAL, NULL},
	{"DescribeImport", ROUTE_LOCAL, NULL},
	{"ListImports", ROUTE_LOCAL, NULL},
};

/*
 * The operations a sharded deployment does not serve: on-demand backups and
 * restores (each shard's database is backed up on its own, docs/backups.md).
 */
static const char *const unsupported_operations[] = {
	"CreateBackup", "DescribeBackup", "ListBackups", "DeleteBackup", "RestoreTableFromBackup",
};

/* The operations that may set an attribute (PutItem's item, an update, a PartiQL INSERT or UPDATE). */
static const char *const unique_writers[] = {
	"PutItem", "UpdateItem", "BatchWriteItem", "TransactWriteItems",
	"ExecuteStatement", "BatchExecuteStatement", "ExecuteTransaction",
};

/* Runs SELECT function($1 role, $2 operation, $3 request) on the router (SPI): its answer, or NULL. */
static text *
run_sql_or_null(const char *function, Datum role, bool role_null, text *operation, Jsonb *request)
{
	Oid			argtypes[3] = {NAMEOID, TEXTOID, JSONBOID};
	Datum		args[3] = {role, PointerGetDatum(operation), JsonbPGetDatum(request)};
	char		nulls[3] = {role_null ? 'n' : ' ', ' ', ' '};
	bool		isnull;
	Datum		result;

	SPI_connect();
	if (SPI_execute_with_args(psprintf("SELECT %s($1, $2, $3)", function), 3, argtypes, args, nulls,
							  false, 1) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "ddb_router: %s failed", function);
	result = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	if (!isnull)
		result = SPI_datumTransfer(result, false, -1);
	SPI_finish();
	return isnull ? NULL : DatumGetTextPP(result);
}

/* run_sql_or_null of a function that always answers. */
static text *
run_sql(const char *function, Datum role, bool role_null, text *operation, Jsonb *request)
{
	text	   *answer = run_sql_or_null(function, role, role_null, operation, request);

	if (answer == NULL)
		elog(ERROR, "ddb_router: %s answered null", function);
	return answer;
}

/* Refuses an operation of unsupported_operations with DynamoDB's ValidationException. */
static pg_attribute_noreturn() void
unsupported(const char *operation)
{
	char	   *message = psprintf("%s is not supported on a sharded deployment (ddb_router): "
								   "back up each shard's database instead", operation);

	ereport(ERROR,
			(errcode(ERRCODE_DDB_VALIDATION),
			 errmsg_internal("%s", message),
			 errdetail_internal("%s", ddb_error_body(ddb_error_type(DDB_ERROR_VALIDATION), message, NULL, NULL))));
}

/* ddb.execute_metered of arguments role, operation, request, routed (ddb_router.execute_metered). */
static Datum
execute_routed(FunctionCallInfo fcinfo)
{
	Datum		role = PG_GETARG_DATUM(0);
	bool		role_null = PG_ARGISNULL(0);
	text	   *operation;
	char	   *op;
	Jsonb	   *request;
	uint32		hash = 0;
	bool		global = false;
	bool		routed = false;

	/*
	 * No role: the caller's own, as ddb.execute_metered acts on one node.
	 * Passed on as NULL, the nodes would act as the router's connection
	 * user (a superuser, in practice); only a superuser's request goes so.
	 */
	if (role_null && !superuser())
	{
		role = DirectFunctionCall1(namein, CStringGetDatum(GetUserNameFromId(GetUserId(), false)));
		role_null = false;
	}
	router_check_role(role, role_null);
	/* a request that is no object, or no operation: the router's ddb.execute_metered raises DynamoDB's error */
	if (PG_ARGISNULL(1) || PG_ARGISNULL(2) || !JsonContainerIsObject(&PG_GETARG_JSONB_P(2)->root))
	{
		text	   *none = cstring_to_text("");

		PG_RETURN_TEXT_P(run_sql("ddb.execute_metered", role, role_null,
								 PG_ARGISNULL(1) ? none : PG_GETARG_TEXT_PP(1),
								 PG_ARGISNULL(2) ? DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum("null"))) : PG_GETARG_JSONB_P(2)));
	}
	operation = PG_GETARG_TEXT_PP(1);
	op = text_to_cstring(operation);
	request = PG_GETARG_JSONB_P(2);
	for (size_t i = 0; i < lengthof(unsupported_operations); i++)
		if (strcmp(op, unsupported_operations[i]) == 0)
			unsupported(op);

	/* a reference table's items are on every node (sql/router/reference.sql) */
	if (router_request_names_listed(REFERENCE_TABLES, request))
	{
		text	   *answer = run_sql_or_null("ddb_router.reference_request", role, role_null, operation, request);

		if (answer)
			PG_RETURN_TEXT_P(answer);
	}
	/* an attribute a node keeps unique is kept so across the nodes */
	for (size_t i = 0; i < lengthof(unique_writers); i++)
		if (strcmp(op, unique_writers[i]) == 0 && router_request_names_listed(TABLES_WITH_UNIQUE, request))
			(void) run_sql("ddb_router.guard_unique", role, role_null, operation, request);

	for (size_t i = 0; i < lengthof(routes); i++)
	{
		if (strcmp(op, routes[i].operation) != 0)
			continue;
		switch (routes[i].routing)
		{
			case ROUTE_ITEM_KEY:
			case ROUTE_ITEM_KEY_WRITE:
			case ROUTE_ITEM_WRITE:
				routed = route_item(request, routes[i].routing == ROUTE_ITEM_WRITE ? "Item" : "Key", &hash);
				break;
			case ROUTE_QUERY:
				routed = route_query(request, &hash, &global);
				if (routed && global)
					PG_RETURN_TEXT_P(run_sql(routes[i].function, role, role_null, operation, request));
				break;
			case ROUTE_SQL:
				PG_RETURN_TEXT_P(run_sql(routes[i].function, role, role_null, operation, request));
			case ROUTE_LOCAL:
				PG_RETURN_TEXT_P(run_sql("ddb.execute_metered", role, role_null, operation, request));
		}
		if (!routed)
			node_raise_invalid(role, role_null, operation, request);
		if (routes[i].routing != ROUTE_ITEM_KEY && routes[i].routing != ROUTE_QUERY)
			router_write_guard(hash);
		PG_RETURN_TEXT_P(node_call(NODE_EXECUTE, (int32) hash, role, role_null, operation, request, 0));
	}
	/* an operation ddb_model does not know: its UnknownOperationException */
	PG_RETURN_TEXT_P(run_sql("ddb.execute_metered", role, role_null, operation, request));
}

/* ddb_router.execute_metered(role, operation, request): ddb.execute_metered, routed; the writer locks it takes are its own (write_guard.c). */
Datum
ddb_router_execute_metered(PG_FUNCTION_ARGS)
{
	Datum		answer;

	router_requests_serving++;
	PG_TRY();
	{
		answer = execute_routed(fcinfo);
	}
	PG_FINALLY();
	{
		router_requests_serving--;
	}
	PG_END_TRY();
	return answer;
}
