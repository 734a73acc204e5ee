/*
 * gsi_trigger.c — ddb.gsi_maintain, the AFTER ROW trigger that keeps every
 * global secondary index of a table in step with its items.
 *
 * For each index: the old item's entry (if it had the index keys) is
 * deleted and the new item's entry (if it has them) inserted with the
 * projected attributes.  Indexes are sparse: an item without an index key
 * attribute is not in the index; an index key attribute of the wrong type
 * rejects the write, as DynamoDB does.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/rel.h"

#include "../ddb_errors.h"
#include "../item/item_codec.h"
#include "../key/ddb_key.h"
#include "gsi.h"
#include "item_store.h"
#include "table_access.h"
#include "table_def.h"
#include "trigger_guard.h"

PG_FUNCTION_INFO_V1(ddb_gsi_maintain);
PG_FUNCTION_INFO_V1(ddb_index_entry);

GsiWriteObserver gsi_write_observer = NULL;


/* One side (old or new) of a row change. */
typedef struct RowImage
{
	bool		present;
	Jsonb	   *item;
	Datum		pk;
	Datum		sk;
	bool		expires_null;
	int64		expires_at;
	int32		item_size;
} RowImage;

/* Reads the columns of a base-table row (where the guard found them). */
static RowImage
row_image(HeapTuple tuple, TupleDesc desc, const ItemColumns *columns)
{
	RowImage	image = {0};

	if (tuple == NULL)
		return image;
	image.present = true;
	image.pk = trigger_guard_column(tuple, desc, columns->pk);
	image.sk = columns->sk ? trigger_guard_column(tuple, desc, columns->sk) : (Datum) 0;
	image.item = DatumGetJsonbP(trigger_guard_column(tuple, desc, columns->item));
	image.expires_at = DatumGetInt64(heap_getattr(tuple, columns->expires_at, desc, &image.expires_null));
	image.item_size = DatumGetInt32(trigger_guard_column(tuple, desc, columns->item_size));
	return image;
}

/*
 * The key of one side of an index (its partition key, or with range its sort
 * key) for an item: a single key, or the tuple of a multi-attribute side.
 * Every attribute the item has must have its type; false when it lacks one.
 */
static bool
gsi_side_key(IndexDef *index, Jsonb *item, bool range, Datum *out)
{
	int			n = range ? index->keys.nrange : index->keys.nhash;
	char	  **names = range ? index->keys.range_keys : index->keys.hash_keys;
	char	   *types = range ? index->keys.range_types : index->keys.hash_types;
	Datum		elements[KEY_SCHEMA_MAX_ATTRIBUTES];
	bool		complete = true;
	KeyTupleBuilder tuple;

	for (int i = 0; i < n; i++)
	{
		JsonbValue	v;
		KeyRole		role = {names[i], index->name, range};

		if (!item_get_attribute(&item->root, names[i], &v))
		{
			complete = false;
			continue;
		}
		if (!item_value_to_key(&v, types[i], &role, &elements[i]))
			ddb_validation_error("One or more parameter values were invalid: Type mismatch for Index Key %s Expected: %c Actual: %s IndexName: %s",
								 names[i], types[i], item_type_name(item_value_type(&v)), index->name);
	}
	if (!complete)
		return false;
	if (n == 1)
	{
		*out = elements[0];
		return true;
	}
	key_tuple_begin(&tuple);
	for (int i = 0; i < n; i++)
		key_tuple_add(&tuple, elements[i], false);
	*out = key_tuple_datum(&tuple, false);
	return true;
}

/* The index keys of an item; false when the item is not in the index. */
static bool
gsi_item_keys(IndexDef *index, Jsonb *item, Datum *gpk, Datum *gsk)
{
	bool		has_hash;
	bool		has_range;

	*gpk = *gsk = (Datum) 0;
	/* both sides are checked, so that a wrongly typed attribute fails however sparse the item */
	has_hash = gsi_side_key(index, item, false, gpk);
	has_range = index->keys.nrange == 0 || gsi_side_key(index, item, true, gsk);
	return has_hash && has_range;
}

