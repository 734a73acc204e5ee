/*
 * throttle_buckets.c — the token buckets of throttling (docs/throttling.md),
 * shared by every connection of the server: a hash table in shared memory,
 * one entry per table or global index relation (keyed by database and
 * relation OID), each with a read and a write side holding the units it may
 * still spend.  A side refills at its provisioned rate and keeps up to
 * THROTTLE_BURST_SECONDS of it; one LWLock guards the table (a few
 * arithmetic operations under it per request).  Shared memory is reserved
 * only when shared_preload_libraries names ddb_model; its size is
 * ddb.throttling_max_buckets entries.  When all are taken, an entry whose
 * sides are full is replaced (a new one is full: replacing it loses
 * nothing); when none is, the owner holding the most entries gives up its
 * entry nearest full to an owner holding fewer (evict_hoarded), and else the
 * request is refused with ServiceUnavailable rather than forget what a
 * table has spent.  A relation dropped takes its
 * entry with it when its transaction commits (a new relation that reuses
 * the OID starts full, not with what the dropped one spent).
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_class.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "../ddb_errors.h"
#include "throttle.h"

PG_FUNCTION_INFO_V1(ddb_throttling_buckets);
PG_FUNCTION_INFO_V1(ddb_throttling_advance);

#define TRANCHE_NAME "ddb_model throttling"

typedef struct BucketKey
{
	Oid			dbid;
	Oid			relid;
} BucketKey;

/* One side of a bucket: rate 0 until the side is first used. */
typedef struct BucketSide
{
	double		units;			/* what may still be spent (below 0: spent ahead) */
	double		rate;			/* the provisioned units per second it was last refilled at */
	TimestampTz refilled;
} BucketSide;

typedef struct Bucket
{
	BucketKey	key;
	Oid			owner;			/* the table's owner: whose share of the entries it is */
	BucketSide	sides[2];		/* by ThrottleSide */
} Bucket;

/* How many entries an owner holds (evict_hoarded). */
typedef struct OwnerCount
{
	Oid			owner;
	long		n;
} OwnerCount;

/* What the server knows of its buckets beside them (under buckets_lock). */
typedef struct BucketsState
{
	TimestampTz none_full_before;	/* a scan for a full entry found none, nor will one before this */
} BucketsState;

static int	max_buckets = 1024;
static HTAB *buckets = NULL;
static BucketsState *buckets_state = NULL;
static LWLock *buckets_lock = NULL;
static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;
static object_access_hook_type prev_object_access_hook = NULL;

/* The relations the current transaction dropped (in TopTransactionContext): their entries go at its commit. */
static List *dropped = NIL;

/* shmem_request_hook: the hash table's space and its lock. */
static void
buckets_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(add_size(hash_estimate_size(max_buckets, sizeof(Bucket)), sizeof(BucketsState)));
	RequestNamedLWLockTranche(TRANCHE_NAME, 1);
}

/* shmem_startup_hook: creates (or attaches to) the hash table. */
static void
buckets_shmem_startup(void)
{
	HASHCTL		info;
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	info.keysize = sizeof(BucketKey);
	info.entrysize = sizeof(Bucket);
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	buckets = ShmemInitHash("ddb_model throttling buckets", max_buckets, max_buckets, &info,
							HASH_ELEM | HASH_BLOBS);
	buckets_state = ShmemInitStruct("ddb_model throttling state", sizeof(BucketsState), &found);
	if (!found)
		buckets_state->none_full_before = 0;
	buckets_lock = &(GetNamedLWLockTranche(TRANCHE_NAME))->lock;
	LWLockRelease(AddinShmemInitLock);
}

/* object_access_hook: notes a relation dropped, whose entry goes when the transaction commits. */
static void
buckets_object_access(ObjectAccessType access, Oid classId, Oid objectId, int subId, void *arg)
{
	if (prev_object_access_hook)
		prev_object_access_hook(access, classId, objectId, subId, arg);
	if (access == OAT_DROP && classId == RelationRelationId && subId == 0 && buckets != NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(TopTransactionContext);

		dropped = lappend_oid(dropped, objectId);
		MemoryContextSwitchTo(old);
	}
}

/*
 * Transaction callback: at commit (or prepare: a prepared drop is taken as
 * done; should it be rolled back, its relations start full again), the
 * entries of the relations the transaction dropped are removed; at its end,
 * whatever the outcome, the list is forgotten (its memory goes with the
 * transaction's).
 */
static void
buckets_xact_callback(XactEvent event, void *arg)
{
	ListCell   *lc;

	switch (event)
	{
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_PREPARE:
			if (dropped == NIL)
				break;
			LWLockAcquire(buckets_lock, LW_EXCLUSIVE);
			foreach(lc, dropped)
			{
				BucketKey	key = {MyDatabaseId, lfirst_oid(lc)};

				hash_search(buckets, &key, HASH_REMOVE, NULL);
			}
			LWLockRelease(buckets_lock);
			dropped = NIL;
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
			dropped = NIL;
			break;
		default:
			break;
	}
}

