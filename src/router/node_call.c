/*
 * node_call.c — calls to the shard nodes through ddb_router's PL/Proxy
 * functions, and the SQL function ddb_router.call that the fan-out
 * operations use.  A node's error comes back as the node raised it: PL/Proxy
 * prefixes the message with the function and node ("f(4): [db] REMOTE ERROR:
 * ") and the detail and hint with "Remote detail: " ..., which would change
 * DynamoDB's message and hide its error body; a node that cannot be reached
 * is DynamoDB's retryable ServiceUnavailable.
 */
#include "postgres.h"

#include "catalog/pg_proc.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/memutils.h"
#include "utils/regproc.h"
#include "utils/syscache.h"

#include "../ddb_errors.h"
#include "router.h"

PG_FUNCTION_INFO_V1(ddb_router_call);
PG_FUNCTION_INFO_V1(ddb_router_call_rolled_back);
PG_FUNCTION_INFO_V1(ddb_router_call_for_merge);
PG_FUNCTION_INFO_V1(ddb_router_raise_invalid);

/* The node functions by signature, looked up once per backend (again after a change of one of them in pg_proc). */
static const char *const node_function_signatures[NODE_FUNCTION_COUNT] = {
	"ddb_router.node_execute(integer,name,text,jsonb)",
	"ddb_router.node_execute_rolled_back(integer,name,text,jsonb)",
	"ddb_router.node_execute_for_merge(integer,name,text,jsonb,integer)",
};
static FmgrInfo node_functions[NODE_FUNCTION_COUNT];
static uint32 node_function_hashes[NODE_FUNCTION_COUNT];	/* their pg_proc syscache hash values */
static bool node_functions_valid = false;
static bool node_functions_callback = false;

/* Forgets the looked-up functions when one of them changes in pg_proc (an extension update), or all did (0). */
static void
node_functions_invalidate(Datum arg, int cacheid, uint32 hashvalue)
{
	for (int i = 0; i < NODE_FUNCTION_COUNT; i++)
		if (hashvalue == 0 || hashvalue == node_function_hashes[i])
			node_functions_valid = false;
}

/* The FmgrInfo of a node function, looked up when needed. */
static FmgrInfo *
node_function(NodeFunction function)
{
	if (!node_functions_callback)
	{
		CacheRegisterSyscacheCallback(PROCOID, node_functions_invalidate, (Datum) 0);
		node_functions_callback = true;
	}
	if (!node_functions_valid)
	{
		for (int i = 0; i < NODE_FUNCTION_COUNT; i++)
		{
			Oid			oid = DatumGetObjectId(DirectFunctionCall1(to_regprocedure,
																   CStringGetTextDatum(node_function_signatures[i])));

			if (!OidIsValid(oid))
				ereport(ERROR,
						(errcode(ERRCODE_UNDEFINED_FUNCTION),
						 errmsg("function %s does not exist", node_function_signatures[i]),
						 errhint("The router needs the extension ddb_router of its version: ALTER EXTENSION ddb_router UPDATE.")));
			fmgr_info_cxt(oid, &node_functions[i], TopMemoryContext);
			node_function_hashes[i] = GetSysCacheHashValue1(PROCOID, ObjectIdGetDatum(oid));
		}
		node_functions_valid = true;
	}
	return &node_functions[function];
}

/* The text after prefix at the start of s, or s when it does not start so. */
static char *
after_prefix(char *s, const char *prefix)
{
	size_t		n = strlen(prefix);

	return s && strncmp(s, prefix, n) == 0 ? s + n : s;
}

/* Rethrows the error of a node call as the node raised it, or as ServiceUnavailable when no node answered. */
static void
rethrow_node_error(MemoryContext cxt)
{
	ErrorData  *edata;
	char	   *remote;

	MemoryContextSwitchTo(cxt);
	edata = CopyErrorData();
	FlushErrorState();
	remote = edata->message ? strstr(edata->message, "] REMOTE ERROR: ") : NULL;
	if (remote)
	{
		edata->message = remote + strlen("] REMOTE ERROR: ");
		edata->detail = after_prefix(edata->detail, "Remote detail: ");
		edata->hint = after_prefix(edata->hint, "Remote hint: ");
		edata->context = NULL;
	}
	else if (ERRCODE_TO_CATEGORY(edata->sqlerrcode) == ERRCODE_CONNECTION_EXCEPTION ||
			 (edata->message && strstr(edata->message, "PL/Proxy") != NULL &&
			  (strstr(edata->message, "connect") != NULL || strstr(edata->message, "connection") != NULL)))
	{
		/* PostgreSQL's words stay in the log as the hint */
		edata->hint = edata->message;
		edata->sqlerrcode = ERRCODE_DDB_SERVICE_UNAVAILABLE;
		edata->message = ROUTER_UNREACHABLE_MESSAGE;
		edata->detail = ddb_error_body(ddb_error_type(DDB_ERROR_SERVICE_UNAVAILABLE), edata->message, NULL, NULL);
		edata->context = NULL;
	}
	ReThrowError(edata);
}

