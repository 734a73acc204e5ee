/*
 * item_store.c — the items of a DynamoDB table: put, get, delete and
 * conditional writes, through kept SPI plans (one per statement shape, in
 * the table definition's plan slots); Query and Scan are in item_read.c.
 *
 * Reads hide items whose TTL has passed (DynamoDB's rule: a TTL more than
 * five years in the past is ignored), whether or not the sweep has deleted
 * them yet.  Writes go through SQL so that the GSI trigger sees them.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/numeric.h"
#include "utils/timestamp.h"

#include "../ddb_errors.h"
#include "../ddb_locks.h"
#include "../item/item_codec.h"
#include "../key/ddb_key.h"
#include "gsi.h"
#include "item_store.h"
#include "item_store_plans.h"
#include "table_access.h"

/* DynamoDB ignores TTL values more than five years in the past. */
#define TTL_IGNORED_AGE (5 * 365 * 86400L)

/* how long a claim is tried before the item counts as held: 10 x 1 ms */
#define ITEM_LOCK_TRIES 10
#define ITEM_LOCK_PAUSE_US 1000

/* The current time in epoch seconds, as TTL reads it (the statement's start). */
int64
store_now(void)
{
	return (int64) (timestamptz_to_time_t(GetCurrentStatementStartTimestamp()));
}

/* schema.relation, quoted. */
char *
store_qualified(TableDef *def, const char *relation)
{
	return quote_qualified_identifier(def->schema_name, relation);
}

/*
 * Prepares and keeps the plan of a slot: one generic plan (no re-planning
 * per call), optimised for the first rows, so that reads walk the primary
 * key in order and stop early instead of sorting what a bitmap scan found.
 */
SPIPlanPtr
store_prepare_plan(SPIPlanPtr *slot, const char *sql, int nargs, Oid *argtypes)
{
	SPIPlanPtr	plan = SPI_prepare_cursor(sql, nargs, argtypes,
										  CURSOR_OPT_GENERIC_PLAN | CURSOR_OPT_FAST_PLAN);

	if (plan == NULL)
		elog(ERROR, "ddb_model: could not prepare \"%s\": %s", sql,
			 SPI_result_code_string(SPI_result));
	SPI_keepplan(plan);
	*slot = plan;
	return plan;
}

/* Raises DynamoDB's error for a key of the wrong shape in a request. */
static void
report_key_schema_mismatch(void)
{
	ddb_validation_error("The provided key element does not match the schema");
}

/* True when a key datum has the declared type ('S', 'N', 'B'). */
bool
store_key_has_type(Datum key, char type)
{
	struct varlena *k = PG_DETOAST_DATUM_PACKED(key);
	uint8_t		tag = DDB_KEY_TAG(k);

	return (type == 'S' && tag == KEY_TAG_S) || (type == 'N' && tag == KEY_TAG_N) ||
		(type == 'B' && tag == KEY_TAG_B);
}

/* Checks that key values have the table's key types. */
static void
store_check_key(TableDef *def, Datum pk, Datum sk)
{
	if (!store_key_has_type(pk, def->keys.hash_type))
		report_key_schema_mismatch();
	if ((def->keys.range_key != NULL) != (sk != (Datum) 0))
		report_key_schema_mismatch();
	if (sk && !store_key_has_type(sk, def->keys.range_type))
		report_key_schema_mismatch();
}

/* The SPI parameters $1 pk, $2 sk (NULL without a sort key) of a statement on one item. */
typedef struct KeyParams
{
	Oid			argtypes[2];
	Datum		args[2];
	char		nulls[2];
} KeyParams;

/* Checks an item's key values against the table's key types and makes its parameters. */
static void
key_params(TableDef *def, Datum pk, Datum sk, KeyParams *params)
{
	Oid			keytype = ddb_key_type_oid();

	store_check_key(def, pk, sk);
	params->argtypes[0] = params->argtypes[1] = keytype;
	params->args[0] = pk;
	params->args[1] = sk;
	params->nulls[0] = ' ';
	params->nulls[1] = sk ? ' ' : 'n';
}