/* Defines ddb.throttling_max_buckets and installs the shared memory, drop and transaction hooks (preloading only). */
void
throttle_buckets_init(void)
{
	DefineCustomIntVariable("ddb.throttling_max_buckets",
							"The tables and global indexes whose throttling state the server keeps at once.",
							"When all are taken, one whose buckets are full is replaced; when none is, a request "
							"needing a new one is refused with ServiceUnavailable.",
							&max_buckets, 1024, 16, 1024 * 1024, PGC_POSTMASTER, 0, NULL, NULL, NULL);
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = buckets_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = buckets_shmem_startup;
	prev_object_access_hook = object_access_hook;
	object_access_hook = buckets_object_access;
	RegisterXactCallback(buckets_xact_callback, NULL);
}

/* True when the buckets are in shared memory (the library was preloaded). */
bool
throttle_buckets_ready(void)
{
	return buckets != NULL;
}

/*
 * A side's units now: full when new or its rate was raised, else refilled
 * since it last was (the lock held).  When the wall clock stepped back
 * (now before the last refill), nothing is added and the side refills from
 * now on, rather than not at all until the clock catches up.
 */
static void
refill(BucketSide *s, double rate, TimestampTz now)
{
	double		burst = rate * THROTTLE_BURST_SECONDS;

	if (s->rate == 0 || rate > s->rate)
		s->units = burst;
	else if (now > s->refilled)
		s->units = Min(burst, s->units + rate * (double) (now - s->refilled) / USECS_PER_SEC);
	else
		s->units = Min(burst, s->units);
	s->rate = rate;
	s->refilled = now;
}

/*
 * When a bucket's sides will be full (refilled to THROTTLE_BURST_SECONDS of
 * their rate, as a new bucket is), from what they hold now: at or before
 * now when they are (the lock held).
 */
static TimestampTz
full_at(Bucket *b, TimestampTz now)
{
	TimestampTz at = now;

	for (int side = 0; side < 2; side++)
	{
		BucketSide	s = b->sides[side];

		if (s.rate == 0)
			continue;
		refill(&s, s.rate, now);
		if (s.units < s.rate * THROTTLE_BURST_SECONDS)
			at = Max(at, now + (TimestampTz) ((s.rate * THROTTLE_BURST_SECONDS - s.units) / s.rate * USECS_PER_SEC));
	}
	return at;
}

/*
 * Makes room for a new entry by removing one whose sides are full, the first
 * found (the lock held exclusively): false when none is.  A scan that finds
 * none notes when the first will be, and none is made before then, so that
 * requests refused meanwhile cost no scan of the table.
 */
static bool
evict_full(TimestampTz now)
{
	HASH_SEQ_STATUS status;
	Bucket	   *b;
	TimestampTz first_full = PG_INT64_MAX;

	if (now < buckets_state->none_full_before)
		return false;
	hash_seq_init(&status, buckets);
	while ((b = hash_seq_search(&status)) != NULL)
	{
		TimestampTz at = full_at(b, now);

		if (at <= now)
		{
			BucketKey	key = b->key;

			hash_seq_term(&status);
			hash_search(buckets, &key, HASH_REMOVE, NULL);
			return true;
		}
		first_full = Min(first_full, at);
	}
	buckets_state->none_full_before = first_full;
	return false;
}

/*
 * Makes room for a new entry of owner's when none is full (the lock held
 * exclusively): removes the entry nearest full of the owner holding the
 * most entries, when owner, with the new one, would still hold fewer; false
 * otherwise.  So one owner's tables, kept spent, take no other owner's
 * room: the owner that holds the most waits for its own to refill.
 */
