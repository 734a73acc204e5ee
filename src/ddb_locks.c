/*
 * ddb_locks.c — the server's own locks (ddb_locks.h): their tags, taken
 * until the transaction ends (or released before), or waited for without
 * being taken.  The
 * functions that let SQL reach them are src/table/table_locks.c and
 * src/router/router_locks.c.
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "miscadmin.h"
#include "storage/lmgr.h"

#include "ddb_locks.h"

/* Fills a tag; see ddb_locks.h. */
void
ddb_lock_tag(LOCKTAG *tag, DdbLockClass lock_class, uint32 key)
{
	SET_LOCKTAG_ADVISORY(*tag, MyDatabaseId, (uint32) lock_class, key, DDB_LOCK_FIELD4);
}

/* The key of a name; see ddb_locks.h. */
uint32
ddb_lock_name_key(const char *name)
{
	return hash_bytes((const unsigned char *) name, (int) strlen(name));
}

/* Takes a lock until the transaction ends; see ddb_locks.h. */
void
ddb_lock_xact(DdbLockClass lock_class, uint32 key, LOCKMODE mode)
{
	LOCKTAG		tag;

	ddb_lock_tag(&tag, lock_class, key);
	(void) LockAcquire(&tag, mode, false, false);
}

/* Releases a lock early; see ddb_locks.h. */
void
ddb_lock_release(DdbLockClass lock_class, uint32 key, LOCKMODE mode)
{
	LOCKTAG		tag;

	ddb_lock_tag(&tag, lock_class, key);
	if (!LockRelease(&tag, mode, false))
		elog(ERROR, "ddb_model: released a lock not held (class %d)", (int) lock_class);
}

/* Waits for the holders of conflicting modes; see ddb_locks.h. */
void
ddb_lock_await(DdbLockClass lock_class, uint32 key, LOCKMODE mode)
{
	LOCKTAG		tag;

	ddb_lock_tag(&tag, lock_class, key);
	WaitForLockers(tag, mode, false);
}
