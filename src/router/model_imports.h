/*
 * model_imports.h — the functions of ddb_model.so that ddb_router.so calls,
 * as PostgreSQL's contrib transforms reach the library of their type
 * (hstore_plperl): a typedef per function, and a pointer to each in
 * ddb_model (ddb_model.table_def_find(...)), looked up by name with
 * load_external_function when the library is loaded (ddb_router.c, which
 * also checks each typedef against the function's own declaration).  The
 * router needs the server state these hold (table definitions, the
 * server's secret, a request's own checks); the plain pieces it needs
 * (the key codec, error bodies, the server's lock tags) it compiles in
 * (src/router/Makefile).
 */
#ifndef DDB_ROUTER_MODEL_IMPORTS_H
#define DDB_ROUTER_MODEL_IMPORTS_H

#include "postgres.h"

#include "utils/jsonb.h"

#include "../key/ddb_key.h"
#include "../table/table_def.h"

/* table_def_find: a table's definition by its DynamoDB name, or NULL when there is none (src/table/table_def.h). */
typedef TableDef *(*TableDefFindFunction) (const char *table_name);

/* table_def_get: the same, raising ResourceNotFoundException when there is none. */
typedef TableDef *(*TableDefGetFunction) (const char *table_name);

/* ddb_key_route_hash_encoded: the routing hash of encoded key bytes (src/key/key_compare.c). */
typedef uint32 (*RouteHashFunction) (const uint8_t *enc, size_t len);

/* api_query_partition_key: the partition key a valid Query reads by, (Datum) 0 for a global index; raises for an invalid one. */
typedef Datum (*QueryPartitionKeyFunction) (Jsonb *request);

/* api_statement_operation: the operation a PartiQL statement stands for, and its request; raises for an invalid one. */
typedef const char *(*StatementOperationFunction) (Jsonb *element, Jsonb **request);

/* api_token_seal: a token for a payload, sealed with the server's secret for a purpose (src/request/tokens.c). */
typedef char *(*TokenSealFunction) (const char *purpose, const char *payload);

/* api_token_open: the payload of a token sealed for purpose, or NULL when it was edited, forged or sealed for another. */
typedef char *(*TokenOpenFunction) (const char *purpose, const char *token);

/* The imported functions, each named as in ddb_model. */
typedef struct ModelFunctions
{
	TableDefFindFunction table_def_find;
	TableDefGetFunction table_def_get;
	RouteHashFunction ddb_key_route_hash_encoded;
	QueryPartitionKeyFunction api_query_partition_key;
	StatementOperationFunction api_statement_operation;
	TokenSealFunction api_token_seal;
	TokenOpenFunction api_token_open;
} ModelFunctions;

/* ddb_model's functions, set by the library's _PG_init (ddb_router.c). */
extern ModelFunctions ddb_model;

#endif							/* DDB_ROUTER_MODEL_IMPORTS_H */