/* Calls a node function on the node of route (page_bytes: NODE_EXECUTE_FOR_MERGE's, 0 for a whole page). */
text *
node_call(NodeFunction function, int32 route, Datum role, bool role_null, text *operation, Jsonb *request,
		  int32 page_bytes)
{
	LOCAL_FCINFO(fcinfo, 5);
	MemoryContext cxt = CurrentMemoryContext;
	Datum		result = (Datum) 0;

	InitFunctionCallInfoData(*fcinfo, node_function(function), function == NODE_EXECUTE_FOR_MERGE ? 5 : 4,
							 InvalidOid, NULL, NULL);
	fcinfo->args[4].value = Int32GetDatum(page_bytes);
	fcinfo->args[4].isnull = page_bytes == 0;
	fcinfo->args[0].value = Int32GetDatum(route);
	fcinfo->args[0].isnull = false;
	fcinfo->args[1].value = role;
	fcinfo->args[1].isnull = role_null;
	fcinfo->args[2].value = PointerGetDatum(operation);
	fcinfo->args[2].isnull = false;
	fcinfo->args[3].value = JsonbPGetDatum(request);
	fcinfo->args[3].isnull = false;
	PG_TRY();
	{
		result = FunctionCallInvoke(fcinfo);
	}
	PG_CATCH();
	{
		rethrow_node_error(cxt);
	}
	PG_END_TRY();
	if (fcinfo->isnull)
		elog(ERROR, "ddb_router: a node answered null");
	return DatumGetTextPP(result);
}

/*
 * Refuses a role the caller may not act as, as ddb.execute_as does: the
 * nodes trust the router's connection to act as any role it names.
 */
void
router_check_role(Datum role, bool role_null)
{
	const char *role_name;
	Oid			oid;

	if (role_null)
		return;
	role_name = NameStr(*DatumGetName(role));
	oid = get_role_oid(role_name, true);
	if (!OidIsValid(oid))
		ereport(ERROR,
				(errcode(ERRCODE_DDB_ACCESS_DENIED),
				 errmsg("The role \"%s\" this request acts as does not exist", role_name),
				 errdetail("%s", ddb_error_body(ddb_error_type(DDB_ERROR_ACCESS_DENIED),
												"The role this request acts as does not exist", NULL, NULL))));
	if (!is_member_of_role(GetUserId(), oid))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to act as role \"%s\"", role_name),
				 errhint("ddb_router.execute_metered takes a role the caller may SET ROLE to.")));
}

/*
 * A node function called from SQL (ddb_router.call, call_rolled_back,
 * call_for_merge): only within a request ddb_router.execute_metered serves,
 * whose SQL routes it; a role calling one itself would send a write to a
 * node of its choosing, past the partition's writer lock (a move would lose
 * it), the unique values the router claims, and the routing (an item on a
 * node that does not hold its partition, which no read through the router finds).
 */
static Datum
call_from_sql(FunctionCallInfo fcinfo, NodeFunction function)
{
	router_require_serving(function == NODE_EXECUTE ? "ddb_router.call" :
						   function == NODE_EXECUTE_ROLLED_BACK ? "ddb_router.call_rolled_back" :
						   "ddb_router.call_for_merge", "calls a node");
	if (PG_ARGISNULL(0) || PG_ARGISNULL(2) || PG_ARGISNULL(3))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("the route, operation and request of a node call must not be null")));
	router_check_role(PG_GETARG_DATUM(1), PG_ARGISNULL(1));
	PG_RETURN_TEXT_P(node_call(function, PG_GETARG_INT32(0), PG_GETARG_DATUM(1), PG_ARGISNULL(1),
							   PG_GETARG_TEXT_PP(2), PG_GETARG_JSONB_P(3),
							   function == NODE_EXECUTE_FOR_MERGE && !PG_ARGISNULL(4) ? PG_GETARG_INT32(4) : 0));
}

/*
 * ddb_router.call(route, role, operation, request): ddb.execute_metered on
 * the node of route, for the fan-out operations' SQL (a write takes the
 * partition's writer lock first).
 */
Datum
ddb_router_call(PG_FUNCTION_ARGS)
{
	return call_from_sql(fcinfo, NODE_EXECUTE);
}

/*
 * Has the node of partition 0 raise DynamoDB's error for a request the
 * router could not route, which must be invalid: it runs it rolled back.
 */
void
node_raise_invalid(Datum role, bool role_null, text *operation, Jsonb *request)
{
	(void) node_call(NODE_EXECUTE_ROLLED_BACK, 0, role, role_null, operation, request, 0);
	elog(ERROR, "ddb_router: a request the router could not route succeeded on a node (rolled back there)");
}

/* ddb_router.call_rolled_back(route, role, operation, request): ddb.execute_rolled_back on the node of route. */
Datum
ddb_router_call_rolled_back(PG_FUNCTION_ARGS)
{
	return call_from_sql(fcinfo, NODE_EXECUTE_ROLLED_BACK);
}

/* ddb_router.call_for_merge(route, role, operation, request, page_bytes): ddb.execute_for_merge on the node of route. */
Datum
ddb_router_call_for_merge(PG_FUNCTION_ARGS)
{
	return call_from_sql(fcinfo, NODE_EXECUTE_FOR_MERGE);
}

/* ddb_router.raise_invalid(role, operation, request): node_raise_invalid for the fan-out operations' SQL. */
Datum
ddb_router_raise_invalid(PG_FUNCTION_ARGS)
{
	if (PG_ARGISNULL(1) || PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("the operation and request of ddb_router.raise_invalid must not be null")));
	router_require_serving("ddb_router.raise_invalid", "calls a node");
	router_check_role(PG_GETARG_DATUM(0), PG_ARGISNULL(0));
	node_raise_invalid(PG_GETARG_DATUM(0), PG_ARGISNULL(0), PG_GETARG_TEXT_PP(1), PG_GETARG_JSONB_P(2));
	PG_RETURN_NULL();
}
