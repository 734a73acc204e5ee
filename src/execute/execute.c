/*
 * execute.c — ddb.execute(operation, request): DynamoDB's JSON protocol.
 *
 * One dispatcher: item operations are C (src/api/; PartiQL's,
 * src/partiql/); table operations are the SQL functions
 * ddb.api_<operation>(request) (sql/), which are no hot path.  Each item
 * operation is metered and admitted around its run (src/metering/).
 * Every error of class YD leaves with DynamoDB's error body as its DETAIL,
 * so that a client (or the gateway) can return it unchanged; so does every
 * PostgreSQL error a request can cause (a deadlock, a model's invariant),
 * with the type and message of its row of DDB_SQLSTATE_ERRORS (its
 * SQLSTATE and message stay, which SQL callers catch).
 */
#include "postgres.h"

#include "catalog/pg_authid.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/guc.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"

#include "../api/api.h"
#include "../ddb_errors.h"
#include "../metering/metering.h"
#include "../metering/throttle.h"
#include "../partiql/partiql.h"
#include "../request/request.h"
#include "../request/subtransaction.h"
#include "../table/table_access.h"

PG_FUNCTION_INFO_V1(ddb_execute);
PG_FUNCTION_INFO_V1(ddb_execute_as);
PG_FUNCTION_INFO_V1(ddb_execute_metered);
PG_FUNCTION_INFO_V1(ddb_execute_rolled_back);
PG_FUNCTION_INFO_V1(ddb_execute_for_merge);

/*
 * Where an operation builds its response.  A response tree of a few hundred
 * kB palloc'd in the caller's per-row context would be malloc'd and freed
 * (mmap and munmap) on every call, and the page faults cost more than the
 * work; this context keeps one large block across calls and is reset after
 * each.  A nested call (ddb.execute from a trigger) gets a context of its own.
 */
#define EXECUTE_CONTEXT_BLOCK (1024 * 1024)
static MemoryContext execute_context = NULL;
static bool execute_context_busy = false;

typedef Jsonb *(*Operation) (Jsonb *request);

/* The operations served in C. */
static const struct
{
	const char *name;
	Operation	run;
}			item_operations[] = {
	{"PutItem", api_put_item},
	{"GetItem", api_get_item},
	{"DeleteItem", api_delete_item},
	{"UpdateItem", api_update_item},
	{"TransactWriteItems", api_transact_write_items},
	{"TransactGetItems", api_transact_get_items},
	{"Query", api_query},
	{"Scan", api_scan},
	{"BatchWriteItem", api_batch_write_item},
	{"BatchGetItem", api_batch_get_item},
	{"ExecuteStatement", api_execute_statement},
	{"BatchExecuteStatement", api_batch_execute_statement},
	{"ExecuteTransaction", api_execute_transaction},
};

/* The operations served by SQL functions ddb.api_<snake_case name>. */
static const struct
{
	const char *name;
	const char *function;
}			table_operations[] = {
	{"CreateTable", "ddb.api_create_table"},
	{"DescribeTable", "ddb.api_describe_table"},
	{"ListTables", "ddb.api_list_tables"},
	{"DeleteTable", "ddb.api_delete_table"},
	{"UpdateTimeToLive", "ddb.api_update_time_to_live"},
	{"DescribeTimeToLive", "ddb.api_describe_time_to_live"},
	{"TagResource", "ddb.api_tag_resource"},
	{"UntagResource", "ddb.api_untag_resource"},
	{"ListTagsOfResource", "ddb.api_list_tags_of_resource"},
	{"UpdateTable", "ddb.api_update_table"},
	{"ListStreams", "ddb.api_list_streams"},
	{"DescribeStream", "ddb.api_describe_stream"},
	{"GetShardIterator", "ddb.api_get_shard_iterator"},
	{"GetRecords", "ddb.api_get_records"},
	{"DescribeLimits", "ddb.api_describe_limits"},
	{"DescribeEndpoints", "ddb.api_describe_endpoints"},
	{"CreateBackup", "ddb.api_create_backup"},
	{"DescribeBackup", "ddb.api_describe_backup"},
	{"ListBackups", "ddb.api_list_backups"},
	{"DeleteBackup", "ddb.api_delete_backup"},
	{"RestoreTableFromBackup", "ddb.api_restore_table_from_backup"},
	{"UpdateContinuousBackups", "ddb.api_update_continuous_backups"},
	{"DescribeContinuousBackups", "ddb.api_describe_continuous_backups"},
	{"RestoreTableToPointInTime", "ddb.api_restore_table_to_point_in_time"},
	{"ExportTableToPointInTime", "ddb.api_export_table_to_point_in_time"},
	{"DescribeExport", "ddb.api_describe_export"},
	{"ListExports", "ddb.api_list_exports"},
	{"ImportTable", "ddb.api_import_table"},
	{"DescribeImport", "ddb.api_describe_import"},
	{"ListImports", "ddb.api_list_imports"},
};


