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
#include "catalog/pg_authid.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/rls.h"
#include "utils/syscache.h"

#include "../ddb_errors.h"
#include "../key/ddb_key.h"
#include "table_access.h"

/* The action being served, for refusals (NULL: a SQL function's own). */
static const char *current_action = NULL;

/* The action a SQL check function names while it runs, copied here: an
 * error raised meanwhile leaves current_action pointing at it, not at the
 * caller's memory, which may be freed by then. */
static char check_action[64];

/* Names the action of a check for the refusals it raises (a copy of it); returns the one it replaces. */
static const char *
set_check_action(const char *action)
{
	strlcpy(check_action, action, sizeof(check_action));
	return table_access_set_action(check_action);
}

/* Names the action being served; see table_access.h. */
const char *
table_access_set_action(const char *action)
{
	const char *previous = current_action;

	current_action = action;
	return previous;
}

/* DynamoDB's words for a refusal; see table_access.h. */
char *
table_access_denied_message(const char *action, const char *table_name, const char *index_name)
{
	char	   *resource = table_name == NULL ? "*" :
		psprintf(DDB_TABLE_ARN_PREFIX "%s%s%s", table_name, index_name ? "/index/" : "", index_name ? index_name : "");

	return psprintf("User: arn:aws:iam::000000000000:user/%s is not authorized to perform: dynamodb:%s "
					"on resource: %s because no identity-based policy allows the dynamodb:%s action",
					GetUserNameFromId(GetUserId(), false), action, resource, action);
}

