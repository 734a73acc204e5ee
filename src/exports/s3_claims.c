/*
 * s3_claims.c — who may write and read where in the server's buckets
 * (docs/transfer.md, docs/security.md).  The first role that exports to a
 * bucket's key prefix claims it (ddb.s3_claims): another role's export may
 * not write there, nor anywhere above or below it, and another role's
 * import may not read any key under it; the roles whose privileges the
 * claiming role has share its claims.  Keys no role claimed (files an
 * administrator put there) are read by whoever may import.
 */
#include "postgres.h"

#include "catalog/pg_authid.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"

#include "../ddb_errors.h"
#include "../table/table_access.h"
#include "exports.h"

PG_FUNCTION_INFO_V1(ddb_claim_s3_prefix);
PG_FUNCTION_INFO_V1(ddb_check_s3_source);

/* A claim overlapping an export's directory ($2: the prefix, no slash at its end; '' for the bucket's root). */
#define EXPORT_OVERLAP "(c.prefix OPERATOR(pg_catalog.=) '' OR $2 OPERATOR(pg_catalog.=) '' " \
	"OR pg_catalog.starts_with($2 OPERATOR(pg_catalog.||) '/', c.prefix OPERATOR(pg_catalog.||) '/') " \
	"OR pg_catalog.starts_with(c.prefix OPERATOR(pg_catalog.||) '/', $2 OPERATOR(pg_catalog.||) '/'))"

/* A claim holding keys an import's key prefix ($2, S3's: any string) reads. */
#define IMPORT_OVERLAP "(c.prefix OPERATOR(pg_catalog.=) '' " \
	"OR pg_catalog.starts_with(c.prefix OPERATOR(pg_catalog.||) '/', $2) " \
	"OR pg_catalog.starts_with($2, c.prefix OPERATOR(pg_catalog.||) '/'))"

/* Raises DynamoDB's AccessDeniedException for an S3 action on a bucket's key prefix, saying why. */
static void
s3_access_denied(const char *action, const char *bucket, const char *prefix, const char *reason)
{
	ereport(ERROR,
			(errcode(ERRCODE_DDB_ACCESS_DENIED),
			 errmsg("User: arn:aws:iam::000000000000:user/%s is not authorized to perform: s3:%s on resource: "
					"arn:aws:s3:::%s/%s because %s (docs/transfer.md)",
					GetUserNameFromId(GetUserId(), false), action, bucket, prefix, reason)));
}

/*
 * True when a claim that overlaps (overlap, of $1: the bucket and $2: the
 * prefix) is another's: of a role whose privileges the caller ($3) lacks.
 * As the catalog's owner, SPI connected.
 */
static bool
claimed_by_another(const char *overlap, Datum bucket, Datum prefix, Oid caller)
{
	Oid			argtypes[3] = {TEXTOID, TEXTOID, OIDOID};
	Datum		args[3] = {bucket, prefix, ObjectIdGetDatum(caller)};
	char	   *sql = psprintf("SELECT FROM ddb.s3_claims c WHERE c.bucket OPERATOR(pg_catalog.=) $1 AND %s "
							   "AND NOT pg_catalog.pg_has_role($3, c.role_id::pg_catalog.oid, 'USAGE')", overlap);

	if (SPI_execute_with_args(sql, 3, argtypes, args, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "ddb_model: could not read the claims of the buckets");
	return SPI_processed > 0;
}

/* Claims an export's directory for the current role; see exports.h. */
bool
s3_claim_prefix(const char *bucket, const char *prefix)
{
	char	   *dir = pstrdup(prefix);
	size_t		len = strlen(dir);
	Oid			argtypes[3] = {TEXTOID, TEXTOID, OIDOID};
	Datum		args[3];
	OwnerContext saved;
	bool		refused;

	while (len > 0 && dir[len - 1] == '/')
		dir[--len] = '\0';
	args[0] = CStringGetTextDatum(bucket);
	args[1] = CStringGetTextDatum(dir);
	args[2] = ObjectIdGetDatum(GetUserId());
	SPI_connect();
	owner_context_enter(ddb_relation_oid("s3_claims"), &saved);
	if (SPI_execute("LOCK TABLE ddb.s3_claims IN SHARE ROW EXCLUSIVE MODE", false, 0) != SPI_OK_UTILITY)
		elog(ERROR, "ddb_model: could not lock the claims of the buckets");
	refused = claimed_by_another(EXPORT_OVERLAP, args[0], args[1], DatumGetObjectId(args[2]));
	if (!refused &&
		SPI_execute_with_args("INSERT INTO ddb.s3_claims (bucket, prefix, role_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
							  3, argtypes, args, NULL, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "ddb_model: could not claim a bucket's prefix");
	owner_context_exit(&saved);
	SPI_finish();
	return !refused;
}

/* True when no key an import reads is under another role's claim; see exports.h. */
bool
s3_source_readable(const char *bucket, const char *key_prefix)
{
	Oid			caller = GetUserId();
	OwnerContext saved;
	bool		refused;

	SPI_connect();
	owner_context_enter(ddb_relation_oid("s3_claims"), &saved);
	refused = claimed_by_another(IMPORT_OVERLAP, CStringGetTextDatum(bucket), CStringGetTextDatum(key_prefix), caller);
	owner_context_exit(&saved);
	SPI_finish();
	return !refused;
}

/*
 * ddb.claim_s3_prefix(table_name, bucket, prefix): an export's claim of
 * its directory, for the owner of the table it exports (the export's
 * check): AccessDeniedException when another role's claim overlaps it.
 * Claims are taken one at a time.
 */
Datum
ddb_claim_s3_prefix(PG_FUNCTION_ARGS)
{
	char	   *bucket = text_to_cstring(PG_GETARG_TEXT_PP(1));
	char	   *prefix = text_to_cstring(PG_GETARG_TEXT_PP(2));

	table_access_check_operation(text_to_cstring(PG_GETARG_TEXT_PP(0)), "ExportTableToPointInTime", "own");
	if (!s3_claim_prefix(bucket, prefix))
		s3_access_denied("PutObject", bucket, prefix, "another role's exports are there");
	PG_RETURN_VOID();
}

/*
 * ddb.check_s3_source(bucket, key_prefix): an import's check that no key
 * it reads (every key beginning with key_prefix) is under another role's
 * claim: AccessDeniedException when one is.
 */
Datum
ddb_check_s3_source(PG_FUNCTION_ARGS)
{
	char	   *bucket = text_to_cstring(PG_GETARG_TEXT_PP(0));
	char	   *key_prefix = text_to_cstring(PG_GETARG_TEXT_PP(1));

	/* an importer's question (ImportTable's check came first): no other role learns where claims are */
	if (!has_privs_of_role(GetUserId(), ROLE_PG_READ_SERVER_FILES))
		s3_access_denied("GetObject", bucket, key_prefix, "it may not import");
	if (!s3_source_readable(bucket, key_prefix))
		s3_access_denied("GetObject", bucket, key_prefix, "another role's exports are there");
	PG_RETURN_VOID();
}
