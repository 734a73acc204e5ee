/*
 * s3_location.c — S3 kept as directories: the settings ddb.export_root
 * (a bucket B is the directory <root>/B, which an administrator makes) and
 * ddb.transfer_program, and the key prefixes that may name directories.
 */
#include "postgres.h"

#include <sys/stat.h>

#include "miscadmin.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/guc.h"

#include "../ddb_errors.h"
#include "exports.h"

/* Where `make install` put ddb-transfer (the Makefile's DDB_BINDIR). */
#ifndef DDB_TRANSFER_PATH
#define DDB_TRANSFER_PATH "ddb-transfer"
#endif

static char *export_root = NULL;
static char *transfer_program_setting = NULL;

/* An absolute path, or empty: ddb.export_root's and ddb.transfer_program's check. */
static bool
check_path(char **newval, void **extra, GucSource source)
{
	if (*newval == NULL || (*newval)[0] == '\0' || is_absolute_path(*newval))
		return true;
	GUC_check_errdetail("It must be an absolute path.");
	return false;
}

/* Defines the settings; see exports.h. */
void
exports_define_settings(void)
{
	DefineCustomStringVariable("ddb.export_root",
							   "The directory that holds the S3 buckets of ExportTableToPointInTime and ImportTable.",
							   "Bucket B is the directory <root>/B, which must exist. Empty: exports and imports are off.",
							   &export_root, "", PGC_SIGHUP, 0, check_path, NULL, NULL);
	DefineCustomStringVariable("ddb.transfer_program",
							   "The ddb-transfer program that writes exports' files and reads imports'.",
							   "Empty: " DDB_TRANSFER_PATH ", where make install put it.",
							   &transfer_program_setting, "", PGC_SIGHUP, 0, check_path, NULL, NULL);
}

/* The program; see exports.h. */
const char *
transfer_program(void)
{
	return transfer_program_setting && transfer_program_setting[0] ? transfer_program_setting : DDB_TRANSFER_PATH;
}

/* Checks a key prefix; see exports.h. */
void
s3_check_prefix(const char *prefix, const char *member)
{
	const char *part = prefix;

	while (part)
	{
		const char *slash = strchr(part, '/');
		size_t		len = slash ? (size_t) (slash - part) : strlen(part);

		if ((len == 1 && part[0] == '.') || (len == 2 && part[0] == '.' && part[1] == '.'))
			ereport(ERROR,
					(errcode(ERRCODE_DDB_VALIDATION),
					 errmsg("1 validation error detected: Value '%s' at '%s' failed to satisfy constraint: "
							"Member must have no part . or .. between slashes (a prefix is a directory here)",
							prefix, member)));
		part = slash ? slash + 1 : NULL;
	}
}

/* The directory of a bucket; see exports.h. */
char *
s3_bucket_dir(const char *bucket)
{
	char	   *dir;
	struct stat st;

	if (export_root == NULL || export_root[0] == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("S3NoSuchBucket: The specified bucket does not exist: %s (no ddb.export_root is set)", bucket)));
	/* the request checked the name against S3's pattern: no slash, no dot at either end */
	if (strchr(bucket, '/') || bucket[0] == '.' || bucket[0] == '\0')
		elog(ERROR, "ddb_model: \"%s\" is no bucket name", bucket);
	dir = psprintf("%s/%s", export_root, bucket);
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("S3NoSuchBucket: The specified bucket does not exist: %s", bucket)));
	return dir;
}

/* A message with the root's path as s3://; see exports.h. */
char *
s3_client_message(const char *message)
{
	StringInfoData out;
	size_t		root_len = export_root ? strlen(export_root) : 0;

	initStringInfo(&out);
	while (*message)
	{
		if (root_len > 0 && strncmp(message, export_root, root_len) == 0 && message[root_len] == '/')
		{
			appendStringInfoString(&out, "s3://");
			message += root_len + 1;
		}
		else
			appendStringInfoChar(&out, *message++);
	}
	return out.data;
}

PG_FUNCTION_INFO_V1(ddb_check_s3_prefix);

/* ddb.check_s3_prefix(prefix, member): s3_check_prefix for SQL. */
Datum
ddb_check_s3_prefix(PG_FUNCTION_ARGS)
{
	s3_check_prefix(text_to_cstring(PG_GETARG_TEXT_PP(0)), text_to_cstring(PG_GETARG_TEXT_PP(1)));
	PG_RETURN_VOID();
}
