/*
 * table_access.c — who may touch a table (docs/security.md).
 *
 * PostgreSQL's privileges decide: reading a table takes SELECT on its
 * relation (and on the index's, for an index), writing takes SELECT,
 * INSERT, UPDATE and DELETE; ddb.grant_tables gives them to the role of an
 * access key, and row-level security policies for its leading keys.  These
 * checks run before any row is touched, so that a refusal is DynamoDB's
 * AccessDeniedException naming the action and the table; the executor
 * checks the same privileges and policies again on every statement.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rls.h"
#include "utils/syscache.h"

#include "../ddb_errors.h"
#include "../key/ddb_key.h"
#include "table_access.h"

/* The action being served, for refusals (NULL: a SQL function's own). */
static const char *current_action = NULL;

/* Names the action being served; see table_access.h. */
const char *
table_access_set_action(const char *action)
{
	const char *previous = current_action;

	current_action = action;
	return previous;
}

/* Raises DynamoDB's AccessDeniedException for the current action on a table, or an index of it. */
static void
access_denied(const char *table_name, const char *index_name)
{
	const char *action = current_action ? current_action : "ExecuteStatement";
	char	   *resource = psprintf(DDB_TABLE_ARN_PREFIX "%s%s%s", table_name,
									index_name ? "/index/" : "", index_name ? index_name : "");

	ereport(ERROR,
			(errcode(ERRCODE_DDB_ACCESS_DENIED),
			 errmsg("User: arn:aws:iam::000000000000:user/%s is not authorized to perform: dynamodb:%s "
					"on resource: %s because no identity-based policy allows the dynamodb:%s action",
					GetUserNameFromId(GetUserId(), false), action, resource, action)));
}

/* True when the current user holds every privilege of mode on a relation (pg_class_aclcheck asks for any). */
static bool
has_privileges(Oid relid, AclMode mode)
{
	return pg_class_aclmask(relid, GetUserId(), mode, ACLMASK_ALL) == mode;
}

/* Checks the privileges an access takes on the table and its index; see table_access.h. */
void
table_access_check(TableDef *def, IndexDef *index, TableAccess access)
{
	AclMode		mode = access == TABLE_READ ? ACL_SELECT : ACL_SELECT | ACL_INSERT | ACL_UPDATE | ACL_DELETE;

	if (!has_privileges(def->relid, mode) || (index && !has_privileges(index->relid, ACL_SELECT)))
		access_denied(def->name, index ? index->name : NULL);
}

/*
 * Whether the leading keys of the grants that reach the current user allow
 * a partition key (ddb.leading_keys_allow): true, false, or NULL when no
 * grant of ddb.grant_tables reaches it (row-level security alone decides).
 */
static bool
leading_keys_allow(TableDef *def, Datum pk)
{
	static SPIPlanPtr plan = NULL;
	Oid			argtypes[3] = {TEXTOID, ddb_key_type_oid(), OIDOID};
	Datum		args[3] = {CStringGetTextDatum(def->name), pk, ObjectIdGetDatum(GetUserId())};
	OwnerContext saved;
	bool		isnull;
	bool		allowed;

	/* the grants are the owner's to read: they name other roles' keys */
	owner_context_enter(ddb_relation_oid("table_grants"), &saved);
	SPI_connect();
	if (plan == NULL)
	{
		plan = SPI_prepare("SELECT ddb.leading_keys_allow($1, $2, $3)", 3, argtypes);
		if (plan == NULL || SPI_keepplan(plan) != 0)
			elog(ERROR, "ddb_model: could not prepare the leading keys check");
	}
	if (SPI_execute_plan(plan, args, NULL, true, 1) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "ddb_model: the leading keys check failed");
	allowed = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	SPI_finish();
	owner_context_exit(&saved);
	return isnull || allowed;
}

/* Checks a partition key against the current user's leading keys; see table_access.h. */
void
table_access_check_key(TableDef *def, Datum pk)
{
	/* only a table with row-level security on, for a user it applies to, has leading keys */
	if (check_enable_rls(def->relid, InvalidOid, true) != RLS_ENABLED)
		return;
	if (!leading_keys_allow(def, pk))
		access_denied(def->name, NULL);
}