/* Extracts one key attribute of an item; raises if missing or mistyped. */
static Datum
item_key(JsonbContainer *item, const char *attribute, char type, bool range)
{
	JsonbValue	v;
	KeyRole		role = {attribute, NULL, range};
	Datum		key;

	if (!item_get_attribute(item, attribute, &v))
		ddb_validation_error("One or more parameter values were invalid: Missing the key %s in the item",
							 attribute);
	if (!item_value_to_key(&v, type, &role, &key))
		ddb_validation_error("One or more parameter values were invalid: Type mismatch for key %s expected: %c actual: %s",
							 attribute, type, item_type_name(item_value_type(&v)));
	return key;
}

/* Extracts and checks the table keys of a canonical natural item. */
void
store_item_keys(TableDef *def, Jsonb *item, Datum *pk, Datum *sk)
{
	*pk = item_key(&item->root, def->keys.hash_key, def->keys.hash_type, false);
	*sk = def->keys.range_key ?
		item_key(&item->root, def->keys.range_key, def->keys.range_type, true) : (Datum) 0;
}

/* The TTL epoch seconds of an item under the table's TTL setting, or -1. */
int64
store_item_expiry(TableDef *def, JsonbContainer *item)
{
	JsonbValue	v;
	Numeric		floor_value;

	if (def->ttl_attribute == NULL || !item_get_attribute(item, def->ttl_attribute, &v) ||
		v.type != jbvNumeric)
		return -1;
	floor_value = DatumGetNumeric(DirectFunctionCall1(numeric_floor, NumericGetDatum(v.val.numeric)));
	/* DynamoDB never expires a negative TTL; a huge one is "never" as well */
	if (numeric_is_nan(floor_value) ||
		DatumGetBool(DirectFunctionCall2(numeric_lt, NumericGetDatum(floor_value),
										 DirectFunctionCall1(int8_numeric, Int64GetDatum(0)))) ||
		DatumGetBool(DirectFunctionCall2(numeric_gt, NumericGetDatum(floor_value),
										 DirectFunctionCall1(int8_numeric,
															 Int64GetDatum(INT64CONST(1) << 53)))))
		return -1;
	return DatumGetInt64(DirectFunctionCall1(numeric_int8, NumericGetDatum(floor_value)));
}

/* True when an item with this expiry is visible now. */
static bool
expiry_visible(bool isnull, int64 expires_at, int64 now)
{
	return isnull || expires_at > now || expires_at <= now - TTL_IGNORED_AGE;
}

/* " AND sk = $2" when the table has a sort key. */
static const char *
sort_key_match(TableDef *def)
{
	return def->keys.range_key ? " AND sk OPERATOR(pg_catalog.=) $2" : "";
}

/* Copies the jsonb of SPI row 0, column col, into the caller's context, or NULL. */
static Jsonb *
copy_row_item(int col, MemoryContext cxt)
{
	bool		isnull;
	Datum		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, col, &isnull);
	MemoryContext old;
	Jsonb	   *copy;

	if (isnull)
		return NULL;
	old = MemoryContextSwitchTo(cxt);
	copy = DatumGetJsonbPCopy(d);
	MemoryContextSwitchTo(old);
	return copy;
}

/* The old item of SPI row 0 (item, expires_at) if still visible, else NULL. */
static Jsonb *
visible_old_item(MemoryContext cxt)
{
	bool		isnull;
	int64		expires_at;

	if (SPI_processed == 0)
		return NULL;
	expires_at = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
	if (!expiry_visible(isnull, expires_at, store_now()))
		return NULL;
	return copy_row_item(1, cxt);
}

/* Raises AccessDeniedException unless the current user may read or write this item. */
static void
check_access(TableDef *def, Datum pk, TableAccess access)
{
	table_access_check(def, NULL, access);
	table_access_check_key(def, pk);
}