/* True when name (len bytes) is one of n names. */
static bool
name_in(char **names, int n, const char *name, int len)
{
	for (int i = 0; i < n; i++)
		if (names[i] && (int) strlen(names[i]) == len && memcmp(names[i], name, len) == 0)
			return true;
	return false;
}

/* True when an attribute name is projected into the index: a key of the table or index, or included. */
static bool
is_projected(TableDef *def, IndexDef *index, const char *name, int len)
{
	return name_in(def->keys.hash_keys, def->keys.nhash, name, len) ||
		name_in(def->keys.range_keys, def->keys.nrange, name, len) ||
		name_in(index->keys.hash_keys, index->keys.nhash, name, len) ||
		name_in(index->keys.range_keys, index->keys.nrange, name, len) ||
		name_in(index->include, index->n_include, name, len);
}

/* True when an index projects an attribute (every attribute, for ALL). */
bool
gsi_projects(TableDef *def, IndexDef *index, const char *name)
{
	return index->projection == PROJECT_ALL || is_projected(def, index, name, (int) strlen(name));
}

/* The item as the index projects it. */
static Jsonb *
gsi_projected_item(TableDef *def, IndexDef *index, Jsonb *item)
{
	JsonbParseState *state = NULL;
	JsonbIterator *it;
	JsonbValue	key;
	JsonbValue	value;
	JsonbValue *result = NULL;
	JsonbIteratorToken tok;

	if (index->projection == PROJECT_ALL)
		return item;
	it = JsonbIteratorInit(&item->root);
	while ((tok = JsonbIteratorNext(&it, &key, true)) != WJB_DONE)
	{
		if (tok == WJB_BEGIN_OBJECT)
			pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
		else if (tok == WJB_END_OBJECT)
			result = pushJsonbValue(&state, WJB_END_OBJECT, NULL);
		else if (tok == WJB_KEY)
		{
			JsonbIteratorNext(&it, &value, true);
			if (is_projected(def, index, key.val.string.val, key.val.string.len))
			{
				pushJsonbValue(&state, WJB_KEY, &key);
				pushJsonbValue(&state, WJB_VALUE, &value);
			}
		}
	}
	return JsonbValueToJsonb(result);
}

/* DynamoDB: an item and its entry in a local secondary index share the 400 KB limit. */
static void
check_local_entry_size(IndexDef *index, int64 size, int64 entry_size)
{
	if (index->local && size + entry_size > ITEM_MAX_SIZE)
		ddb_validation_error("Item size has exceeded the maximum allowed size");
}

/*
 * Checks an item that is about to be put against the table's indexes before
 * any condition is read, as DynamoDB does: index key attributes of the wrong
 * type, and the size an item shares with its local index entries.
 */
void
gsi_check_item(TableDef *def, Jsonb *item)
{
	int64		size = -1;

	for (int i = 0; i < def->nindexes; i++)
	{
		IndexDef   *index = &def->indexes[i];
		Datum		gpk;
		Datum		gsk;

		if (!gsi_item_keys(index, item, &gpk, &gsk) || !index->local)
			continue;
		if (size < 0)
			size = item_size(&item->root);
		check_local_entry_size(index, size, index->projection == PROJECT_ALL ? size :
							   item_size(&gsi_projected_item(def, index, item)->root));
	}
}

/* True when two key datums (0 for none) are the same key. */
static bool
same_key(Datum a, Datum b)
{
	struct varlena *x;
	struct varlena *y;

	if (a == (Datum) 0 || b == (Datum) 0)
		return a == b;
	x = PG_DETOAST_DATUM_PACKED(a);
	y = PG_DETOAST_DATUM_PACKED(b);
	return key_compare_encoded(DDB_KEY_DATA(x), DDB_KEY_LEN(x), DDB_KEY_DATA(y), DDB_KEY_LEN(y)) == 0;
}