/* Raises DynamoDB's AccessDeniedException for the current action on a table, or an index of it. */
static void
access_denied(const char *table_name, const char *index_name)
{
	ereport(ERROR,
			(errcode(ERRCODE_DDB_ACCESS_DENIED),
			 errmsg_internal("%s", table_access_denied_message(current_action ? current_action : "ExecuteStatement",
															   table_name, index_name))));
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

/* True when a string partition key (len bytes) is one of leading keys (text[]; a string ending in * is a prefix). */
static bool
leading_string_matches(const char *payload, size_t len, ArrayType *leading_keys)
{
	Datum	   *values;
	bool	   *nulls;
	int			n;

	deconstruct_array(leading_keys, TEXTOID, -1, false, TYPALIGN_INT, &values, &nulls, &n);
	for (int i = 0; i < n; i++)
	{
		text	   *k = DatumGetTextPP(values[i]);
		const char *want = VARDATA_ANY(k);
		size_t		want_len = VARSIZE_ANY_EXHDR(k);
		bool		prefix = want_len > 0 && want[want_len - 1] == '*';

		if (nulls[i])
			continue;
		if (prefix ? (len >= want_len - 1 && memcmp(payload, want, want_len - 1) == 0) :
			(len == want_len && memcmp(payload, want, len) == 0))
			return true;
	}
	return false;
}

/* True when a partition key is one of leading keys (text[]; a string ending in * is a prefix): S keys only. */
static bool
leading_key_matches(struct varlena *key, ArrayType *leading_keys)
{
	if (DDB_KEY_LEN(key) < 1 || DDB_KEY_TAG(key) != KEY_TAG_S)
		return false;
	return leading_string_matches((const char *) DDB_KEY_DATA(key) + 1, DDB_KEY_LEN(key) - 1, leading_keys);
}

/*
 * The leading keys of the grants of ddb.grant_tables that reach the current
 * user for a table (ddb.leading_keys_of), NULL when any partition key will
 * do (no grant limits it, or none reaches the user: row-level security alone
 * decides then); looked up once per definition and user.
 */
static ArrayType *
leading_keys_of(TableDef *def)
{
	static SPIPlanPtr plan = NULL;
	Oid			argtypes[2] = {TEXTOID, OIDOID};
	Datum		args[2] = {CStringGetTextDatum(def->name), ObjectIdGetDatum(GetUserId())};
	OwnerContext saved;
	bool		isnull;
	Datum		keys;

	if (def->leading_keys_user == GetUserId())
		return def->leading_keys;
	/* the grants are the owner's to read: they name other roles' keys */
	owner_context_enter(ddb_relation_oid("table_grants"), &saved);
	SPI_connect();
	if (plan == NULL)
	{
		plan = SPI_prepare("SELECT ddb.leading_keys_of($1, $2)", 2, argtypes);
		if (plan == NULL || SPI_keepplan(plan) != 0)
			elog(ERROR, "ddb_model: could not prepare the leading keys lookup");
	}
	if (SPI_execute_plan(plan, args, NULL, true, 1) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "ddb_model: the leading keys lookup failed");
	keys = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	def->leading_keys = NULL;
	if (!isnull)
	{
		ArrayType  *found = DatumGetArrayTypeP(keys);

		def->leading_keys = MemoryContextAlloc(def->cxt, VARSIZE(found));
		memcpy(def->leading_keys, found, VARSIZE(found));
	}
	SPI_finish();
	owner_context_exit(&saved);
	def->leading_keys_user = GetUserId();
	return def->leading_keys;
}

/* Checks a partition key against the current user's leading keys; see table_access.h. */
void
table_access_check_key(TableDef *def, Datum pk)
{
	ArrayType  *keys;

	/* only a table with row-level security on, for a user it applies to, has leading keys */
	if (check_enable_rls(def->relid, InvalidOid, true) != RLS_ENABLED)
		return;
	keys = leading_keys_of(def);
	if (keys && !leading_key_matches(PG_DETOAST_DATUM_PACKED(pk), keys))
		access_denied(def->name, NULL);
}

PG_FUNCTION_INFO_V1(ddb_stream_record_visible);

/* What ddb.stream_record_visible found for a table, kept for the rest of the statement. */
typedef struct StreamVisibility
{
	Oid			user;
	char	   *table_name;
	bool		any_key;		/* no leading keys apply */
	char	   *hash_key;
	ArrayType  *leading_keys;
} StreamVisibility;

/*
 * ddb.stream_record_visible(table_name, keys): the policy of
 * ddb.stream_records for leading keys: true unless the current user's
 * grants limit it to leading keys on the table (row-level security applies
 * to it there) and the record's partition key (keys: DynamoDB JSON) is
 * none of them.  Whether the user may read the table at all is the
 * policy's other test.
 */
Datum
ddb_stream_record_visible(PG_FUNCTION_ARGS)
{
	StreamVisibility *v = fcinfo->flinfo->fn_extra;
	text	   *name = PG_GETARG_TEXT_PP(0);
	Jsonb	   *keys;
	JsonbValue *attribute;
	JsonbValue *string;

	/* the same table as the last record's, for the same user: what was found holds */
	if (v == NULL || v->user != GetUserId() || strlen(v->table_name) != VARSIZE_ANY_EXHDR(name)
		|| memcmp(v->table_name, VARDATA_ANY(name), VARSIZE_ANY_EXHDR(name)) != 0)
	{
		MemoryContext caller = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);
		TableDef   *def;

		if (v == NULL)
			v = fcinfo->flinfo->fn_extra = palloc0(sizeof(StreamVisibility));
		v->user = GetUserId();
		v->table_name = text_to_cstring(name);
		MemoryContextSwitchTo(caller);
		def = table_def_find(v->table_name);
		v->any_key = def == NULL ? false : check_enable_rls(def->relid, InvalidOid, true) != RLS_ENABLED;
		v->leading_keys = NULL;
		if (def != NULL && !v->any_key)
		{
			ArrayType  *found = leading_keys_of(def);

			v->any_key = found == NULL;
			if (found)
			{
				v->leading_keys = MemoryContextAlloc(fcinfo->flinfo->fn_mcxt, VARSIZE(found));
				memcpy(v->leading_keys, found, VARSIZE(found));
				v->hash_key = MemoryContextStrdup(fcinfo->flinfo->fn_mcxt, def->keys.hash_key);
			}
		}
		if (def == NULL)
			PG_RETURN_BOOL(false);
	}
	if (v->any_key)
		PG_RETURN_BOOL(true);
	if (v->leading_keys == NULL)
		PG_RETURN_BOOL(false);
	keys = PG_GETARG_JSONB_P(1);
	if (!JB_ROOT_IS_OBJECT(keys) || JB_ROOT_IS_SCALAR(keys))
		PG_RETURN_BOOL(false);
	attribute = getKeyJsonValueFromContainer(&keys->root, v->hash_key, strlen(v->hash_key), NULL);
	if (attribute == NULL || attribute->type != jbvBinary || !JsonContainerIsObject(attribute->val.binary.data))
		PG_RETURN_BOOL(false);
	string = getKeyJsonValueFromContainer(attribute->val.binary.data, "S", 1, NULL);
	PG_RETURN_BOOL(string != NULL && string->type == jbvString &&
				   leading_string_matches(string->val.string.val, string->val.string.len, v->leading_keys));
}

