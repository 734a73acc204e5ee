/*
 * trigger_guard.c — the extension's row triggers (ddb.gsi_maintain,
 * ddb.stream_capture, ddb.pitr_capture) write index entries, stream
 * records and versions as their owners.  Before any of that they check,
 * by OID, that they fire on the relation of the table their argument
 * names (or a partition of it), and that the columns they read have the
 * extension's types: attached by anyone to any other relation they raise,
 * so no role forges another table's derived rows and no wrongly shaped row
 * reaches C code that trusts the shape.  The result is kept in the table's
 * definition (one check per relation until the catalog or relation
 * changes).  ddb.attach_trigger puts them on a table: only its owner may,
 * and it is the only way a role that is not the extension's owner can,
 * since PUBLIC has no EXECUTE on the trigger functions.
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "catalog/partition.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "../key/ddb_key.h"
#include "table_access.h"
#include "trigger_guard.h"

PG_FUNCTION_INFO_V1(ddb_attach_trigger);

/* True when relid is the table's relation or a partition of it (at any depth). */
static bool
relation_of_table(Relation rel, TableDef *def)
{
	List	   *ancestors;
	bool		found;

	if (RelationGetRelid(rel) == def->relid)
		return true;
	if (!rel->rd_rel->relispartition)
		return false;
	ancestors = get_partition_ancestors(RelationGetRelid(rel));
	found = list_member_oid(ancestors, def->relid);
	list_free(ancestors);
	return found;
}

/* The number of a column of a relation that must have a type, or raises. */
static AttrNumber
typed_column(Relation rel, const char *function, const char *name, Oid type)
{
	TupleDesc	desc = RelationGetDescr(rel);

	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (att->attisdropped || strcmp(NameStr(att->attname), name) != 0)
			continue;
		if (att->atttypid != type)
			break;
		return att->attnum;
	}
	ereport(ERROR,
			(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
			 errmsg("%s cannot run on relation \"%s\": it has no column %s of type %s",
					function, RelationGetRelationName(rel), name, format_type_be(type)),
			 errhint("The extension's triggers run only on the tables it created, as it created them.")));
	return InvalidAttrNumber;	/* not reached */
}

/* Checks a relation of a table and finds its columns (kept in the definition's context). */
static const ItemColumns *
guard_relation(Relation rel, TableDef *def, const char *function)
{
	Oid			key_type = ddb_key_type_oid();
	ItemColumns *columns;
	ListCell   *lc;

	foreach(lc, def->guarded_relations)
	{
		columns = lfirst(lc);
		if (columns->relid == RelationGetRelid(rel))
			return columns;
	}
	if (!relation_of_table(rel, def))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("%s for table %s cannot run on relation \"%s\"",
						function, def->name, RelationGetRelationName(rel)),
				 errdetail("Table %s is the relation %s.%s.", def->name,
						   quote_identifier(def->schema_name), quote_identifier(def->relation_name)),
				 errhint("The extension's triggers run only on the tables it created.")));
	columns = MemoryContextAllocZero(def->cxt, sizeof(ItemColumns));
	columns->relid = RelationGetRelid(rel);
	columns->pk = typed_column(rel, function, "pk", key_type);
	columns->sk = def->keys.range_key ? typed_column(rel, function, "sk", key_type) : InvalidAttrNumber;
	columns->item = typed_column(rel, function, "item", JSONBOID);
	columns->expires_at = typed_column(rel, function, "expires_at", INT8OID);
	columns->item_size = typed_column(rel, function, "item_size", INT4OID);
	def->guarded_relations = lappend(def->guarded_relations, columns);
	return columns;
}

/* See trigger_guard.h. */
TableDef *
trigger_guard_row(FunctionCallInfo fcinfo, const char *function, int nargs, const ItemColumns **columns)
{
	TriggerData *td = (TriggerData *) fcinfo->context;
	TableDef   *def;
	MemoryContext old;

	if (!CALLED_AS_TRIGGER(fcinfo) || !TRIGGER_FIRED_AFTER(td->tg_event) ||
		!TRIGGER_FIRED_FOR_ROW(td->tg_event) || td->tg_trigger->tgnargs != nargs)
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("%s must run AFTER ... FOR EACH ROW with %d argument%s, the first the table's name",
						function, nargs, nargs == 1 ? "" : "s")));
	def = table_def_get(td->tg_trigger->tgargs[0]);
	/* lappend allocates in the current context: the definition's, so that the list lives as long */
	old = MemoryContextSwitchTo(def->cxt);
	*columns = guard_relation(td->tg_relation, def, function);
	MemoryContextSwitchTo(old);
	return def;
}

