# ddb_model — PGXS build.  `make && make install`, then `make installcheck`
# against a running server; tools/test.sh runs every suite on a throwaway one.
# `make` builds the extensions alone (ddb_model.so, and ddb_router.so with
# src/router/Makefile), with nothing but PostgreSQL's server headers;
# `make tools` builds ddb-gateway and ddb-transfer (libmicrohttpd,
# jansson, libpq, zlib, OpenSSL), which `make install` then installs into
# PostgreSQL's bindir (or DDB_BINDIR).  Warnings are errors with
# WERROR=-Werror, as the test command builds; off by default, so that a newer
# compiler on a user's machine does not break the build.

EXTENSION = ddb_model ddb_router
MODULE_big = ddb_model
# The install script is built from sql/*.sql (INSTALL_SQL below).  Upgrade scripts
# sql/ddb_model--<from>--<to>.sql ship as they are, and so does the install script of
# each earlier release (sql/ddb_model--0.1.sql, frozen: a user may have installed it,
# and upgrades start from it).
EXTVERSION = $(shell sed -n "s/^default_version = '\\(.*\\)'/\\1/p" ddb_model.control)
ROUTER_VERSION = $(shell sed -n "s/^default_version = '\\(.*\\)'/\\1/p" ddb_router.control)
DATA_built = ddb_model--$(EXTVERSION).sql ddb_router--$(ROUTER_VERSION).sql
# (the script of the current version is the built one, never the frozen copy)
DATA = $(filter-out sql/ddb_model--$(EXTVERSION).sql,$(wildcard sql/ddb_model--*.sql))

OBJS = \
	src/ddb_model.o \
	src/error_types.o \
	src/ddb_errors.o \
	src/ddb_jsonb.o \
	src/ddb_locks.o \
	src/key/key_attribute.o \
	src/key/key_codec.o \
	src/key/key_tuple.o \
	src/key/key_tuple_datum.o \
	src/key/key_io.o \
	src/key/key_compare.o \
	src/key/key_prefix.o \
	src/key/key_support.o \
	src/key/key_gist.o \
	src/item/item_codec.o \
	src/item/item_output.o \
	src/item/item_size.o \
	src/item/item_key.o \
	src/table/table_def.o \
	src/table/item_read.o \
	src/table/item_store.o \
	src/table/gsi_trigger.o \
	src/table/direct_insert.o \
	src/table/gsi_store.o \
	src/table/drop_guard.o \
	src/table/stream_capture.o \
	src/table/stream_horizon.o \
	src/table/pitr_capture.o \
	src/table/table_access.o \
	src/table/trigger_guard.o \
	src/table/commit_queue.o \
	src/table/commit_checks.o \
	src/table/table_locks.o \
	src/expr/reserved_words.o \
	src/expr/expr_lex.o \
	src/expr/expr_parse.o \
	src/expr/expr_eval.o \
	src/itemexpr/placeholders.o \
	src/itemexpr/check.o \
	src/itemexpr/host.o \
	src/itemexpr/condition.o \
	src/itemexpr/update.o \
	src/itemexpr/projection.o \
	src/request/request.o \
	src/request/subtransaction.o \
	src/request/tokens.o \
	src/metering/capacity.o \
	src/metering/collection_metrics.o \
	src/metering/throttle.o \
	src/metering/throttle_buckets.o \
	src/api/legacy.o \
	src/api/item_ops.o \
	src/api/read_keys.o \
	src/api/query_scan.o \
	src/api/batch_ops.o \
	src/api/transactions.o \
	src/api/item_sql.o \
	src/partiql/partiql_parse.o \
	src/partiql/partiql_rewrite.o \
	src/partiql/partiql_execute.o \
	src/execute/execute.o \
	src/execute/direct.o \
	src/execute/item_claims.o \
	src/jobs/job_catalog.o \
	src/jobs/job_worker.o \
	src/jobs/restore_items.o \
	src/exports/s3_location.o \
	src/exports/s3_claims.o \
	src/exports/transfer_process.o \
	src/exports/export_job.o \
	src/exports/import_job.o

WERROR ?=
PG_CFLAGS = -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers $(WERROR)
# where `make install` puts ddb-transfer, which exports and imports run (src/exports/)
PG_CPPFLAGS = -DDDB_TRANSFER_PATH='"$(DDB_BINDIR)/ddb-transfer"'

