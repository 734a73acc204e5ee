/*
 * ddb_router.c — the module block of ddb_router.so, the router's library
 * (docs/scale-out.md).  When it is loaded it loads ddb_model.so and looks
 * up the functions of it the router calls (model_imports.h), each checked
 * here against its own declaration, then defines the settings
 * ddb_router.* (coordinator.c): a server that never loads it has none.
 */
#include "postgres.h"

#include "fmgr.h"

#include "../api/api.h"
#include "../key/ddb_key.h"
#include "../partiql/partiql.h"
#include "../request/tokens.h"
#include "../table/table_def.h"
#include "model_imports.h"
#include "router.h"

PG_MODULE_MAGIC;

ModelFunctions ddb_model;

/* The library's imports and settings, set when it is loaded (PostgreSQL 15's fmgr.h declares no _PG_init). */
void		_PG_init(void);

/* A function of ddb_model.so by its name; raises when the library has none. */
static void *
model_function(const char *name)
{
	return load_external_function("$libdir/ddb_model", name, true, NULL);
}

/* Looks up ddb_model's functions, then defines the settings. */
void
_PG_init(void)
{
	AssertVariableIsOfType(&table_def_find, TableDefFindFunction);
	AssertVariableIsOfType(&table_def_get, TableDefGetFunction);
	AssertVariableIsOfType(&ddb_key_route_hash_encoded, RouteHashFunction);
	AssertVariableIsOfType(&api_query_partition_key, QueryPartitionKeyFunction);
	AssertVariableIsOfType(&api_statement_operation, StatementOperationFunction);
	AssertVariableIsOfType(&api_token_seal, TokenSealFunction);
	AssertVariableIsOfType(&api_token_open, TokenOpenFunction);
	ddb_model.table_def_find = (TableDefFindFunction) model_function("table_def_find");
	ddb_model.table_def_get = (TableDefGetFunction) model_function("table_def_get");
	ddb_model.ddb_key_route_hash_encoded = (RouteHashFunction) model_function("ddb_key_route_hash_encoded");
	ddb_model.api_query_partition_key = (QueryPartitionKeyFunction) model_function("api_query_partition_key");
	ddb_model.api_statement_operation = (StatementOperationFunction) model_function("api_statement_operation");
	ddb_model.api_token_seal = (TokenSealFunction) model_function("api_token_seal");
	ddb_model.api_token_open = (TokenOpenFunction) model_function("api_token_open");
	router_define_settings();
}
