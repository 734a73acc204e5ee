#!/usr/bin/env bash
# The PGXN release archive (docs/releasing.md), as a PGXN user gets it:
# `make dist` builds it from HEAD (git archive) into build/pgxn/; Debian's
# pgxnclient installs it (`pgxn install ./ddb_model-<version>.zip`: make and
# make install with PostgreSQL 15's pg_config, into the installed
# PostgreSQL) and loads it (`pgxn load`, which runs CREATE EXTENSION by
# META.json's provides) into a fresh cluster of this script's own (port
# DDB_PGXN_TEST_PORT, default 55451), which has never loaded ddb_model.
# Installing replaces the installed extension with HEAD's: the script
# installs the checkout's own build back when it ends (make install).  Runs
# in the test command (which holds the install lock); prints TAP
# (test/lib.sh).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$ROOT/tools/cluster.sh"
set +e
work_dir pgxn
PORT=${DDB_PGXN_TEST_PORT:-55451}

# the fresh cluster lives in /tmp, whose short path any socket fits
TMP=$(mktemp -d /tmp/ddb-pgxn.XXXXXX)
cleanup() {
    [ -f "$TMP/data/postmaster.pid" ] && as_postgres "$PGBIN/pg_ctl" -D "$TMP/data" -m fast -w stop >/dev/null
    rm -rf "$TMP"
}
at_exit cleanup
fresh() {  # psql against the fresh cluster's database ddb_pgxn
    psql -X -q -At -h "$TMP" -p "$PORT" -U postgres -d ddb_pgxn "$@" 2>&1
}

version=$(/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["version"])' "$ROOT/META.json")
ext_version=$(sed -n "s/^default_version = '\(.*\)'/\1/p" "$ROOT/ddb_model.control")
archive="$WORK/ddb_model-$version.zip"

make -C "$ROOT" -s dist DIST_DIR="$WORK" >"$WORK/dist.log" 2>&1
check "make dist builds ddb_model-$version.zip" "0 yes" "$? $([ -f "$archive" ] && echo yes || echo no)"
# every file of HEAD under one directory, META.json and LICENSE at its top
check "the archive holds HEAD's files, all under ddb_model-$version/" \
    "$(git -C "$ROOT" ls-tree -r --name-only HEAD | wc -l) 0 META.json LICENSE" \
    "$(/usr/bin/python3 - "$archive" "ddb_model-$version/" <<'PY'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
files = [n for n in names if not n.endswith("/")]
print(len(files), sum(not n.startswith(sys.argv[2]) for n in names),
      " ".join(f for f in ("META.json", "LICENSE") if sys.argv[2] + f in names))
PY
)"

# pgxn install, as root (PostgreSQL's libdir is writable: no sudo)
touch "$WORK/before-install"
MAKEFLAGS="-j$(nproc)" pgxn install --yes --pg_config "$PGBIN/pg_config" "$archive" </dev/null >"$WORK/install.log" 2>&1
check "pgxn install ./ddb_model-$version.zip (make, make install with pg_config)" "0" "$?"
check "it installed the extension's library and install script" "ddb_model.so ddb_model--$ext_version.sql" \
    "$(find "$("$PGBIN/pg_config" --pkglibdir)/ddb_model.so" "$("$PGBIN/pg_config" --sharedir)/extension/ddb_model--$ext_version.sql" \
        -newer "$WORK/before-install" -printf '%f ' | sed 's/ $//')"

# a fresh cluster, which loads the library pgxn installed when CREATE EXTENSION first needs it
chown postgres:postgres "$TMP"
(
    init_server "$TMP/data"
    start_server "$TMP/data" "$PORT" "$TMP" "$TMP/server.log" -c fsync=off
) >"$WORK/cluster.log" 2>&1
check "a fresh cluster starts" "0" "$?"
psql -X -q -h "$TMP" -p "$PORT" -U postgres -d postgres -c "CREATE DATABASE ddb_pgxn" >>"$WORK/cluster.log" 2>&1
pgxn load --yes --pg_config "$PGBIN/pg_config" -h "$TMP" -p "$PORT" -U postgres -d ddb_pgxn "$archive" ddb_model \
    </dev/null >"$WORK/load.log" 2>&1
check "pgxn load ./ddb_model-$version.zip ddb_model (CREATE EXTENSION ddb_model) in a fresh database" "0" "$?"
check "the extension is default_version's, served by the installed library" \
    "$ext_version|{\"Item\": {\"Artist\": {\"S\": \"Acme\"}, \"SongTitle\": {\"S\": \"Happy Day\"}}}" \
    "$(fresh -c "SELECT extversion FROM pg_extension WHERE extname = 'ddb_model'" \
             -c "SELECT ddb.create_table('Music', 'Artist', 'S', 'SongTitle', 'S')" \
             -c "SELECT ddb.put_item('Music', '{\"Artist\": \"Acme\", \"SongTitle\": \"Happy Day\"}')" \
             -c "SELECT ddb.execute('GetItem', '{\"TableName\": \"Music\", \"Key\": {\"Artist\": {\"S\": \"Acme\"}, \"SongTitle\": {\"S\": \"Happy Day\"}}}')" |
        sed -n '1p;$p' | tr '\n' '|' | sed 's/|$//')"
# ddb_router, META.json's other extension, with what it requires
fresh -c "CREATE EXTENSION plproxy" -c "CREATE EXTENSION dblink" >>"$WORK/load.log"
pgxn load --yes --pg_config "$PGBIN/pg_config" -h "$TMP" -p "$PORT" -U postgres -d ddb_pgxn "$archive" ddb_router \
    </dev/null >>"$WORK/load.log" 2>&1
check "pgxn load ./ddb_model-$version.zip ddb_router (with plproxy and dblink)" "0 $ext_version" \
    "$? $(fresh -c "SELECT extversion FROM pg_extension WHERE extname = 'ddb_router'")"
[ "$status" = 0 ] || tail -20 "$WORK/install.log" "$WORK/load.log" | diag

# the checkout's own build back in place for what runs after
make -C "$ROOT" -s install >"$WORK/reinstall.log" 2>&1
check "the checkout's build installed again (make install)" "0" "$?"

done_testing
