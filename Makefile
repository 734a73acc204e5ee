# ddb_model — PGXS build.  `make && make install`, then `make installcheck`
# against a running server; tools/test.sh runs every suite on a throwaway one.

EXTENSION = ddb_model
MODULE_big = ddb_model
DATA = $(wildcard sql/ddb_model--*.sql)

OBJS = \
	src/ddb_model.o \
	src/key/key_codec.o \
	src/key/key_io.o \
	src/key/key_compare.o \
	src/key/key_prefix.o \
	src/key/key_support.o \
	src/key/key_gist.o \
	src/item/item_codec.o \
	src/table/table_def.o \
	src/table/item_store.o \
	src/table/gsi_trigger.o \
	src/table/gsi_store.o \
	src/table/drop_guard.o \
	src/expr/reserved_words.o \
	src/expr/expr_parse.o \
	src/expr/expr_eval.o \
	src/api/request.o \
	src/api/expr_host.o \
	src/api/projection.o \
	src/api/update.o \
	src/api/transactions.o \
	src/api/item_ops.o \
	src/api/item_sql.o \
	src/api/execute.o

PG_CFLAGS = -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers -Werror

# pg_regress reads test/sql/*.sql and test/expected/*.out (a link to expected/).
REGRESS = $(patsubst test/sql/%.sql,%,$(sort $(wildcard test/sql/*.sql)))
REGRESS_OPTS = --inputdir=test --outputdir=build/regress --load-extension=ddb_model

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

installcheck: build-regress-dir
.PHONY: build-regress-dir
build-regress-dir:
	@mkdir -p build/regress