/* The visible item with this key, or NULL. */
Jsonb *
store_get(TableDef *def, Datum pk, Datum sk)
{
	MemoryContext cxt = CurrentMemoryContext;
	Oid			keytype = ddb_key_type_oid();
	Oid			argtypes[3] = {keytype, keytype, INT8OID};
	Datum		args[3] = {pk, sk, Int64GetDatum(store_now())};
	char		nulls[3] = {' ', sk ? ' ' : 'n', ' '};
	SPIPlanPtr	plan;
	Jsonb	   *item = NULL;

	store_check_key(def, pk, sk);
	check_access(def, pk, TABLE_READ);
	SPI_connect();
	plan = SLOT_PLAN(&def->plans[PLAN_GET],
					 psprintf("SELECT item FROM %s WHERE pk OPERATOR(pg_catalog.=) $1%s AND " TTL_VISIBLE("3"),
							  store_qualified(def, def->relation_name), sort_key_match(def)),
					 3, argtypes);
	if (SPI_execute_plan(plan, args, nulls, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "ddb_model: GetItem failed");
	if (SPI_processed > 0)
		item = copy_row_item(1, cxt);
	SPI_finish();
	return item;
}

/* An array of keys (ddb.ddb_key[]). */
static Datum
key_array(const Datum *keys, int n)
{
	Oid			keytype = ddb_key_type_oid();
	int16		typlen;
	bool		typbyval;
	char		typalign;

	get_typlenbyvalalign(keytype, &typlen, &typbyval, &typalign);
	return PointerGetDatum(construct_array((Datum *) keys, n, keytype, typlen, typbyval, typalign));
}

/* The visible items with these keys, in one statement; see item_store.h. */
void
store_get_many(TableDef *def, int n, const Datum *pks, const Datum *sks, Jsonb **items)
{
	MemoryContext cxt = CurrentMemoryContext;
	Oid			arraytype = get_array_type(ddb_key_type_oid());
	Oid			argtypes[3] = {arraytype, arraytype, INT8OID};
	Datum		args[3] = {0, 0, Int64GetDatum(store_now())};
	char		nulls[3] = {' ', def->keys.range_key ? ' ' : 'n', ' '};
	SPIPlanPtr	plan;

	for (int i = 0; i < n; i++)
	{
		store_check_key(def, pks[i], sks[i]);
		check_access(def, pks[i], TABLE_READ);
		items[i] = NULL;
	}
	args[0] = key_array(pks, n);
	if (def->keys.range_key)
		args[1] = key_array(sks, n);
	SPI_connect();
	/* an index lookup per key, as store_get makes, under one executor instead of one each */
	plan = SLOT_PLAN(&def->plans[PLAN_GET_MANY],
					 def->keys.range_key ?
					 psprintf("SELECT k.o, t.item FROM ROWS FROM (pg_catalog.unnest($1), pg_catalog.unnest($2)) WITH ORDINALITY k(pk, sk, o) "
							  "JOIN %s t ON t.pk OPERATOR(pg_catalog.=) k.pk AND t.sk OPERATOR(pg_catalog.=) k.sk "
							  "WHERE " TTL_VISIBLE("3"), store_qualified(def, def->relation_name)) :
					 psprintf("SELECT k.o, t.item FROM pg_catalog.unnest($1) WITH ORDINALITY k(pk, o) "
							  "JOIN %s t ON t.pk OPERATOR(pg_catalog.=) k.pk WHERE " TTL_VISIBLE("3"),
							  store_qualified(def, def->relation_name)),
					 3, argtypes);
	if (SPI_execute_plan(plan, args, nulls, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "ddb_model: BatchGetItem's read failed");
	for (uint64 row = 0; row < SPI_processed; row++)
	{
		bool		isnull;
		int64		o = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[row], SPI_tuptable->tupdesc, 1, &isnull));
		Datum		item = SPI_getbinval(SPI_tuptable->vals[row], SPI_tuptable->tupdesc, 2, &isnull);
		MemoryContext spi = MemoryContextSwitchTo(cxt);

		if (o < 1 || o > n)
			elog(ERROR, "ddb_model: BatchGetItem's read returned key %ld of %d", (long) o, n);
		items[o - 1] = DatumGetJsonbPCopy(item);
		MemoryContextSwitchTo(spi);
	}
	SPI_finish();
}

