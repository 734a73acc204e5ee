/*
 * table_def.h — the definition of a DynamoDB table (ddb.tables, ddb.indexes)
 * as C code uses it, cached per backend.
 */
#ifndef DDB_TABLE_DEF_H
#define DDB_TABLE_DEF_H

#include "postgres.h"

#include "executor/spi.h"
#include "utils/array.h"

/* The most attributes a side of a multi-attribute GSI key has. */
#define KEY_SCHEMA_MAX_ATTRIBUTES 4

/*
 * A key schema: the partition key and the optional sort key, with types.
 * A GSI's partition and sort keys may each have up to four attributes
 * (multi-attribute keys, docs/tables.md); hash_key and range_key are then
 * the first of each, and a side of more than one attribute is stored as a
 * tuple key (src/key/key_tuple.h).
 */
typedef struct KeySchema
{
	char	   *hash_key;
	char		hash_type;		/* 'S', 'N' or 'B' */
	char	   *range_key;		/* NULL when the key is the partition key alone */
	char		range_type;
	int			nhash;			/* attributes of the partition key, 1 to 4 */
	int			nrange;			/* of the sort key, 0 to 4 */
	char	   *hash_keys[KEY_SCHEMA_MAX_ATTRIBUTES];	/* hash_keys[0] is hash_key */
	char		hash_types[KEY_SCHEMA_MAX_ATTRIBUTES];
	char	   *range_keys[KEY_SCHEMA_MAX_ATTRIBUTES];	/* range_keys[0] is range_key */
	char		range_types[KEY_SCHEMA_MAX_ATTRIBUTES];
} KeySchema;

/* True when a side of the key has several attributes, and so is a tuple. */
#define KEY_SCHEMA_HASH_TUPLE(ks) ((ks)->nhash > 1)
#define KEY_SCHEMA_RANGE_TUPLE(ks) ((ks)->nrange > 1)

typedef enum Projection
{
	PROJECT_KEYS_ONLY,
	PROJECT_INCLUDE,
	PROJECT_ALL
} Projection;

/* Kept SPI plans of a relation, one per statement shape (item_store.c). */
#define TABLE_MAX_PLANS 64

/* A global secondary index. */
typedef struct IndexDef
{
	char	   *name;
	char	   *relation_name;
	Oid			relid;
	KeySchema	keys;
	Projection	projection;
	int			n_include;		/* INCLUDE's NonKeyAttributes */
	char	  **include;
	bool		local;			/* a local secondary index: the table's hash key, reads may be consistent */
	/* a global index's provisioned read and write units per second; 0 on an on-demand table (src/metering/throttle.c) */
	int			read_capacity;
	int			write_capacity;
	SPIPlanPtr	plans[TABLE_MAX_PLANS];
} IndexDef;

/* A DynamoDB table. */
typedef struct TableDef
{
	char	   *name;
	char	   *schema_name;
	char	   *relation_name;
	Oid			relid;
	KeySchema	keys;
	int			partitions;
	char	   *ttl_attribute;	/* NULL when TTL is disabled */
	char	   *stream_view_type;	/* NULL when no stream is enabled */
	char	   *stream_label;	/* the latest stream's label, or NULL */
	/* the provisioned read and write units per second; 0 on an on-demand table (src/metering/throttle.c) */
	int			read_capacity;
	int			write_capacity;
	bool		creating;		/* being restored (CREATING): item operations are refused */
	int			nindexes;
	IndexDef   *indexes;
	SPIPlanPtr	plans[TABLE_MAX_PLANS];
	MemoryContext cxt;			/* holds this definition */
	bool		valid;			/* false once the catalog or relation changed */
	/* ItemColumns of the relations its triggers fired on, checked (trigger_guard.c) */
	List	   *guarded_relations;
	/* its point-in-time recovery history's name, once pitr_capture.c asked (NULL before) */
	char	   *pitr_history_name;
	/* the leading keys of one user, looked up once (table_access.c); a grant changes the relation's policies, so this goes with the definition */
	Oid			leading_keys_user;	/* InvalidOid: not looked up */
	ArrayType  *leading_keys;	/* NULL: any partition key */
} TableDef;

/*
 * The definition of a table by its DynamoDB name; raises DynamoDB's
 * DDB_ERROR_RESOURCE_NOT_FOUND when there is none, or when it is being
 * restored (CREATING), as DynamoDB answers item operations then, unless
 * this backend is the restore (table_def_set_restoring).  Valid until the
 * end of the transaction.
 */
extern TableDef *table_def_get(const char *table_name);

/* table_def_get, also of a table being restored: for the table operations that describe or tag one. */
extern TableDef *table_def_get_any(const char *table_name);

/*
 * Names the table this backend restores (its items may be written while it
 * is CREATING), NULL for none; returns the name it replaces, to be restored.
 */
extern const char *table_def_set_restoring(const char *table_name);

/* table_def_get, or NULL when there is no such table. */
extern TableDef *table_def_find(const char *table_name);

/* The index of a table by name; raises DDB_ERROR_RESOURCE_NOT_FOUND when absent. */
extern IndexDef *table_def_index(TableDef *def, const char *index_name);

#endif							/* DDB_TABLE_DEF_H */