/* Tells gsi_write_observer what a row change wrote to one index. */
static void
observe_write(TableDef *def, IndexDef *index, RowImage *old, const GsiEntry *gone, const GsiEntry *entry)
{
	Jsonb	   *old_item = NULL;
	int64		old_size = -1;
	bool		key_changed = false;
	bool		unchanged = false;

	if (gone)
	{
		old_item = gsi_projected_item(def, index, old->item);
		old_size = index->projection == PROJECT_ALL ? old->item_size : item_size(&old_item->root);
	}
	if (gone && entry)
	{
		key_changed = !same_key(gone->gpk, entry->gpk) || !same_key(gone->gsk, entry->gsk);
		unchanged = !key_changed && VARSIZE(old_item) == VARSIZE(entry->item) &&
			memcmp(old_item, entry->item, VARSIZE(old_item)) == 0;
	}
	gsi_write_observer(def, index, old_size, entry ? entry->item_size : -1, key_changed, unchanged);
}

/* The trigger: AFTER INSERT OR UPDATE OR DELETE ... FOR EACH ROW, argument: the table name. */
Datum
ddb_gsi_maintain(PG_FUNCTION_ARGS)
{
	TriggerData *td = (TriggerData *) fcinfo->context;
	TupleDesc	desc;
	TableDef   *def;
	RowImage	old;
	RowImage	new;
	OwnerContext saved;
	const ItemColumns *columns;

	/* fires on the table it names, of the extension's shape, or raises */
	def = trigger_guard_row(fcinfo, "ddb.gsi_maintain", 1, &columns);
	desc = RelationGetDescr(td->tg_relation);
	old = row_image(TRIGGER_FIRED_BY_INSERT(td->tg_event) ? NULL : td->tg_trigtuple, desc, columns);
	new = row_image(TRIGGER_FIRED_BY_INSERT(td->tg_event) ? td->tg_trigtuple :
					TRIGGER_FIRED_BY_UPDATE(td->tg_event) ? td->tg_newtuple : NULL, desc, columns);

	/* the index entries follow from a write the table's privileges allowed: the owner writes them */
	owner_context_enter(def->relid, &saved);
	for (int i = 0; i < def->nindexes; i++)
	{
		IndexDef   *index = &def->indexes[i];
		GsiEntry	entry = {0};
		GsiEntry	gone = {0};

		/* the new side first, so that a wrongly typed key fails before any change */
		bool		new_in = new.present && gsi_item_keys(index, new.item, &entry.gpk, &entry.gsk);
		bool		old_in = old.present && gsi_item_keys(index, old.item, &gone.gpk, &gone.gsk);

		if (old_in)
		{
			gone.pk = old.pk;
			gone.sk = old.sk;
			gsi_delete_entry(index, &gone);
		}
		if (new_in)
		{
			entry.pk = new.pk;
			entry.sk = new.sk;
			entry.item = gsi_projected_item(def, index, new.item);
			entry.item_size = index->projection == PROJECT_ALL ? new.item_size :
				(int32) item_size(&entry.item->root);
			check_local_entry_size(index, new.item_size, entry.item_size);
			entry.expires_null = new.expires_null;
			entry.expires_at = new.expires_at;
			gsi_insert_entry(index, &entry);
		}
		if (gsi_write_observer && (old_in || new_in))
			observe_write(def, index, &old, old_in ? &gone : NULL, new_in ? &entry : NULL);
	}
	owner_context_exit(&saved);
	PG_RETURN_POINTER(NULL);
}

/*
 * ddb.index_entry(table_name, index_name, item): the entry the index should
 * hold for an item (gpk, gsk, projected item), or no row; ddb.verify_gsi
 * compares it with what the index holds.
 */
Datum
ddb_index_entry(PG_FUNCTION_ARGS)
{
	TableDef   *def = table_def_get(text_to_cstring(PG_GETARG_TEXT_PP(0)));
	IndexDef   *index = table_def_index(def, text_to_cstring(PG_GETARG_TEXT_PP(1)));
	Jsonb	   *item = item_canonical(&PG_GETARG_JSONB_P(2)->root);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Datum		values[3];
	bool		nulls[3] = {false, false, false};

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	if (!gsi_item_keys(index, item, &values[0], &values[1]))
		return (Datum) 0;
	nulls[1] = values[1] == (Datum) 0;
	values[2] = JsonbPGetDatum(gsi_projected_item(def, index, item));
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	return (Datum) 0;
}
