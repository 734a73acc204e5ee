/*
 * ddb_model.c — the shared library's module block.
 */
#include "postgres.h"

#include "fmgr.h"

PG_MODULE_MAGIC;