PG_FUNCTION_INFO_V1(ddb_leading_key_matches);

/* ddb.leading_key_matches(key, leading_keys): the row-level security policies' test. */
Datum
ddb_leading_key_matches(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(leading_key_matches(PG_DETOAST_DATUM_PACKED(PG_GETARG_DATUM(0)), PG_GETARG_ARRAYTYPE_P(1)));
}

/* The owner of a relation. */
static Oid
rel_owner(Oid relid)
{
	HeapTuple	tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	Oid			owner;

	if (!HeapTupleIsValid(tuple))
		elog(ERROR, "ddb_model: relation %u is gone", relid);
	owner = ((Form_pg_class) GETSTRUCT(tuple))->relowner;
	ReleaseSysCache(tuple);
	return owner;
}

/* Acts as the owner of a relation; see table_access.h. */
void
owner_context_enter(Oid relid, OwnerContext *saved)
{
	Oid			owner = rel_owner(relid);

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

/* Checks a table operation's access to a table; see table_access.h. */
void
table_access_check_operation(const char *table_name, const char *action, const char *access)
{
	const char *outer = set_check_action(action);
	TableDef   *def;

	if (strcmp(access, "create") == 0 || strcmp(access, "import") == 0)
	{
		/* what CreateTable writes and reads as its caller: its row, its settings, the grants it applies */
		if (!has_privileges(ddb_relation_oid("tables"), ACL_INSERT | ACL_UPDATE) ||
			!has_privileges(ddb_relation_oid("table_grants"), ACL_SELECT))
			access_denied(table_name, NULL);
		/* an import reads files of the server's, other roles' exports among them, as COPY FROM a file does */
		if (strcmp(access, "import") == 0 && !has_privs_of_role(GetUserId(), ROLE_PG_READ_SERVER_FILES))
			access_denied(table_name, NULL);
		table_access_set_action(outer);
		return;
	}
	def = table_def_get_any(table_name);
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
}

/*
 * ddb.check_table_access(table_name, action, access):
 * table_access_check_operation for the table operations in SQL (sql/api.sql,
 * sql/streams.sql, ...).
 */
Datum
ddb_check_table_access(PG_FUNCTION_ARGS)
{
	table_access_check_operation(text_to_cstring(PG_GETARG_TEXT_PP(0)), text_to_cstring(PG_GETARG_TEXT_PP(1)),
								 text_to_cstring(PG_GETARG_TEXT_PP(2)));
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

PG_FUNCTION_INFO_V1(ddb_forget_table);

/* Runs a statement on the catalog as its owner, with the table's name as $1 (SPI connected). */
static void
write_catalog_as_owner(const char *sql, Datum table_name)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		args[1] = {table_name};
	OwnerContext saved;
	int			rc;

	owner_context_enter(ddb_relation_oid("tables"), &saved);
	rc = SPI_execute_with_args(sql, 1, argtypes, args, NULL, false, 0);
	owner_context_exit(&saved);
	if (rc < 0)
		elog(ERROR, "ddb_model: could not run \"%s\"", sql);
}

/*
 * ddb.forget_table(table_name): the catalog rows of a table, deleted as the
 * catalog's owner for the owner of its relation (ddb.delete_table drops the
 * relation next), so that a table's owner needs no DELETE on the catalog.
 * The rows of a table whose relation is gone are the catalog owner's alone
 * to delete: no role can prove it owned it.
 */
Datum
ddb_forget_table(PG_FUNCTION_ARGS)
{
	Datum		name = PG_GETARG_DATUM(0);
	Oid			argtypes[1] = {TEXTOID};
	Datum		args[1] = {name};

	SPI_connect();
	if (SPI_execute_with_args("SELECT schema_name, relation_name FROM ddb.tables WHERE table_name OPERATOR(pg_catalog.=) $1",
							  1, argtypes, args, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "ddb_model: could not read the catalog of a table");
	if (SPI_processed == 1)
	{
		char	   *schema = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
		char	   *relation = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2);
		Oid			namespace = get_namespace_oid(schema, true);
		Oid			relid = OidIsValid(namespace) ? get_relname_relid(relation, namespace) : InvalidOid;

		if (!pg_class_ownercheck(OidIsValid(relid) ? relid : ddb_relation_oid("tables"), GetUserId()))
		{
			const char *outer = set_check_action("DeleteTable");

			access_denied(TextDatumGetCString(name), NULL);
			table_access_set_action(outer);
		}
		write_catalog_as_owner("DELETE FROM ddb.stream_records WHERE table_name OPERATOR(pg_catalog.=) $1", name);
		write_catalog_as_owner("DELETE FROM ddb.tables WHERE table_name OPERATOR(pg_catalog.=) $1", name);
	}
	SPI_finish();
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(ddb_check_backup_access);

/*
 * ddb.check_backup_access(relation, resource, action, access): the backup
 * operations' check (sql/backups.sql): 'read' takes SELECT on the backup's
 * relation, 'own' its ownership; a refusal names resource, the backup's
 * ARN after the table ARN's prefix (<table>/backup/<id>).
 */
Datum
ddb_check_backup_access(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	char	   *resource = text_to_cstring(PG_GETARG_TEXT_PP(1));
	const char *outer = set_check_action(text_to_cstring(PG_GETARG_TEXT_PP(2)));
	char	   *access = text_to_cstring(PG_GETARG_TEXT_PP(3));
	bool		allowed;

	if (strcmp(access, "read") == 0)
		allowed = has_privileges(relid, ACL_SELECT);
	else if (strcmp(access, "own") == 0)
		allowed = pg_class_ownercheck(relid, GetUserId());
	else
		elog(ERROR, "ddb_model: unknown backup access \"%s\"", access);
	if (!allowed)
		access_denied(resource, NULL);
	table_access_set_action(outer);
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(ddb_write_continuous_backups);
PG_FUNCTION_INFO_V1(ddb_trim_continuous_backups);

/* The table's relation by the catalog, refused (AccessDeniedException) unless the current user owns it (SPI connected). */
static Oid
owned_table_relation(Datum table_name, const char *action)
{
	const char *outer = set_check_action(action);
	Oid			argtypes[1] = {TEXTOID};
	Datum		args[1] = {table_name};
	bool		isnull = true;
	Oid			relid = InvalidOid;

	/* from the catalog, not the table's definition: DeleteTable has dropped its indexes by now */
	if (SPI_execute_with_args("SELECT pg_catalog.to_regclass(pg_catalog.format('%I.%I', schema_name, relation_name))::pg_catalog.oid "
							  "FROM ddb.tables WHERE table_name OPERATOR(pg_catalog.=) $1", 1, argtypes, args, NULL, true, 1)
		!= SPI_OK_SELECT)
		elog(ERROR, "ddb_model: could not look up a table");
	if (SPI_processed == 1)
		relid = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	if (isnull || !pg_class_ownercheck(relid, GetUserId()))
		access_denied(TextDatumGetCString(table_name), NULL);
	table_access_set_action(outer);
	return relid;
}

/* Runs a statement on ddb.continuous_backups as its owner with nargs arguments; its first value, or isnull (SPI connected). */
static Datum
write_backups_as_owner(const char *sql, int nargs, Oid *argtypes, Datum *args, bool *isnull)
{
	OwnerContext saved;
	int			rc;

	owner_context_enter(ddb_relation_oid("continuous_backups"), &saved);
	rc = SPI_execute_with_args(sql, nargs, argtypes, args, NULL, false, 0);
	owner_context_exit(&saved);
	if (rc < 0)
		elog(ERROR, "ddb_model: could not write the point-in-time recovery of a table");
	*isnull = true;
	if (SPI_processed != 1 || SPI_tuptable == NULL)
		return (Datum) 0;
	return SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, isnull);
}

/*
 * ddb.write_continuous_backups(table_name, recovery_period_days):
 * UpdateContinuousBackups' (and DeleteTable's) write of the catalog
 * ddb.continuous_backups, which the table's owner may make: the check as
 * the caller, the write as the catalog's owner, of what it computes itself.
 * A new row's history relation is the table's own (ddb.pitr_history_name,
 * beside it), which must be there, owned by the table's owner, and its
 * enabled_at is now (returned: the time of the first versions); a row
 * already there takes the period alone (returning its enabled_at); a NULL
 * period deletes the row (returning NULL).
 */
Datum
ddb_write_continuous_backups(PG_FUNCTION_ARGS)
{
	Oid			argtypes[3] = {TEXTOID, INT4OID, NAMEOID};
	Datum		args[3];
	Oid			relid;
	Oid			history;
	char	   *history_name;
	Datum		enabled_at;
	bool		isnull;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("the table of ddb.write_continuous_backups must not be null")));
	args[0] = PG_GETARG_DATUM(0);
	SPI_connect();
	relid = owned_table_relation(args[0], "UpdateContinuousBackups");
	if (PG_ARGISNULL(1))
	{
		write_backups_as_owner("DELETE FROM ddb.continuous_backups WHERE table_name OPERATOR(pg_catalog.=) $1",
							   1, argtypes, args, &isnull);
		SPI_finish();
		PG_RETURN_NULL();
	}
	args[1] = PG_GETARG_DATUM(1);
	/* the history relation: the table's own, as ddb.set_continuous_backups made it */
	args[2] = DirectFunctionCall1(namein, CStringGetDatum(get_rel_name(relid)));
	if (SPI_execute_with_args("SELECT ddb.pitr_history_name($1)", 1, &argtypes[2], &args[2], NULL, true, 1) != SPI_OK_SELECT
		|| SPI_processed != 1)
		elog(ERROR, "ddb_model: could not name a history relation");
	history_name = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
	history = get_relname_relid(history_name, get_rel_namespace(relid));
	if (!OidIsValid(history) || get_rel_relkind(history) != RELKIND_RELATION || rel_owner(history) != rel_owner(relid))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the point-in-time recovery history of table %s must be the table's own relation %s",
						TextDatumGetCString(args[0]),
						quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)), history_name))));
	args[2] = DirectFunctionCall1(namein, CStringGetDatum(history_name));
	/* the period's bounds are the catalog's CHECK */
	enabled_at = write_backups_as_owner("INSERT INTO ddb.continuous_backups AS c (table_name, recovery_period_days, history_relation, enabled_at) "
										"VALUES ($1, $2, $3, pg_catalog.clock_timestamp()) "
										"ON CONFLICT (table_name) DO UPDATE SET recovery_period_days = EXCLUDED.recovery_period_days "
										"RETURNING c.enabled_at",
										3, argtypes, args, &isnull);
	SPI_finish();
	if (isnull)
		elog(ERROR, "ddb_model: could not write the point-in-time recovery of a table");
	PG_RETURN_DATUM(enabled_at);
}