/* See trigger_guard.h. */
Datum
trigger_guard_column(HeapTuple tuple, TupleDesc desc, AttrNumber att)
{
	bool		isnull;
	Datum		value = heap_getattr(tuple, att, desc, &isnull);

	if (isnull)
		ereport(ERROR,
				(errcode(ERRCODE_NOT_NULL_VIOLATION),
				 errmsg("column \"%s\" of an item row must not be null",
						NameStr(TupleDescAttr(desc, att - 1)->attname))));
	return value;
}

/* The CREATE TRIGGER statement of one of the extension's triggers on a table, or NULL for an unknown name. */
static char *
trigger_statement(const char *trigger, const char *relation, const char *table_name, const char *history)
{
	const char *name = quote_literal_cstr(table_name);

	if (strcmp(trigger, "ddb_gsi_maintain") == 0)
		return psprintf("CREATE TRIGGER ddb_gsi_maintain AFTER INSERT OR UPDATE OR DELETE ON %s "
						"FOR EACH ROW EXECUTE FUNCTION ddb.gsi_maintain(%s)", relation, name);
	if (strcmp(trigger, "ddb_gsi_truncate") == 0)
		return psprintf("CREATE TRIGGER ddb_gsi_truncate AFTER TRUNCATE ON %s "
						"FOR EACH STATEMENT EXECUTE FUNCTION ddb.gsi_truncate(%s)", relation, name);
	if (strcmp(trigger, "ddb_stream") == 0)
		return psprintf("CREATE TRIGGER ddb_stream AFTER INSERT OR UPDATE OR DELETE ON %s "
						"FOR EACH ROW EXECUTE FUNCTION ddb.stream_capture(%s)", relation, name);
	if (strcmp(trigger, "ddb_pitr") == 0)
		return psprintf("CREATE TRIGGER ddb_pitr AFTER INSERT OR UPDATE OR DELETE ON %s "
						"FOR EACH ROW EXECUTE FUNCTION ddb.pitr_capture(%s, %s)", relation, name,
						quote_literal_cstr(history));
	if (strcmp(trigger, "ddb_pitr_truncate") == 0)
		return psprintf("CREATE TRIGGER ddb_pitr_truncate BEFORE TRUNCATE ON %s "
						"FOR EACH STATEMENT EXECUTE FUNCTION ddb.pitr_refuse_truncate(%s)", relation, name);
	return NULL;
}

/*
 * ddb.attach_trigger(table_name, trigger): puts one of the extension's
 * triggers (ddb_gsi_maintain, ddb_gsi_truncate, ddb_stream, ddb_pitr,
 * ddb_pitr_truncate) on a table, unless it has it.  For the table's owner;
 * the trigger is created as the extension's owner, who alone may name the
 * trigger functions.
 */
Datum
ddb_attach_trigger(PG_FUNCTION_ARGS)
{
	char	   *table_name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	char	   *trigger = text_to_cstring(PG_GETARG_TEXT_PP(1));
	Oid			argtypes[2] = {TEXTOID, OIDOID};
	Datum		args[2] = {CStringGetTextDatum(table_name), (Datum) 0};
	char	   *schema_name;
	char	   *relation_name;
	char	   *history;
	char	   *statement;
	Oid			relid;
	OwnerContext saved;

	SPI_connect();
	if (SPI_execute_with_args("SELECT schema_name, relation_name, ddb.pitr_history_name(relation_name) "
							  "FROM ddb.tables WHERE table_name OPERATOR(pg_catalog.=) $1",
							  1, argtypes, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "ddb_model: the table lookup of ddb.attach_trigger failed");
	if (SPI_processed != 1)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("there is no DynamoDB table %s", table_name)));
	schema_name = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
	relation_name = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2);
	history = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3);
	relid = get_relname_relid(relation_name, get_namespace_oid(schema_name, false));
	if (!OidIsValid(relid))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("the relation of DynamoDB table %s is gone", table_name)));
	if (!pg_class_ownercheck(relid, GetUserId()))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be owner of table %s to attach its triggers", table_name)));
	statement = trigger_statement(trigger, quote_qualified_identifier(schema_name, relation_name),
								  table_name, history);
	if (statement == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s is not a trigger of the extension", trigger)));
	argtypes[0] = NAMEOID;
	args[0] = DirectFunctionCall1(namein, CStringGetDatum(trigger));
	args[1] = ObjectIdGetDatum(relid);
	if (SPI_execute_with_args("SELECT FROM pg_catalog.pg_trigger WHERE tgname OPERATOR(pg_catalog.=) $1 "
							  "AND tgrelid OPERATOR(pg_catalog.=) $2",
							  2, argtypes, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "ddb_model: the trigger lookup of ddb.attach_trigger failed");
	if (SPI_processed == 0)
	{
		owner_context_enter(ddb_relation_oid("tables"), &saved);
		if (SPI_execute(statement, false, 0) != SPI_OK_UTILITY)
			elog(ERROR, "ddb_model: could not attach %s to %s", trigger, table_name);
		owner_context_exit(&saved);
	}
	SPI_finish();
	PG_RETURN_VOID();
}