# pg_regress reads test/sql/*.sql and test/expected/*.out (a link to expected/).
REGRESS = $(patsubst test/sql/%.sql,%,$(sort $(wildcard test/sql/*.sql)))
REGRESS_OPTS = --inputdir=test --outputdir=build/regress --load-extension=ddb_model

# ddb-gateway and ddb-transfer, each its own binary, and the script ddb-local (below): `make tools`.
TOOLS = ddb-gateway ddb-transfer ddb-local
DDB_BINDIR ?= $(bindir)
EXTRA_CLEAN = $(TOOLS)

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# PGXS tracks no header dependencies: every object is rebuilt when any header
# changes (a struct changed under a stale object is memory corruption).
$(OBJS): $(filter-out src/gateway/% src/transfer/%,$(wildcard src/*.h src/*/*.h)) src/transfer/import_sql.h

installcheck: build-regress-dir
.PHONY: build-regress-dir
build-regress-dir:
	@mkdir -p build/regress

# The install script: a line with its version, then the files in the order
# they depend on each other (types and tables before what names them in a
# signature or a SQL body; everything before the models, which run it).
INSTALL_SQL = \
	sql/key.sql \
	sql/errors.sql \
	sql/table.sql \
	sql/item.sql \
	sql/ttl.sql \
	sql/gsi.sql \
	sql/drop_guard.sql \
	sql/api.sql \
	sql/tags.sql \
	sql/table_settings.sql \
	sql/access_keys.sql \
	sql/tokens.sql \
	sql/streams.sql \
	sql/throttle.sql \
	sql/pitr.sql \
	sql/security.sql \
	sql/jobs.sql \
	sql/backups.sql \
	sql/restore.sql \
	sql/exports.sql \
	sql/imports.sql \
	sql/models/mailshot.sql \
	sql/models/uds.sql \
	sql/models/underwriting.sql \
	sql/models/uniflow.sql \
	sql/models/user_service.sql

ddb_model--$(EXTVERSION).sql: $(INSTALL_SQL) ddb_model.control
	{ printf '%s\n' '-- ddb_model $(EXTVERSION) — install script.' \
	      '\echo Use "CREATE EXTENSION ddb_model" to load this file. \quit' ''; \
	  cat $(INSTALL_SQL); } > $@

# ddb_router (docs/scale-out.md): its library, ddb_router.so, is a PGXS build of
# its own (src/router/Makefile: PGXS builds one MODULE_big per Makefile), run
# with this one's; its install script is built as ddb_model's.
.PHONY: router-lib router-install router-uninstall router-clean
all: router-lib
install: router-install
uninstall: router-uninstall
clean: router-clean
router-lib:
	$(MAKE) -C src/router all
router-install:
	$(MAKE) -C src/router install
router-uninstall:
	$(MAKE) -C src/router uninstall
router-clean:
	$(MAKE) -C src/router clean

ROUTER_SQL = \
	sql/router/cluster.sql \
	sql/router/calls.sql \
	sql/router/two_phase.sql \
	sql/router/fanout.sql \
	sql/router/transactions.sql \
	sql/router/partiql.sql \
	sql/router/streams.sql \
	sql/router/grants.sql \
	sql/router/unique.sql \
	sql/router/placements.sql \
	sql/router/reference.sql \
	sql/router/move.sql \
	sql/router/direct.sql \
	sql/router/pitr.sql \
	sql/router/transfer.sql \
	sql/router/execute.sql

ddb_router--$(ROUTER_VERSION).sql: $(ROUTER_SQL) ddb_router.control
	{ printf '%s\n' '-- ddb_router $(ROUTER_VERSION) — install script.' \
	      '\echo Use "CREATE EXTENSION ddb_router" to load this file. \quit' ''; \
	  cat $(ROUTER_SQL); } > $@

.PHONY: tools install-tools
tools: $(TOOLS)

# Extra flags for the tools only, which a distribution's build sets to its
# hardening flags (debian/rules: dpkg-buildflags' CPPFLAGS, CFLAGS and
# LDFLAGS); PGXS's own CPPFLAGS and LDFLAGS are the extension's.
TOOLS_HARDENING_CFLAGS ?=
TOOLS_HARDENING_LDFLAGS ?=

# ddb-gateway, the HTTP daemon (docs/gateway.md); it shares the table of error types and the key
# codec with the extension, and hashes keys with PostgreSQL's own code (libpgcommon, of the
# server's development files) as the router does (src/gateway/shard_hash.c).
GATEWAY_SRCS = $(wildcard src/gateway/*.c) src/error_types.c src/key/key_codec.c
GATEWAY_CFLAGS = -O2 -g -Wall -Wextra -Wno-unused-parameter $(WERROR) -pthread -DDDB_MODEL_VERSION='"$(EXTVERSION)"' \
	-I$(shell $(PG_CONFIG) --includedir) -I$(shell $(PG_CONFIG) --includedir-server) \
	$(shell pkg-config --cflags libmicrohttpd jansson libcrypto)
GATEWAY_PGCOMMON = $(shell $(PG_CONFIG) --pkglibdir)/libpgcommon.a
GATEWAY_LIBS = -L$(shell $(PG_CONFIG) --libdir) -lpq $(GATEWAY_PGCOMMON) \
	$(shell pkg-config --libs libmicrohttpd jansson zlib libcrypto) -pthread

ddb-gateway: $(GATEWAY_SRCS) $(wildcard src/gateway/*.h) src/error_types.h src/key/key_codec.h ddb_model.control
	$(CC) $(GATEWAY_CFLAGS) $(TOOLS_HARDENING_CFLAGS) -o $@ $(GATEWAY_SRCS) $(GATEWAY_LIBS) $(TOOLS_HARDENING_LDFLAGS)

# The gateway's routing hash alone, which test/shard_direct.sh compares with the router's.
build/route_hash: test/shard_direct/route_hash.c src/gateway/shard_hash.c src/gateway/shard_hash.h src/key/key_codec.c
	@mkdir -p build
	$(CC) $(GATEWAY_CFLAGS) -o $@ test/shard_direct/route_hash.c src/gateway/shard_hash.c src/key/key_codec.c $(GATEWAY_PGCOMMON)

# ddb-transfer, DynamoDB's export to S3 format in and out of tables (docs/transfer.md).
TRANSFER_SRCS = $(wildcard src/transfer/*.c)
TRANSFER_CFLAGS = -O2 -g -Wall -Wextra $(WERROR) -DDDB_MODEL_VERSION='"$(EXTVERSION)"' \
	-I$(shell $(PG_CONFIG) --includedir) $(shell pkg-config --cflags jansson zlib libcrypto)
TRANSFER_LIBS = -L$(shell $(PG_CONFIG) --libdir) -lpq $(shell pkg-config --libs jansson zlib libcrypto)

ddb-transfer: $(TRANSFER_SRCS) $(wildcard src/transfer/*.h) ddb_model.control
	$(CC) $(TRANSFER_CFLAGS) $(TOOLS_HARDENING_CFLAGS) -o $@ $(TRANSFER_SRCS) $(TRANSFER_LIBS) $(TOOLS_HARDENING_LDFLAGS)

# ddb-local, a throwaway cluster behind ddb-gateway for development (docs/local.md): a bash
# script told its version and the PostgreSQL programs it runs (those of the server built for).
ddb-local: src/local/ddb-local.sh ddb_model.control
	sed -e 's|@VERSION@|$(EXTVERSION)|g' -e 's|@PG_BINDIR@|$(shell $(PG_CONFIG) --bindir)|g' $< >$@
	chmod 755 $@

# `make install` installs the tools that `make tools` built, and says which it skipped.
install: install-tools
install-tools:
	@for tool in $(TOOLS); do \
		if [ -f $$tool ]; then \
			$(MKDIR_P) '$(DESTDIR)$(DDB_BINDIR)' && $(INSTALL_PROGRAM) $$tool '$(DESTDIR)$(DDB_BINDIR)/' || exit 1; \
		else \
			echo "$$tool not built (make tools): not installed"; \
		fi; \
	done

# The manual pages, docs/man/<program>.1, written by hand and kept in step
# with each program's --help by tools/check_manpages.sh: `make install` puts
# them in $(DDB_MANDIR)/man1, PostgreSQL's mandir (pg_config --mandir) unless
# told (a Debian build gives /usr/share/man); `make uninstall` removes them.
MANPAGES = $(wildcard docs/man/*.1)
DDB_MANDIR ?= $(mandir)

.PHONY: install-man uninstall-man
install: install-man
uninstall: uninstall-man
install-man:
	$(MKDIR_P) '$(DESTDIR)$(DDB_MANDIR)/man1'
	$(INSTALL_DATA) $(MANPAGES) '$(DESTDIR)$(DDB_MANDIR)/man1/'
uninstall-man:
	rm -f $(foreach page,$(notdir $(MANPAGES)),'$(DESTDIR)$(DDB_MANDIR)/man1/$(page)')

# `make dist`: the release archive for PGXN (docs/releasing.md),
# dist/ddb_model-<version>.zip, with every file in one top-level directory
# ddb_model-<version>/: `git archive` of the commit checked out (HEAD), so
# uncommitted changes are not in it (it says so).  The version is
# META.json's, the semantic version of default_version (0.2 is 0.2.0).
DIST_NAME = ddb_model
DIST_VERSION = $(shell sed -n 's/^   "version": "\([^"]*\)",$$/\1/p' META.json)
DIST_DIR ?= dist

.PHONY: dist
dist:
	@git diff --quiet HEAD -- || echo "dist: uncommitted changes are not in the archive, which is HEAD's"
	@mkdir -p '$(DIST_DIR)'
	git archive --format zip --prefix='$(DIST_NAME)-$(DIST_VERSION)/' \
		--output '$(DIST_DIR)/$(DIST_NAME)-$(DIST_VERSION).zip' HEAD