/*
 * ddb.trim_continuous_backups(table_name, as_of): ddb.trim_pitr_history's
 * record of how far it collapsed a table's history: to the start of its
 * window as of a moment no later than now (ddb.pitr_window), which it
 * computes, for the table's owner; history_from never goes back.
 */
Datum
ddb_trim_continuous_backups(PG_FUNCTION_ARGS)
{
	Oid			argtypes[2] = {TEXTOID, TIMESTAMPTZOID};
	Datum		args[2] = {PG_GETARG_DATUM(0), PG_GETARG_DATUM(1)};
	bool		isnull;

	SPI_connect();
	owned_table_relation(args[0], "UpdateContinuousBackups");
	write_backups_as_owner("UPDATE ddb.continuous_backups c SET history_from = w.earliest "
						   "FROM ddb.pitr_window((SELECT b FROM ddb.continuous_backups b WHERE b.table_name OPERATOR(pg_catalog.=) $1), "
						   "LEAST($2, pg_catalog.clock_timestamp())) w "
						   "WHERE c.table_name OPERATOR(pg_catalog.=) $1 "
						   "AND (c.history_from IS NULL OR c.history_from OPERATOR(pg_catalog.<) w.earliest)",
						   2, argtypes, args, &isnull);
	SPI_finish();
	PG_RETURN_VOID();
}