static bool
evict_hoarded(Oid owner, TimestampTz now)
{
	HASHCTL		ctl;
	HTAB	   *counts;
	HASH_SEQ_STATUS status;
	Bucket	   *b;
	OwnerCount *c;
	Oid			most = InvalidOid;
	long		most_n = 0;
	long		own_n;
	BucketKey	victim;
	TimestampTz victim_at = PG_INT64_MAX;

	ctl.keysize = sizeof(Oid);
	ctl.entrysize = sizeof(OwnerCount);
	ctl.hcxt = CurrentMemoryContext;
	counts = hash_create("ddb_model throttling owners", 64, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	hash_seq_init(&status, buckets);
	while ((b = hash_seq_search(&status)) != NULL)
	{
		bool		found;

		c = hash_search(counts, &b->owner, HASH_ENTER, &found);
		c->n = found ? c->n + 1 : 1;
		if (c->n > most_n)
		{
			most_n = c->n;
			most = b->owner;
		}
	}
	c = hash_search(counts, &owner, HASH_FIND, NULL);
	own_n = c ? c->n : 0;
	hash_destroy(counts);
	if (own_n + 1 >= most_n)
		return false;
	hash_seq_init(&status, buckets);
	while ((b = hash_seq_search(&status)) != NULL)
	{
		TimestampTz at;

		if (b->owner != most)
			continue;
		at = full_at(b, now);
		if (at < victim_at)
		{
			victim_at = at;
			victim = b->key;
		}
	}
	hash_search(buckets, &victim, HASH_REMOVE, NULL);
	return true;
}

/* Raises ServiceUnavailable (which the SDKs retry): no entry is free for a new bucket. */
static pg_attribute_noreturn() void
raise_buckets_taken(void)
{
	char	   *message = psprintf("The server keeps the throttling state of %d tables and global indexes at most "
								   "(ddb.throttling_max_buckets), and none of them has refilled yet; retry the request",
								   max_buckets);

	ereport(ERROR,
			(errcode(ERRCODE_DDB_SERVICE_UNAVAILABLE),
			 errmsg("%s", message),
			 errdetail("%s", ddb_error_body(ddb_error_type(DDB_ERROR_SERVICE_UNAVAILABLE), message, NULL, NULL)),
			 errhint("Raise ddb.throttling_max_buckets (postgresql.conf, a restart) above the number of PROVISIONED "
					 "tables and global indexes used within any %d seconds (docs/throttling.md).",
					 THROTTLE_BURST_SECONDS)));
}

/*
 * The units a bucket of this database holds now, after charging it units
 * (throttle.h); the bucket is created full when it is met for the first
 * time, and refused (ServiceUnavailable) when no entry is free for it.
 */
double
throttle_bucket_take(Oid relid, Oid owner, ThrottleSide side, double rate, double units)
{
	BucketKey	key = {MyDatabaseId, relid};
	TimestampTz now = GetCurrentTimestamp();
	Bucket	   *b;
	double		left;

	LWLockAcquire(buckets_lock, LW_EXCLUSIVE);
	b = hash_search(buckets, &key, HASH_FIND, NULL);
	if (b == NULL)
	{
		if (hash_get_num_entries(buckets) >= max_buckets && !evict_full(now) && !evict_hoarded(owner, now))
		{
			LWLockRelease(buckets_lock);
			raise_buckets_taken();
		}
		b = hash_search(buckets, &key, HASH_ENTER, NULL);
		b->owner = owner;
		memset(b->sides, 0, sizeof(b->sides));
	}
	refill(&b->sides[side], rate, now);
	b->sides[side].units -= units;
	left = b->sides[side].units;
	LWLockRelease(buckets_lock);
	return left;
}

/* Raises unless the buckets are in shared memory. */
static void
require_buckets(void)
{
	if (!throttle_buckets_ready())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("throttling needs ddb_model in shared_preload_libraries"),
				 errhint("%s (docs/throttling.md).", THROTTLE_PRELOAD_HINT)));
}

/*
 * ddb.throttling_buckets(): the buckets of this database, by relation (a
 * table's or a global index's), with the units each side holds now (NULL
 * for a side not used yet); below zero, the side was spent ahead and
 * refuses requests until it refills.
 */
Datum
ddb_throttling_buckets(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	TimestampTz now = GetCurrentTimestamp();
	HASH_SEQ_STATUS status;
	Bucket	   *b;

	require_buckets();
	InitMaterializedSRF(fcinfo, 0);
	LWLockAcquire(buckets_lock, LW_SHARED);
	hash_seq_init(&status, buckets);
	while ((b = hash_seq_search(&status)) != NULL)
	{
		Datum		values[3];
		bool		nulls[3] = {false, false, false};

		if (b->key.dbid != MyDatabaseId)
			continue;
		values[0] = ObjectIdGetDatum(b->key.relid);
		for (int side = 0; side < 2; side++)
		{
			BucketSide	s = b->sides[side];

			refill(&s, s.rate, now);
			nulls[1 + side] = s.rate == 0;
			values[1 + side] = Float8GetDatum(s.units);
		}
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	LWLockRelease(buckets_lock);
	return (Datum) 0;
}

/*
 * ddb.throttling_advance(seconds): every bucket of this database refills as
 * if seconds more had passed (a test's clock, so that refilling is shown
 * without waiting); negative seconds stand for the wall clock stepping back.
 */
Datum
ddb_throttling_advance(PG_FUNCTION_ARGS)
{
	double		seconds = PG_GETARG_FLOAT8(0);
	HASH_SEQ_STATUS status;
	Bucket	   *b;

	if (!(seconds >= -365.0 * 86400 && seconds <= 365.0 * 86400))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("ddb.throttling_advance takes -31536000 to 31536000 seconds, not %g", seconds)));
	require_buckets();
	LWLockAcquire(buckets_lock, LW_EXCLUSIVE);
	hash_seq_init(&status, buckets);
	while ((b = hash_seq_search(&status)) != NULL)
		if (b->key.dbid == MyDatabaseId)
			for (int side = 0; side < 2; side++)
				b->sides[side].refilled -= (TimestampTz) (seconds * USECS_PER_SEC);
	/* buckets may be full sooner than a scan found */
	buckets_state->none_full_before = 0;
	LWLockRelease(buckets_lock);
	PG_RETURN_VOID();
}