/* Calls the SQL function of a table operation. */
static Jsonb *
run_sql_operation(const char *function, Jsonb *request)
{
	Oid			argtypes[1] = {JSONBOID};
	Datum		args[1] = {JsonbPGetDatum(request)};
	Jsonb	   *result;
	bool		isnull;

	SPI_connect();
	if (SPI_execute_with_args(psprintf("SELECT %s($1)", function), 1, argtypes, args, NULL,
							  false, 1) != SPI_OK_SELECT)
		elog(ERROR, "ddb_model: %s failed", function);
	result = DatumGetJsonbP(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	result = (Jsonb *) SPI_datumTransfer(JsonbPGetDatum(result), false, -1);
	SPI_finish();
	return result;
}

/*
 * Runs one operation; metered records its capacity whether or not it asks;
 * for_merge runs a Query or Scan with EvaluatedKeys (ddb.execute_for_merge).
 */
static Jsonb *
dispatch(const char *operation, Jsonb *request, bool metered, bool for_merge)
{
	for (size_t i = 0; i < lengthof(item_operations); i++)
		if (strcmp(operation, item_operations[i].name) == 0)
		{
			/* the batch and transaction operations report ConsumedCapacity per table, in a list */
			bool		transaction = strncmp(operation, "Transact", 8) == 0 ||
				strcmp(operation, "ExecuteTransaction") == 0;
			bool		per_table = strncmp(operation, "Batch", 5) == 0 || transaction;
			Operation	run = !for_merge ? item_operations[i].run :
				strcmp(operation, "Query") == 0 ? api_query_for_merge : api_scan_for_merge;
			bool		throttled;

			api_check_request_members(request, operation);
			/* throttling (src/metering/throttle.c) admits and charges by the units recorded */
			throttled = api_throttle_start();
			api_capacity_start(request, metered || throttled, transaction);
			return api_capacity_response(request, run(request), per_table);
		}
	for (size_t i = 0; i < lengthof(table_operations); i++)
		if (strcmp(operation, table_operations[i].name) == 0)
			return run_sql_operation(table_operations[i].function, request);
	ereport(ERROR,
			(errcode(ERRCODE_DDB_UNKNOWN_OPERATION),
			 errmsg("An unknown operation was requested: %s", operation)));
	return NULL;
}

/*
 * A refusal by PostgreSQL's own privilege checks (a table's GRANTs, a
 * row-level security policy, the catalog's privileges for table
 * operations) in table_access.c's words, naming the request's table when it
 * names one: the checks there refuse before a statement runs, this is the
 * backstop.
 */
static char *
privilege_refusal(const char *operation, Jsonb *request)
{
	JsonbValue	name;
	bool		named = request && JsonContainerIsObject(&request->root) && api_field(request, "TableName", &name) &&
		name.type == jbvString;

	return table_access_denied_message(operation, named ? pnstrdup(name.val.string.val, name.val.string.len) : NULL, NULL);
}

/*
 * The end of a request that failed with sqlerrcode: what it read and wrote
 * charged when the error is DynamoDB's (unless it was charged already),
 * then its capacity and admissions forgotten, whatever the charge does.
 */
static pg_noinline void
end_failed_request(int sqlerrcode, bool charged)
{
	PG_TRY();
	{
		if (!charged && ddb_error_type_of_errcode(sqlerrcode) != NULL)
			api_throttle_charge();
	}
	PG_CATCH();
	{
		api_capacity_stop();
		api_throttle_stop();
		PG_RE_THROW();
	}
	PG_END_TRY();
	api_capacity_stop();
	api_throttle_stop();
}

/*
 * Runs the operation of argument n on the request of argument n + 1 as the
 * current user: ddb.execute, ddb.execute_as, ddb.execute_metered and
 * ddb.execute_for_merge (for_merge: the caller checked that it is a Query or Scan).
 * With usage, the capacity it used by table (api_capacity_usage) is
 * recorded whatever the request asks, and returned there.
 */
static Jsonb *
execute_request(FunctionCallInfo fcinfo, int n, Jsonb **usage, bool for_merge)
{
	char	   *operation;
	Jsonb	   *request;
	Jsonb	   *response = NULL;
	MemoryContext cxt = CurrentMemoryContext;
	MemoryContext work;
	bool		shared = !execute_context_busy;
	const char *outer_action;
	volatile bool charged = false;

	if (PG_ARGISNULL(n))
		ereport(ERROR,
				(errcode(ERRCODE_DDB_UNKNOWN_OPERATION),
				 errmsg("An unknown operation was requested"),
				 errdetail("%s", ddb_error_body(ddb_error_type(DDB_ERROR_UNKNOWN_OPERATION),
												"An unknown operation was requested", NULL, NULL))));
	operation = text_to_cstring(PG_GETARG_TEXT_PP(n));
	request = PG_ARGISNULL(n + 1) ? NULL : PG_GETARG_JSONB_P(n + 1);

	if (shared && execute_context == NULL)
		execute_context = AllocSetContextCreate(TopMemoryContext, "ddb.execute",
												EXECUTE_CONTEXT_BLOCK, EXECUTE_CONTEXT_BLOCK,
												EXECUTE_CONTEXT_BLOCK);
	work = shared ? execute_context : AllocSetContextCreate(cxt, "ddb.execute (nested)",
															ALLOCSET_DEFAULT_SIZES);
	if (shared)
	{
		MemoryContextReset(work);
		execute_context_busy = true;
	}

	outer_action = table_access_set_action(operation);
	PG_TRY();
	{
		MemoryContextSwitchTo(work);
		if (request == NULL || !JsonContainerIsObject(&request->root))
			ereport(ERROR,
					(errcode(ERRCODE_DDB_SERIALIZATION),
					 errmsg("The request body must be a JSON object")));
		response = dispatch(operation, request, usage != NULL, for_merge);
		/* charged once: a charge that fails is not charged again below */
		charged = true;
		if (shared)
			api_throttle_charge();
		MemoryContextSwitchTo(cxt);
		response = DatumGetJsonbPCopy(JsonbPGetDatum(response));
		if (usage)
			*usage = api_capacity_usage();
	}
	PG_CATCH();
	{
		ErrorData  *edata;
		const DdbErrorType *type;
		char	   *message;

		MemoryContextSwitchTo(cxt);
		table_access_set_action(outer_action);
		edata = CopyErrorData();
		if (shared)
		{
			execute_context_busy = false;
			/*
			 * what a request that failed with DynamoDB's error read or wrote
			 * is charged, as DynamoDB charges a failed conditional write:
			 * else such requests (which return the item with
			 * ReturnValuesOnConditionCheckFailure) passed the capacity
			 */
			end_failed_request(edata->sqlerrcode, charged);
		}
		if (edata->sqlerrcode == ERRCODE_INSUFFICIENT_PRIVILEGE)
		{
			edata->sqlerrcode = ERRCODE_DDB_ACCESS_DENIED;
			edata->hint = edata->message;	/* PostgreSQL's own words, for the log */
			edata->message = privilege_refusal(operation, request);
			edata->detail = NULL;
		}
		type = ddb_error_type_of_errcode(edata->sqlerrcode);
		message = edata->message;
		if (type == NULL)
			type = ddb_database_error(edata, &message);
		if (type == NULL)
			PG_RE_THROW();
		FlushErrorState();
		/* an error that already carries its body (with an Item, say) keeps it */
		if (edata->detail == NULL || edata->detail[0] != '{' || strstr(edata->detail, "\"__type\"") == NULL)
			edata->detail = ddb_error_body(type, message, NULL, NULL);
		edata->context = NULL;
		ReThrowError(edata);
	}
	PG_END_TRY();
	table_access_set_action(outer_action);
	if (shared)
	{
		execute_context_busy = false;
		api_capacity_stop();
		api_throttle_stop();
		MemoryContextReset(work);
	}
	else
		MemoryContextDelete(work);
	return response;
}

/* ddb.execute(operation, request): DynamoDB's action on DynamoDB's JSON. */
Datum
ddb_execute(PG_FUNCTION_ARGS)
{
	PG_RETURN_JSONB_P(execute_request(fcinfo, 0, NULL, false));
}

/*
 * Runs the request of arguments 1 and 2 as the role of argument 0, which
 * the caller must be able to SET ROLE to (usage and for_merge: as
 * execute_request).
 *
 * Code of other roles may run within the request (a table owner's
 * triggers, policies, defaults, index expressions), as the role.  Nothing
 * of it may outlive the request and run as the caller (ddb-gateway's
 * role, or a superuser): the request is a security-restricted operation,
 * as REFRESH MATERIALIZED VIEW runs an owner's code, so PostgreSQL refuses
 * a deferred trigger it queues (it would fire at commit), a cursor WITH
 * HOLD, a temporary table, SET ROLE; and every setting it changes, even
 * with SET or set_config(..., false), is undone when it ends.  The
 * extension's own work at commit (stream records, point-in-time recovery
 * versions) needs no deferred trigger (src/table/commit_queue.h).
 */
static Jsonb *
execute_as_role(FunctionCallInfo fcinfo, Jsonb **usage, bool for_merge)
{
	const char *role_name = NameStr(*PG_GETARG_NAME(0));
	Oid			role = get_role_oid(role_name, true);
	Oid			userid;
	int			sec_context;
	int			guc_level;
	Jsonb	   *volatile result = NULL;

	/* an access key whose role was dropped may do nothing */
	if (!OidIsValid(role))
		ereport(ERROR,
				(errcode(ERRCODE_DDB_ACCESS_DENIED),
				 errmsg("The role \"%s\" this request acts as does not exist", role_name),
				 errdetail("%s", ddb_error_body(ddb_error_type(DDB_ERROR_ACCESS_DENIED),
												"The role this request acts as does not exist", NULL, NULL))));
	/* the rule of SET ROLE */
	if (!is_member_of_role(GetUserId(), role))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to act as role \"%s\"", role_name),
				 errhint("ddb.execute_as takes a role the caller may SET ROLE to.")));
	GetUserIdAndSecContext(&userid, &sec_context);
	SetUserIdAndSecContext(role, sec_context | SECURITY_LOCAL_USERID_CHANGE | SECURITY_RESTRICTED_OPERATION);
	guc_level = NewGUCNestLevel();
	PG_TRY();
	{
		result = execute_request(fcinfo, 1, usage, for_merge);
	}
	PG_FINALLY();
	{
		SetUserIdAndSecContext(userid, sec_context);
	}
	PG_END_TRY();
	/* undone, as an abort would: nothing the role set reaches the caller (an error's abort does the same) */
	AtEOXact_GUC(false, guc_level);
	return result;
}