/* Runs the lock-read of an item; true when its row exists (now locked). */
static bool
lock_current(TableDef *def, Datum *args, char *nulls, Oid *argtypes)
{
	SPIPlanPtr	plan = SLOT_PLAN(&def->plans[PLAN_LOCK_OLD],
								 psprintf("SELECT item, expires_at FROM %s WHERE pk OPERATOR(pg_catalog.=) $1%s FOR UPDATE",
										  store_qualified(def, def->relation_name), sort_key_match(def)),
								 2, argtypes);

	if (SPI_execute_plan(plan, args, nulls, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "ddb_model: could not lock the current item");
	return SPI_processed > 0;
}

/* The size of an item to be written, refused above DynamoDB's 400 KB. */
static int64
checked_item_size(Jsonb *item)
{
	int64		size = item_size(&item->root);

	if (size > ITEM_MAX_SIZE)
		ddb_validation_error("Item size has exceeded the maximum allowed size");
	return size;
}

/* Fills the item parameters ($3 item, $4 expires_at, $5 item_size) of a write. */
static void
set_item_args(TableDef *def, Jsonb *item, Datum *args, char *nulls)
{
	int64		size = checked_item_size(item);
	int64		expires_at = store_item_expiry(def, &item->root);

	args[2] = JsonbPGetDatum(item);
	args[3] = Int64GetDatum(expires_at);
	args[4] = Int32GetDatum((int32) size);
	nulls[3] = expires_at < 0 ? 'n' : ' ';
}

/*
 * The lock that stands for an item while a TransactWriteItems holds it
 * (DDB_LOCK_ITEM, src/ddb_locks.h: no SQL takes it; a hash of the table's name and the item's
 * key).  A transaction takes it exclusively and keeps it to its end; a
 * single write takes it shared only for a moment, to see that no
 * transaction holds the item; a router's TransactGetItems across shard
 * nodes holds it shared on each node until it has read every node
 * (src/router/coordinator.c).  None waits more than a few milliseconds,
 * so transactions writing the same items in opposite orders cancel rather
 * than deadlock.
 */
void
store_item_lock_tag(TableDef *def, Datum pk, Datum sk, LOCKTAG *tag)
{
	struct varlena *p = PG_DETOAST_DATUM_PACKED(pk);
	uint32		hash = hash_bytes((const unsigned char *) def->name, (int) strlen(def->name));

	hash = hash_combine(hash, hash_bytes((const unsigned char *) DDB_KEY_DATA(p), (int) DDB_KEY_LEN(p)));
	if (sk)
	{
		struct varlena *s = PG_DETOAST_DATUM_PACKED(sk);

		hash = hash_combine(hash, hash_bytes((const unsigned char *) DDB_KEY_DATA(s), (int) DDB_KEY_LEN(s)));
	}
	ddb_lock_tag(tag, DDB_LOCK_ITEM, hash);
}

/*
 * Takes an item's lock in a mode, trying for a few milliseconds at most: a
 * transaction that has just committed lets its row locks go (waking those
 * that waited on its rows) a moment before its item locks, and a writer
 * it woke should not see the item as still held.  Never waits long, so
 * never deadlocks.
 */
static bool
acquire_briefly(LOCKTAG *tag, LOCKMODE mode)
{
	for (int attempt = 0; attempt < ITEM_LOCK_TRIES; attempt++)
	{
		if (LockAcquire(tag, mode, false, true) != LOCKACQUIRE_NOT_AVAIL)
			return true;
		CHECK_FOR_INTERRUPTS();
		pg_usleep(ITEM_LOCK_PAUSE_US);
	}
	return false;
}

/* Claims an item for a TransactWriteItems until the transaction ends, without waiting long; see item_store.h. */
bool
store_claim_item(TableDef *def, Datum pk, Datum sk)
{
	LOCKTAG		tag;

	check_access(def, pk, TABLE_WRITE);
	store_item_lock_tag(def, pk, sk, &tag);
	return acquire_briefly(&tag, ExclusiveLock);
}

/*
 * Raises TransactionConflictException when another transaction's
 * TransactWriteItems holds the item (its own may).  The shared lock this
 * takes is let go at once, so a long transaction of single writes (an
 * import) does not fill the lock table.
 */
static void
check_no_transaction(TableDef *def, Datum pk, Datum sk)
{
	LOCKTAG		tag;

	store_item_lock_tag(def, pk, sk, &tag);
	if (!acquire_briefly(&tag, ShareLock))
		ereport(ERROR,
				(errcode(ERRCODE_DDB_TRANSACTION_CONFLICT),
				 errmsg("Transaction is ongoing for the item"),
				 errhint("A TransactWriteItems of another transaction holds this item of table %s until it ends.",
						 def->name)));
	LockRelease(&tag, ShareLock, false);
}

/*
 * Writes an item: the given one, or what change makes of the current one.
 * With a condition, a change or for the old item, the current item is
 * locked first.  When there is none, the write inserts only if the item is
 * still absent: a writer that created it in between makes the insert do
 * nothing, and the loop locks and checks that item instead (so of two
 * conditional creators one wins, the other fails the condition).
 */
static bool
write_item(TableDef *def, Datum pk, Datum sk, Jsonb *item, const WriteChange *change,
		   const WriteCondition *cond, Jsonb **old, Jsonb **written)
{
	MemoryContext cxt = CurrentMemoryContext;
	Oid			keytype = ddb_key_type_oid();
	Oid			argtypes[5] = {keytype, keytype, JSONBOID, INT8OID, INT4OID};
	Datum		args[5] = {pk, sk, 0, 0, 0};
	char		nulls[5] = {' ', sk ? ' ' : 'n', ' ', ' ', ' '};
	const char *rel;
	SPIPlanPtr	plan;

	/*
	 * Lock the table before reading its definition, so that a concurrent
	 * create_index or update_time_to_live (which lock it against writers)
	 * is either not begun or committed and seen.
	 */
	LockRelationOid(def->relid, RowExclusiveLock);
	def = table_def_get(def->name);
	check_access(def, pk, TABLE_WRITE);
	check_no_transaction(def, pk, sk);
	rel = store_qualified(def, def->relation_name);
	if (old)
		*old = NULL;
	if (item)
		set_item_args(def, item, args, nulls);

	SPI_connect();
	while (cond || old || change)
	{
		Jsonb	   *current = NULL;
		bool		exists = lock_current(def, args, nulls, argtypes);

		if (exists)
			current = visible_old_item(cxt);
		if (cond && !cond->holds(cond->arg, current))
		{
			if (old)
				*old = current;
			SPI_finish();
			return false;
		}
		if (change)
		{
			MemoryContext spi = MemoryContextSwitchTo(cxt);

			item = change->apply(change->arg, current);
			MemoryContextSwitchTo(spi);
			set_item_args(def, item, args, nulls);
		}
		if (exists)
		{
			if (old)
				*old = current;
			break;
		}
		plan = SLOT_PLAN(&def->plans[PLAN_INSERT_NEW],
						 psprintf("INSERT INTO %s (pk%s, item, expires_at, item_size) VALUES ($1%s, $3, $4, $5) "
								  "ON CONFLICT (pk%s) DO NOTHING",
								  rel, def->keys.range_key ? ", sk" : "", def->keys.range_key ? ", $2" : "",
								  def->keys.range_key ? ", sk" : ""),
						 5, argtypes);
		if (SPI_execute_plan(plan, args, nulls, false, 0) != SPI_OK_INSERT)
			elog(ERROR, "ddb_model: the write failed");
		if (SPI_processed == 1)
		{
			SPI_finish();
			if (written)
				*written = item;
			return true;
		}
	}
	plan = SLOT_PLAN(&def->plans[PLAN_PUT],
					 psprintf("INSERT INTO %s AS t (pk%s, item, expires_at, item_size) VALUES ($1%s, $3, $4, $5) "
							  "ON CONFLICT (pk%s) DO UPDATE SET item = EXCLUDED.item, "
							  "expires_at = EXCLUDED.expires_at, item_size = EXCLUDED.item_size",
							  rel, def->keys.range_key ? ", sk" : "", def->keys.range_key ? ", $2" : "",
							  def->keys.range_key ? ", sk" : ""),
					 5, argtypes);
	if (SPI_execute_plan(plan, args, nulls, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "ddb_model: the write failed");
	SPI_finish();
	if (written)
		*written = item;
	return true;
}

/* Writes a canonical natural item, checking cond under the row lock. */
bool
store_put(TableDef *def, Jsonb *item, const WriteCondition *cond, Jsonb **old)
{
	Datum		pk;
	Datum		sk;

	store_item_keys(def, item, &pk, &sk);
	if (def->nindexes > 0)
		gsi_check_item(def, item);
	return write_item(def, pk, sk, item, NULL, cond, old, NULL);
}

/* Makes room for up to max puts; see item_store.h. */
void
store_puts_init(StorePuts *puts, int max)
{
	puts->def = NULL;
	puts->n = 0;
	puts->max = max;
	puts->pks = palloc(sizeof(Datum) * max);
	puts->sks = palloc(sizeof(Datum) * max);
	puts->items = palloc(sizeof(Datum) * max);
	puts->expiries = palloc(sizeof(Datum) * max);
	puts->no_expiry = palloc(sizeof(bool) * max);
	puts->sizes = palloc(sizeof(Datum) * max);
}

/*
 * Adds a put, checked as write_item checks one (its access, no other
 * transaction holding the item, its size), writing first the puts held of
 * another table; see item_store.h.
 */
void
store_puts_add(StorePuts *puts, TableDef *def, Jsonb *item, Datum pk, Datum sk)
{
	int64		expires_at;

	if (puts->def && (strcmp(puts->def->name, def->name) != 0 || puts->n == puts->max))
		store_puts_write(puts);
	if (puts->def == NULL)
	{
		/* as write_item: the table locked before its definition is read again */
		LockRelationOid(def->relid, RowExclusiveLock);
		puts->def = table_def_get(def->name);
	}
	def = puts->def;
	check_access(def, pk, TABLE_WRITE);
	check_no_transaction(def, pk, sk);
	puts->sizes[puts->n] = Int32GetDatum((int32) checked_item_size(item));
	expires_at = store_item_expiry(def, &item->root);
	puts->expiries[puts->n] = Int64GetDatum(expires_at);
	puts->no_expiry[puts->n] = expires_at < 0;
	puts->pks[puts->n] = pk;
	puts->sks[puts->n] = sk;
	puts->items[puts->n++] = JsonbPGetDatum(item);
}

/* A one-dimensional array of n values of a type, NULL where nulls says (nulls may be NULL). */
static Datum
value_array(Datum *values, bool *nulls, int n, Oid type)
{
	int			dims[1] = {n};
	int			lbs[1] = {1};
	int16		typlen;
	bool		typbyval;
	char		typalign;

	get_typlenbyvalalign(type, &typlen, &typbyval, &typalign);
	return PointerGetDatum(construct_md_array(values, nulls, 1, dims, lbs, type, typlen, typbyval, typalign));
}

/* Writes the puts held, in the order they were added, by one statement; see item_store.h. */
void
store_puts_write(StorePuts *puts)
{
	TableDef   *def = puts->def;
	int			n = puts->n;
	Oid			keyarray = get_array_type(ddb_key_type_oid());
	Oid			argtypes[5] = {keyarray, keyarray, JSONBARRAYOID, INT8ARRAYOID, INT4ARRAYOID};
	Datum		args[5];
	char		nulls[5] = {' ', ' ', ' ', ' ', ' '};
	const char *sk;
	SPIPlanPtr	plan;

	if (n == 0)
		return;
	sk = def->keys.range_key ? ", sk" : "";
	nulls[1] = def->keys.range_key ? ' ' : 'n';
	args[0] = value_array(puts->pks, NULL, n, ddb_key_type_oid());
	args[1] = def->keys.range_key ? value_array(puts->sks, NULL, n, ddb_key_type_oid()) : (Datum) 0;
	args[2] = value_array(puts->items, NULL, n, JSONBOID);
	args[3] = value_array(puts->expiries, puts->no_expiry, n, INT8OID);
	args[4] = value_array(puts->sizes, NULL, n, INT4OID);
	SPI_connect();
	/* PLAN_PUT's upsert, of rows unnested in order: row by row as n single puts, under one executor */
	plan = SLOT_PLAN(&def->plans[PLAN_PUT_MANY],
					 psprintf("INSERT INTO %s AS t (pk%s, item, expires_at, item_size) "
							  "SELECT r.pk%s, r.item, r.expires_at, r.item_size FROM ROWS FROM (pg_catalog.unnest($1)%s, "
							  "pg_catalog.unnest($3), pg_catalog.unnest($4), pg_catalog.unnest($5)) "
							  "r(pk%s, item, expires_at, item_size) "
							  "ON CONFLICT (pk%s) DO UPDATE SET item = EXCLUDED.item, "
							  "expires_at = EXCLUDED.expires_at, item_size = EXCLUDED.item_size",
							  store_qualified(def, def->relation_name), sk, sk,
							  def->keys.range_key ? ", pg_catalog.unnest($2)" : "", sk, sk),
					 5, argtypes);
	if (SPI_execute_plan(plan, args, nulls, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "ddb_model: BatchWriteItem's write failed");
	SPI_finish();
	puts->def = NULL;
	puts->n = 0;
}

/* Updates an item: change makes the new item from the current one (NULL when absent). */
bool
store_update(TableDef *def, Datum pk, Datum sk, const WriteCondition *cond,
			 const WriteChange *change, Jsonb **old, Jsonb **written)
{
	store_check_key(def, pk, sk);
	return write_item(def, pk, sk, NULL, change, cond, old, written);
}

/* Checks cond against an item under its row lock, writing nothing (ConditionCheck). */
bool
store_check(TableDef *def, Datum pk, Datum sk, const WriteCondition *cond, Jsonb **current)
{
	MemoryContext cxt = CurrentMemoryContext;
	KeyParams	key;
	bool		held;

	key_params(def, pk, sk, &key);
	check_access(def, pk, TABLE_READ);
	SPI_connect();
	*current = lock_current(def, key.args, key.nulls, key.argtypes) ? visible_old_item(cxt) : NULL;
	held = cond->holds(cond->arg, *current);
	SPI_finish();
	return held;
}

/* Deletes an item, checking cond under the row lock. */
bool
store_delete(TableDef *def, Datum pk, Datum sk, const WriteCondition *cond, Jsonb **old)
{
	MemoryContext cxt = CurrentMemoryContext;
	KeyParams	key;
	SPIPlanPtr	plan;
	Jsonb	   *current = NULL;

	key_params(def, pk, sk, &key);
	check_access(def, pk, TABLE_WRITE);
	check_no_transaction(def, pk, sk);
	if (old)
		*old = NULL;
	SPI_connect();
	if (cond)
	{
		bool		exists = lock_current(def, key.args, key.nulls, key.argtypes);

		if (exists)
			current = visible_old_item(cxt);
		if (old)
			*old = current;
		if (!cond->holds(cond->arg, current))
		{
			SPI_finish();
			return false;
		}
		/* the condition held for an absent item: nothing to delete */
		if (!exists)
		{
			SPI_finish();
			return true;
		}
	}
	plan = SLOT_PLAN(&def->plans[PLAN_DELETE],
					 psprintf("DELETE FROM %s WHERE pk OPERATOR(pg_catalog.=) $1%s RETURNING item, expires_at",
							  store_qualified(def, def->relation_name), sort_key_match(def)),
					 2, key.argtypes);
	if (SPI_execute_plan(plan, key.args, key.nulls, false, 0) != SPI_OK_DELETE_RETURNING)
		elog(ERROR, "ddb_model: DeleteItem failed");
	if (old && !cond)
		*old = visible_old_item(cxt);
	SPI_finish();
	return true;
}