/* Acts as the owner of a relation; see table_access.h. */
void
owner_context_enter(Oid relid, OwnerContext *saved)
{
	HeapTuple	tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	Oid			owner;

	if (!HeapTupleIsValid(tuple))
		elog(ERROR, "ddb_model: relation %u has gone", relid);
	owner = ((Form_pg_class) GETSTRUCT(tuple))->relowner;
	ReleaseSysCache(tuple);
	GetUserIdAndSecContext(&saved->userid, &saved->sec_context);
	SetUserIdAndSecContext(owner, saved->sec_context | SECURITY_LOCAL_USERID_CHANGE | SECURITY_NOFORCE_RLS);
}

/* Goes back to the user an owner context replaced. */
void
owner_context_exit(const OwnerContext *saved)
{
	SetUserIdAndSecContext(saved->userid, saved->sec_context);
}

/* The OID of a relation of schema ddb; see table_access.h. */
Oid
ddb_relation_oid(const char *name)
{
	/* looked up each time: DROP and CREATE EXTENSION in one session give it a new OID */
	Oid			relid = get_relname_relid(name, get_namespace_oid("ddb", false));

	if (!OidIsValid(relid))
		elog(ERROR, "ddb_model: relation ddb.%s is missing", name);
	return relid;
}

PG_FUNCTION_INFO_V1(ddb_check_table_access);
PG_FUNCTION_INFO_V1(ddb_set_table_tags);

/*
 * ddb.check_table_access(table_name, action, access): the table operations'
 * check (sql/api.sql, sql/streams.sql).  access is 'read', 'write', 'own'
 * for the operations that change a table's definition (its owner's), or
 * 'create' for a table to be (whoever may write the catalog).
 */
Datum
ddb_check_table_access(PG_FUNCTION_ARGS)
{
	char	   *table_name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	char	   *access = text_to_cstring(PG_GETARG_TEXT_PP(2));
	const char *outer = table_access_set_action(text_to_cstring(PG_GETARG_TEXT_PP(1)));
	TableDef   *def;

	if (strcmp(access, "create") == 0)
	{
		if (!has_privileges(ddb_relation_oid("tables"), ACL_INSERT))
			access_denied(table_name, NULL);
		table_access_set_action(outer);
		PG_RETURN_VOID();
	}
	def = table_def_get(table_name);
	if (strcmp(access, "read") == 0)
		table_access_check(def, NULL, TABLE_READ);
	else if (strcmp(access, "write") == 0)
		table_access_check(def, NULL, TABLE_WRITE);
	else if (strcmp(access, "own") == 0)
	{
		if (!pg_class_ownercheck(def->relid, GetUserId()))
			access_denied(def->name, NULL);
	}
	else
		elog(ERROR, "ddb_model: unknown table access \"%s\"", access);
	table_access_set_action(outer);
	PG_RETURN_VOID();
}

/*
 * ddb.set_table_tags(table_name, tags): TagResource's and UntagResource's
 * write of the catalog, which whoever may write the table may make: the
 * check as the caller, the update as the catalog's owner.
 */
Datum
ddb_set_table_tags(PG_FUNCTION_ARGS)
{
	TableDef   *def = table_def_get(text_to_cstring(PG_GETARG_TEXT_PP(0)));
	Oid			argtypes[2] = {TEXTOID, JSONBOID};
	Datum		args[2] = {PG_GETARG_DATUM(0), PG_GETARG_DATUM(1)};
	OwnerContext saved;

	table_access_check(def, NULL, TABLE_WRITE);
	owner_context_enter(ddb_relation_oid("tables"), &saved);
	SPI_connect();
	if (SPI_execute_with_args("UPDATE ddb.tables SET tags = $2 WHERE table_name OPERATOR(pg_catalog.=) $1",
							  2, argtypes, args, NULL, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "ddb_model: could not set the tags of table %s", def->name);
	SPI_finish();
	owner_context_exit(&saved);
	PG_RETURN_VOID();
}