/*
 * ddb.execute_as(role, operation, request): ddb.execute as a role the
 * caller may SET ROLE to, in one call.  The role's privileges decide what
 * the request may touch.
 */
Datum
ddb_execute_as(PG_FUNCTION_ARGS)
{
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("the role of ddb.execute_as must not be null")));
	PG_RETURN_JSONB_P(execute_as_role(fcinfo, NULL, false));
}

/*
 * ddb.execute_metered's text (for_merge: ddb.execute_for_merge's): the
 * request of arguments 1 and 2 run as the role of argument 0 (as the
 * current user when it is null), the capacity it used on the first line.
 */
static text *
metered_text(FunctionCallInfo fcinfo, bool for_merge)
{
	Jsonb	   *usage = NULL;
	Jsonb	   *response = PG_ARGISNULL(0) ? execute_request(fcinfo, 1, &usage, for_merge) :
		execute_as_role(fcinfo, &usage, for_merge);
	StringInfoData out;

	initStringInfo(&out);
	JsonbToCString(&out, &usage->root, VARSIZE(usage));
	appendStringInfoChar(&out, '\n');
	JsonbToCString(&out, &response->root, VARSIZE(response));
	return cstring_to_text_with_len(out.data, out.len);
}

/*
 * ddb.execute_metered(role, operation, request): ddb.execute_as (as the
 * current user when role is null), as one text: the capacity the request
 * used by table, {"Table": [read units, write units]}, whatever
 * ReturnConsumedCapacity says, on the first line (JSON text holds no raw
 * newline), then the response.  ddb-gateway serves every request so, for
 * its metrics and access log; one value rather than a row spares the
 * executor a scan node per call.
 */
