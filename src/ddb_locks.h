/*
 * ddb_locks.h — the server's own locks (docs/security.md, "The server's locks"):
 * every lock the extension takes to order its work (stream numbering, PITR
 * versions, background jobs, items of transactions, CreateTable's names,
 * the router's partitions) is an advisory lock tag whose fourth field is
 * DDB_LOCK_FIELD4.  pg_advisory_lock and its kin only ever use 1 (one
 * bigint key) and 2 (two int4 keys), so no SQL can take, hold or test one
 * of these: only the extension's C code does, and the functions it offers
 * to SQL check what their caller may do first (src/table/table_locks.c,
 * src/router/router_locks.c).
 *
 * In pg_locks: locktype 'advisory', classid the class below, objid the
 * key (a table's name hashed, a job's id, a partition), objsubid 3.
 */
#ifndef DDB_LOCKS_H
#define DDB_LOCKS_H

#include "postgres.h"

#include "storage/lock.h"

/* The fourth field of the server's lock tags: neither 1 nor 2, which SQL's advisory locks use. */
#define DDB_LOCK_FIELD4 3

/* The classes of the server's locks: the second field of the tag (pg_locks.classid). */
typedef enum DdbLockClass
{
	DDB_LOCK_STREAM = 1,		/* a table's stream: committing writers, shared (RowExclusiveLock) */
	DDB_LOCK_PITR = 2,			/* a table's history: committing writers, shared */
	DDB_LOCK_JOB_REQUEST = 3,	/* a job: the transaction that started it, until it ends */
	DDB_LOCK_JOB_RUN = 4,		/* a job: its worker, for its whole life */
	DDB_LOCK_JOB_QUOTA = 5,		/* a role: the transaction counting its jobs, until it ends */
	DDB_LOCK_ITEM = 6,			/* an item held by a TransactWriteItems (or a router's read) */
	DDB_LOCK_TABLE_NAME = 7,	/* a table's name while CreateTable, a restore or an import makes it */
	DDB_LOCK_CLIENT_TOKEN = 8,	/* a role's ClientToken of a kind of job */
	DDB_LOCK_TABLE_AUDIT = 9,	/* a table's audit trail (the underwriting model's rulebooks) */
	DDB_LOCK_ROUTER_PARTITION = 10, /* a router's partition: its writers, shared (on a node: its direct requests) */
	DDB_LOCK_ROUTER_MOVE = 11,	/* a router's partition: the move running, for the session */
	DDB_LOCK_ROUTER_UNIQUE = 12,	/* a router's unique value being written */
	DDB_LOCK_ROUTER_RECOVERY = 13,	/* a router's recovery of transactions in doubt */
	DDB_LOCK_STREAM_ORDER = 14	/* a table's stream: the writer numbering and inserting its records */
} DdbLockClass;

/* Fills tag with the server's lock of a class and key in this database. */
extern void ddb_lock_tag(LOCKTAG *tag, DdbLockClass lock_class, uint32 key);

/* The key of a lock on a name (a table's): its bytes hashed. */
extern uint32 ddb_lock_name_key(const char *name);

/* Takes the server's lock of a class and key in mode until the transaction ends (waits). */
extern void ddb_lock_xact(DdbLockClass lock_class, uint32 key, LOCKMODE mode);

/* Releases a lock ddb_lock_xact took before the transaction ends. */
extern void ddb_lock_release(DdbLockClass lock_class, uint32 key, LOCKMODE mode);

/*
 * Waits until every transaction holding the lock in a mode conflicting
 * with mode has ended, without taking it, so that nobody waits behind the
 * waiter (WaitForLockers, as CREATE INDEX CONCURRENTLY waits).
 */
extern void ddb_lock_await(DdbLockClass lock_class, uint32 key, LOCKMODE mode);

#endif							/* DDB_LOCKS_H */
