/*
 * ddb_model.c — the shared library's module block, and its settings
 * (throttling's, src/metering/throttle.c, whose shared memory is set up when the
 * library is preloaded; exports' and imports', src/exports/).  The
 * router's are its own library's (ddb_router.so, src/router/ddb_router.c).
 */
#include "postgres.h"

#include "fmgr.h"

#include "exports/exports.h"
#include "jobs/jobs.h"
#include "metering/throttle.h"

PG_MODULE_MAGIC;

/* The library's settings, defined when it is loaded (PostgreSQL 15's fmgr.h declares no _PG_init). */
void		_PG_init(void);

void
_PG_init(void)
{
	jobs_define_settings();
	throttle_init();
	exports_define_settings();
	export_define_job();
	import_define_job();
}