Datum
ddb_execute_metered(PG_FUNCTION_ARGS)
{
	PG_RETURN_TEXT_P(metered_text(fcinfo, false));
}

/*
 * ddb.execute_for_merge(role, operation, request): ddb.execute_metered of a
 * Query whose response also has EvaluatedKeys, [[key, ordinal], ...]: for
 * every row the page read, in the order read, the LastEvaluatedKey a page
 * ending after it would carry, and its index among the rows the filter kept
 * (counted under Select COUNT too), or -1.  A router merges its shards'
 * pages of a GSI Query by them, in the order item_store.c's order_columns
 * reads; it is no DynamoDB operation, and serves Query only.
 */
Datum
ddb_execute_for_merge(PG_FUNCTION_ARGS)
{
	text	   *volatile answer = NULL;

	/* a null operation is UnknownOperationException, as in ddb.execute_metered */
	if (!PG_ARGISNULL(1))
	{
		char	   *operation = text_to_cstring(PG_GETARG_TEXT_PP(1));

		if (strcmp(operation, "Query") != 0 && strcmp(operation, "Scan") != 0)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("ddb.execute_for_merge runs Query and Scan only, not %s", operation),
					 errhint("Run other operations with ddb.execute_metered.")));
	}
	if (!PG_ARGISNULL(3) && (PG_GETARG_INT32(3) < 1 || PG_GETARG_INT32(3) > 1024 * 1024))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the page bytes of ddb.execute_for_merge must be from 1 to 1048576, not %d", PG_GETARG_INT32(3))));
	api_merge_page_bytes = PG_ARGISNULL(3) ? 0 : PG_GETARG_INT32(3);
	PG_TRY();
	{
		answer = metered_text(fcinfo, true);
	}
	PG_FINALLY();
	{
		api_merge_page_bytes = 0;
	}
	PG_END_TRY();
	PG_RETURN_TEXT_P(answer);
}

/*
 * ddb.execute_rolled_back(role, operation, request): ddb.execute_metered,
 * with whatever the request did rolled back (its answer, or its error, is
 * what a router of a sharded deployment wants: src/router/): a request the
 * router could not route raises DynamoDB's error here in the order the
 * node's own checks give it, and a batch that spans nodes is checked whole
 * before any node writes its part.
 */
Datum
ddb_execute_rolled_back(PG_FUNCTION_ARGS)
{
	Subtransaction sub;
	text	   *result = NULL;

	api_subtransaction_begin(&sub);
	/* a router's check, before the request itself: not admitted nor charged twice */
	api_throttle_suspended = true;
	PG_TRY();
	{
		/* in the caller's context, which the rollback keeps */
		result = metered_text(fcinfo, false);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		api_throttle_suspended = false;
		MemoryContextSwitchTo(sub.cxt);
		edata = CopyErrorData();
		FlushErrorState();
		api_subtransaction_rollback(&sub);
		ReThrowError(edata);
	}
	PG_END_TRY();
	api_throttle_suspended = false;
	api_subtransaction_rollback(&sub);
	PG_RETURN_TEXT_P(result);
}
