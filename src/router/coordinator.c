/*
 * coordinator.c — the C side of the router's transactions across shard
 * nodes (sql/router/two_phase.sql and transactions.sql, docs/scale-out.md
 * "Transactions across shards"): the settings (ddb_router.loopback_connstr,
 * and ddb_router.failpoint, a test hook), errors raised as a node raised
 * them (a remote error comes back through dblink with dblink's context, and
 * is raised again without any), TransactionCanceledException for a whole
 * request.  (The claims a TransactGetItems across nodes holds on each node
 * are ddb_model's ddb.try_claim_items, src/api/transactions.c.)
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"

#include "../ddb_errors.h"
#include "../ddb_jsonb.h"
#include "router.h"

PG_FUNCTION_INFO_V1(ddb_router_failpoint);
PG_FUNCTION_INFO_V1(ddb_router_raise_error);
PG_FUNCTION_INFO_V1(ddb_router_raise_unavailable);
PG_FUNCTION_INFO_V1(ddb_router_raise_cancelled);

/* ddb_router.failpoint: where a transaction across nodes ends the router's backend (a test hook). */
static char *failpoint = NULL;

/* ddb_router.loopback_connstr: how the router connects to its own database (empty: its socket and port). */
static char *loopback_connstr = NULL;

/* The points ddb_router.failpoint may name (or none: ""). */
static bool
check_failpoint(char **newval, void **extra, GucSource source)
{
	if (**newval == '\0' || strcmp(*newval, "after_prepare") == 0 || strcmp(*newval, "after_decision") == 0)
		return true;
	GUC_check_errdetail("ddb_router.failpoint is \"\", \"after_prepare\" or \"after_decision\".");
	return false;
}

/* Defines the router's settings (the library's _PG_init, ddb_router.c). */
void
router_define_settings(void)
{
	DefineCustomStringVariable("ddb_router.failpoint",
							   "A test hook: the point of a transaction across shard nodes at which the router's backend ends itself.",
							   "after_prepare: every part prepared, nothing decided; after_decision: the commit "
							   "decided, no node's part committed yet. Empty: none.",
							   &failpoint, "", PGC_SUSET, 0, check_failpoint, NULL, NULL);
	DefineCustomStringVariable("ddb_router.loopback_connstr",
							   "The libpq connection string of the router's own database, for the parts of transactions across shard nodes the router keeps.",
							   "Empty: the server's first unix socket directory and its port; dbname and user are added unless given.",
							   &loopback_connstr, "", PGC_SIGHUP, 0, NULL, NULL, NULL);
	MarkGUCPrefixReserved("ddb_router");
}

/*
 * ddb_router.failpoint(point): ends the backend (FATAL) when
 * ddb_router.failpoint names point, as a router that dies there would.
 */
Datum
ddb_router_failpoint(PG_FUNCTION_ARGS)
{
	char	   *point = text_to_cstring(PG_GETARG_TEXT_PP(0));

	if (failpoint && strcmp(failpoint, point) == 0)
		ereport(FATAL,
				(errcode(ERRCODE_ADMIN_SHUTDOWN),
				 errmsg("ddb_router.failpoint \"%s\": the router's backend ends here (a test hook)", point)));
	PG_RETURN_VOID();
}

/*
 * Raises an error with no context: the error context callbacks of the
 * caller (PL/pgSQL's "function ... line ...") are left out, as a node's
 * ddb.execute leaves its own out.  Every PG_TRY and the main loop restore
 * error_context_stack when they catch the error.
 */
static void
raise_without_context(int sqlerrcode, const char *message, const char *detail, const char *hint)
{
	error_context_stack = NULL;
	ereport(ERROR,
			(errcode(sqlerrcode),
			 errmsg_internal("%s", message),
			 detail ? errdetail_internal("%s", detail) : 0,
			 hint ? errhint("%s", hint) : 0));
}

/*
 * ddb_router.raise_error(sqlstate, message, detail, hint): raises an error
 * as a node raised it (its SQLSTATE, message, detail and hint, no
 * context).  A DynamoDB error without its body gets one, as ddb.execute
 * gives it.
 */
Datum
ddb_router_raise_error(PG_FUNCTION_ARGS)
{
	char	   *state;
	char	   *message;
	char	   *detail = PG_ARGISNULL(2) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(2));
	char	   *hint = PG_ARGISNULL(3) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(3));
	int			code;
	const DdbErrorType *type;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("the SQLSTATE and message of ddb_router.raise_error must not be null")));
	state = text_to_cstring(PG_GETARG_TEXT_PP(0));
	message = text_to_cstring(PG_GETARG_TEXT_PP(1));
	if (strlen(state) != 5 || strspn(state, "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ") != 5)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("\"%s\" is no SQLSTATE", state)));
	code = MAKE_SQLSTATE(state[0], state[1], state[2], state[3], state[4]);
	type = ddb_error_type_of_errcode(code);
	if (type && (detail == NULL || detail[0] != '{' || strstr(detail, "\"__type\"") == NULL))
		detail = ddb_error_body(type, message, NULL, NULL);
	raise_without_context(code, message, detail, hint);
	PG_RETURN_VOID();
}

/*
 * ddb_router.raise_unavailable(reason): DynamoDB's retryable
 * ServiceUnavailable for a node (or the router's own database) that could
 * not be reached; PostgreSQL's words stay in the log as the hint.
 */
Datum
ddb_router_raise_unavailable(PG_FUNCTION_ARGS)
{
	raise_without_context(ERRCODE_DDB_SERVICE_UNAVAILABLE, ROUTER_UNREACHABLE_MESSAGE,
						  ddb_error_body(ddb_error_type(DDB_ERROR_SERVICE_UNAVAILABLE),
										 ROUTER_UNREACHABLE_MESSAGE, NULL, NULL),
						  PG_ARGISNULL(0) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(0)));
	PG_RETURN_VOID();
}

/*
 * ddb_router.raise_cancelled(reasons): TransactionCanceledException for a
 * whole request, one reason per action in order, as a node raises it
 * (src/api/transactions.c): the codes in the message, the reasons in the
 * body.
 */
Datum
ddb_router_raise_cancelled(PG_FUNCTION_ARGS)
{
	Jsonb	   *reasons = PG_GETARG_JSONB_P(0);
	JsonbIterator *it;
	JsonbValue	v;
	JsonbValue	value;
	JsonbIteratorToken tok;
	StringInfoData summary;
	char	   *message;
	bool		first = true;

	if (!JsonContainerIsArray(&reasons->root))
		elog(ERROR, "ddb_router: cancellation reasons must be an array");
	initStringInfo(&summary);
	it = JsonbIteratorInit(&reasons->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		JsonbValue *code;

		if (tok != WJB_ELEM)
			continue;
		if (v.type != jbvBinary || !JsonContainerIsObject(v.val.binary.data) ||
			(code = getKeyJsonValueFromContainer(v.val.binary.data, "Code", 4, NULL)) == NULL ||
			code->type != jbvString)
			elog(ERROR, "ddb_router: a cancellation reason must have a Code");
		appendStringInfo(&summary, "%s%.*s", first ? "" : ", ", code->val.string.len, code->val.string.val);
		first = false;
	}
	message = psprintf("Transaction cancelled, please refer cancellation reasons for specific reasons [%s]",
					   summary.data);
	ddb_binary_value(reasons, &value);
	raise_without_context(ERRCODE_DDB_TRANSACTION_CANCELED, message,
						  ddb_error_body(ddb_error_type(DDB_ERROR_TRANSACTION_CANCELED), message,
										 "CancellationReasons", &value),
						  NULL);
	PG_RETURN_VOID();
}
