#!/usr/bin/env bash
# Installs the packages that tools/package.sh built (build/package/*.deb)
# into a fresh Debian 12 root and checks that they install only where they
# run: with the PostgreSQL 15 release before the one the extension was built
# against, dpkg refuses the extension; with the oldest release its dependency
# allows, apt installs every package, a cluster made in the root loads the
# extension, the installed ddb-gateway serves a signed request, and the
# ddb-transfer that the extension runs is there.  The root is made by
# debootstrap from Debian's archive (bookworm, bookworm-updates and
# bookworm-security) and kept as a tarball in build/chroot/, with the
# packages apt downloaded, for the next run (remove build/chroot/ to start
# from nothing); each run unpacks a new root from it.  Prints
# "<check> ... ok|FAILED" lines and exits non-zero if one failed.  As root,
# after tools/package.sh (which runs it last); docs/packaging.md.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# check, deb_has, failed
source "$ROOT/tools/package_checks.sh"
# gateway_ready
source "$ROOT/tools/gateway.sh"

PKG_DIR=${DDB_PKG_DIR:-$ROOT/build/package}
CACHE_DIR=$ROOT/build/chroot
BASE_TAR=$CACHE_DIR/bookworm-minbase.tar
ARCHIVES=$CACHE_DIR/archives
NEW_ROOT=$CACHE_DIR/root
LOG=$CACHE_DIR/chroot.log
MIRROR=http://deb.debian.org/debian
GATEWAY_PORT=${DDB_CHROOT_GATEWAY_PORT:-55495}
LOCAL_PORT=${DDB_CHROOT_LOCAL_PORT:-55496}
# the cluster made in the root, on Debian's default socket directory there
PGDATA_IN_ROOT=/var/lib/postgresql/ddb-test
PGBIN=/usr/lib/postgresql/15/bin

ARCH=$(dpkg --print-architecture)
EXT_DEB=$(echo "$PKG_DIR"/postgresql-15-ddb-model_*_"$ARCH".deb)
[ -f "$EXT_DEB" ] || { echo "no postgresql-15-ddb-model .deb in $PKG_DIR: run tools/package.sh first"; exit 1; }
VERSION=$(dpkg-deb -f "$EXT_DEB" Version)
DEBS=("$EXT_DEB" "$PKG_DIR/ddb-transfer_${VERSION}_$ARCH.deb" "$PKG_DIR/ddb-gateway_${VERSION}_$ARCH.deb")
[ ! -f "$PKG_DIR/ddb-local_${VERSION}_all.deb" ] || DEBS+=("$PKG_DIR/ddb-local_${VERSION}_all.deb")

mkdir -p "$CACHE_DIR" "$ARCHIVES"
: >"$LOG"
echo "== a fresh Debian 12 root in $NEW_ROOT (log: $LOG)"

# The mount points under a directory, deepest first.
mounts_under() {  # directory
    awk -v d="$1" '$2 == d || index($2, d "/") == 1 { print $2 }' /proc/self/mounts | sort -r
}

# Unmounts everything under a directory (lazily when busy) and says whether
# nothing is left mounted there.
unmount_under() {  # directory
    local m
    for m in $(mounts_under "$1"); do
        umount "$m" 2>/dev/null || umount -l "$m"
    done
    [ -z "$(mounts_under "$1")" ]
}

# Removes a directory, never while something is mounted under it (rm would
# go into the mount), and never across into another file system.
remove_dir() {  # directory
    [ -e "$1" ] || return 0
    unmount_under "$1" || { echo "still mounted under $1: $(mounts_under "$1" | tr '\n' ' '); not removed"; return 1; }
    rm -rf --one-file-system "$1"
}

# A command in the root, with a clean environment.
in_root() {  # command...
    chroot "$NEW_ROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
        DEBIAN_FRONTEND=noninteractive "$@"
}

# apt-get in the root, with the packages of earlier runs (build/chroot/archives)
# and keeping those it downloads for the next.
root_apt_get() {  # apt-get arguments...
    local status=0
    find "$ARCHIVES" -name '*.deb' -exec cp -t "$NEW_ROOT/var/cache/apt/archives/" {} +
    in_root apt-get -y -q --no-install-recommends "$@" >>"$LOG" 2>&1 || status=$?
    find "$NEW_ROOT/var/cache/apt/archives" -maxdepth 1 -name '*.deb' -newer "$BASE_TAR" -exec cp -n -t "$ARCHIVES/" {} +
    return "$status"
}

# The base root, debootstrap's minbase of bookworm with Debian 12's three
# suites in sources.list, no service started by a package's install
# (policy-rc.d) and no cluster made by postgresql-15's (createcluster.d):
# made once into build/chroot/bookworm-minbase.tar.
make_base() {
    local dir=$CACHE_DIR/base
    [ ! -f "$BASE_TAR" ] || return 0
    remove_dir "$dir" || return 1
    debootstrap --variant=minbase bookworm "$dir" "$MIRROR" >>"$LOG" 2>&1 || { unmount_under "$dir"; tail -5 "$LOG"; return 1; }
    unmount_under "$dir" || return 1
    cat >"$dir/etc/apt/sources.list" <<EOF
deb $MIRROR bookworm main
deb $MIRROR bookworm-updates main
deb ${MIRROR}-security bookworm-security main
EOF
    printf '#!/bin/sh\nexit 101\n' >"$dir/usr/sbin/policy-rc.d"
    chmod 755 "$dir/usr/sbin/policy-rc.d"
    mkdir -p "$dir/etc/postgresql-common/createcluster.d"
    echo 'create_main_cluster = false' >"$dir/etc/postgresql-common/createcluster.d/no-main-cluster.conf"
    tar -C "$dir" --numeric-owner -cf "$BASE_TAR.part" . && mv "$BASE_TAR.part" "$BASE_TAR"
    remove_dir "$dir"
}

# A new root from the base, with /proc and a /dev/shm of its own (no mount of
# the host's), the host's resolv.conf, the built packages in /tmp/debs and
# apt's lists brought up to date.
unpack_root() {
    remove_dir "$NEW_ROOT" && mkdir -p "$NEW_ROOT" &&
        tar -C "$NEW_ROOT" --numeric-owner -xf "$BASE_TAR" &&
        mount -t proc proc "$NEW_ROOT/proc" &&
        mount -t tmpfs -o mode=1777,size=256m shm "$NEW_ROOT/dev/shm" &&
        cp /etc/resolv.conf "$NEW_ROOT/etc/resolv.conf" &&
        mkdir -p "$NEW_ROOT/tmp/debs" && cp "${DEBS[@]}" "$NEW_ROOT/tmp/debs/" &&
        in_root apt-get update -q >>"$LOG" 2>&1 || { tail -5 "$LOG"; return 1; }
}

GATEWAY_PID= LOCAL_PID=
# Stops what runs in the root, unmounts what is mounted there and removes it
# (DDB_CHROOT_KEEP=1 keeps it, unmounted).
cleanup() {
    local pid
    for pid in $GATEWAY_PID $LOCAL_PID; do
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    if [ -f "$NEW_ROOT$PGDATA_IN_ROOT/postmaster.pid" ]; then
        in_root runuser -u postgres -- "$PGBIN/pg_ctl" -D "$PGDATA_IN_ROOT" -m fast -w stop >>"$LOG" 2>&1 || true
    fi
    if [ "${DDB_CHROOT_KEEP:-}" = 1 ]; then
        unmount_under "$NEW_ROOT" || echo "still mounted under $NEW_ROOT: $(mounts_under "$NEW_ROOT" | tr '\n' ' ')"
    else
        remove_dir "$NEW_ROOT"
    fi
    remove_dir "$CACHE_DIR/base"
    [ -z "$(mounts_under "$CACHE_DIR")" ] || { echo "nothing left mounted under $CACHE_DIR ... FAILED"; exit 1; }
}
trap cleanup EXIT
# (an interrupted run cleans up too)
trap 'exit 130' INT
trap 'exit 143' TERM

start=$SECONDS
check "debootstrap bookworm (or the cached build/chroot/bookworm-minbase.tar)" make_base
[ "$failed" = 0 ] || exit 1
check "a new root, apt-get update on bookworm, bookworm-updates and bookworm-security" unpack_root
[ "$failed" = 0 ] || exit 1
echo "root ready in $((SECONDS - start)) s"

# --- the extension's dependency: the server it was built against, or a later release
depends=$(dpkg-deb -f "$EXT_DEB" Depends)
built_against=$(sed -n 's/.*postgresql-15 (>= \([^)]*\)).*/\1/p' <<<"$depends")
depends_on_server() {
    [ "$built_against" = "$(pg_config --version | sed -n 's/^PostgreSQL \([0-9.]*\).*/\1/p')" ] &&
        grep -q 'postgresql-15-jit-llvm (>= [0-9]*)' <<<"$depends" &&
        grep -qF "ddb-transfer (= $VERSION)" <<<"$depends" || { echo "Depends: $depends"; return 1; }
}
check "postgresql-15-ddb-model depends on postgresql-15 (>= $built_against), the JIT's LLVM and ddb-transfer (= $VERSION)" \
    depends_on_server

# The archive's releases of postgresql-15: the newest older than the
# dependency allows, and the oldest it allows.
too_old= oldest_allowed=
for v in $(in_root apt-cache madison postgresql-15 | awk -F'|' '{ gsub(/ /, "", $2); print $2 }' | sort -V); do
    if dpkg --compare-versions "$v" lt "$built_against"; then
        too_old=$v
    elif [ -z "$oldest_allowed" ]; then
        oldest_allowed=$v
    fi
done
echo "postgresql-15 in the archive: $(in_root apt-cache madison postgresql-15 | awk -F'|' '{ gsub(/ /, "", $2); printf "%s ", $2 }')"

# (a) on the release before: dpkg refuses the extension, and leaves none of it configured
OURS=()
for deb in "${DEBS[@]}"; do OURS+=("$(dpkg-deb -f "$deb" Package)"); done
ours_configured() {  # prints those of our packages that dpkg has configured
    in_root dpkg-query -W -f '${Package} ${db:Status-Abbrev}\n' "${OURS[@]}" 2>/dev/null |
        awk '$2 == "ii" { print $1 }'
}
refused_on_older_server() {
    local out
    # held there: apt would otherwise upgrade the server for ddb-transfer's sake
    root_apt_get install "postgresql-15=$too_old" "postgresql-client-15=$too_old" &&
        in_root apt-mark hold postgresql-15 postgresql-client-15 >>"$LOG" &&
        root_apt_get install /tmp/debs/ddb-transfer_"${VERSION}"_"$ARCH".deb || { tail -5 "$LOG"; return 1; }
    if out=$(in_root dpkg -i "/tmp/debs/$(basename "$EXT_DEB")" 2>&1); then
        echo "dpkg installed it: $out"
        return 1
    fi
    echo "$out" >>"$LOG"
    grep -q "depends on postgresql-15 (>= $built_against); however:" <<<"$out" &&
        grep -q "Version of postgresql-15 on system is $too_old" <<<"$out" || { echo "$out"; return 1; }
    [ "$(ours_configured)" = ddb-transfer ] || { echo "configured: $(ours_configured)"; return 1; }
    in_root dpkg --purge postgresql-15-ddb-model ddb-transfer >>"$LOG" 2>&1 &&
        [ ! -e "$NEW_ROOT/usr/lib/postgresql/15/lib/ddb_model.so" ] && [ -z "$(ours_configured)" ]
}
if [ -n "$too_old" ]; then
    check "postgresql-15 $too_old: dpkg -i postgresql-15-ddb-model refuses (dependency problems), leaves it unconfigured" \
        refused_on_older_server
else
    echo "no postgresql-15 older than $built_against in the archive: the refusal is not checked ... skipped"
fi

# (b) on the oldest release allowed: everything installs and runs
install_on_oldest_allowed() {
    { [ -z "$too_old" ] || in_root apt-mark unhold postgresql-15 postgresql-client-15 >>"$LOG"; } &&
        root_apt_get install "postgresql-15=$oldest_allowed" "postgresql-client-15=$oldest_allowed" &&
        root_apt_get install "${DEBS[@]/#$PKG_DIR//tmp/debs}" || { tail -10 "$LOG"; return 1; }
    [ "$(in_root dpkg-query -W -f '${Version}' postgresql-15)" = "$oldest_allowed" ]
}
check "postgresql-15 $oldest_allowed, then apt-get install of $(printf '%s ' "${DEBS[@]##*/}")" install_on_oldest_allowed
[ "$(ours_configured | wc -l)" = "${#OURS[@]}" ] || exit 1

root_psql() {  # psql arguments...: as postgres, on the root's cluster
    in_root runuser -u postgres -- psql -X -q -At -v ON_ERROR_STOP=1 "$@"
}
create_extension() {
    in_root runuser -u postgres -- "$PGBIN/initdb" -D "$PGDATA_IN_ROOT" --locale=C.UTF-8 --auth-local=peer \
        --auth-host=reject >>"$LOG" 2>&1 &&
        in_root runuser -u postgres -- "$PGBIN/pg_ctl" -D "$PGDATA_IN_ROOT" -l "$PGDATA_IN_ROOT/server.log" -w \
            -o "-c listen_addresses='' -c unix_socket_directories=/var/run/postgresql" start >>"$LOG" 2>&1 &&
        root_psql -c 'CREATE DATABASE ddb_model' &&
        [ "$(root_psql -d ddb_model -c 'CREATE EXTENSION ddb_model' -c \
            "SELECT extversion FROM pg_extension WHERE extname = 'ddb_model'")" = "${VERSION%-*}" ] ||
        { tail -5 "$LOG" "$NEW_ROOT$PGDATA_IN_ROOT/server.log" 2>/dev/null; return 1; }
}
check "initdb and pg_ctl start as postgres in the root, CREATE EXTENSION ddb_model" create_extension

# The program the extension runs for its exports and imports, named in its library.
transfer_runs() {
    local path out
    path=$(grep -ao '/[a-z/]*/ddb-transfer' "$NEW_ROOT/usr/lib/postgresql/15/lib/ddb_model.so" | head -1)
    out=$(in_root "$path" --version 2>&1)
    [ "$path" = /usr/bin/ddb-transfer ] && [ "$out" = "ddb-transfer ${VERSION%-*}" ] || { echo "$path --version: $out"; return 1; }
}
check "ddb-transfer --version at the path the extension runs it from" transfer_runs
if [ -f "$NEW_ROOT/usr/bin/ddb-local" ]; then
    check "ddb-local --version" eval '[ "$(in_root ddb-local --version 2>&1)" = "ddb-local ${VERSION%-*}" ]'
fi

# The installed gateway as its unit runs it (user ddb-gateway, the installed
# config file, README.Debian's grants), on a port from the environment; a
# key of a role that may write one table; a PutItem and a GetItem signed by
# curl from outside the root, which shares the host's network.
signed() {  # port, key id, secret, operation, body: prints the response
    curl -s --max-time 10 --aws-sigv4 "aws:amz:us-east-1:dynamodb" --user "$2:$3" \
        -H "X-Amz-Target: DynamoDB_20120810.$4" -H 'Content-Type: application/x-amz-json-1.0' \
        --data-binary "$5" "http://127.0.0.1:$1/"
}
gateway_request() {
    local key_id secret out log=$CACHE_DIR/gateway.log
    root_psql -d ddb_model -c 'CREATE ROLE "ddb-gateway" LOGIN' -c 'GRANT SELECT ON ddb.access_keys TO "ddb-gateway"' \
        -c 'CREATE ROLE chroot_app NOLOGIN' -c 'GRANT chroot_app TO "ddb-gateway"' \
        -c "SELECT ddb.execute('CreateTable', '{\"TableName\": \"Things\", \"BillingMode\": \"PAY_PER_REQUEST\",
              \"KeySchema\": [{\"AttributeName\": \"pk\", \"KeyType\": \"HASH\"}],
              \"AttributeDefinitions\": [{\"AttributeName\": \"pk\", \"AttributeType\": \"S\"}]}')" \
        -c "SELECT ddb.grant_tables('chroot_app', 'Things', false)" >/dev/null || return 1
    read -r key_id secret <<<"$(root_psql -d ddb_model -F ' ' -c "SELECT * FROM ddb.create_access_key('chroot_app')")"
    : >"$log"
    chroot "$NEW_ROOT" /usr/bin/env -i PATH=/usr/bin:/bin DDB_GATEWAY_LISTEN="127.0.0.1:$GATEWAY_PORT" \
        setpriv --reuid=ddb-gateway --regid=ddb-gateway --init-groups \
        /usr/bin/ddb-gateway --config /etc/ddb-gateway/ddb-gateway.conf 2>>"$log" &
    GATEWAY_PID=$!
    gateway_ready "$GATEWAY_PID" "$GATEWAY_PORT" "$log" || { echo "the gateway did not start:"; tail -5 "$log"; return 1; }
    signed "$GATEWAY_PORT" "$key_id" "$secret" PutItem '{"TableName": "Things", "Item": {"pk": {"S": "p1"}, "v": {"S": "in the root"}}}' >/dev/null
    out=$(signed "$GATEWAY_PORT" "$key_id" "$secret" GetItem '{"TableName": "Things", "Key": {"pk": {"S": "p1"}}}')
    [ "$out" = '{"Item": {"v": {"S": "in the root"}, "pk": {"S": "p1"}}}' ] || { echo "GetItem: $out"; tail -5 "$log"; return 1; }
    kill "$GATEWAY_PID"
    wait "$GATEWAY_PID" || { echo "the gateway did not exit 0 on SIGTERM"; return 1; }
    GATEWAY_PID=
}
check "ddb-gateway as user ddb-gateway with the installed config: a PutItem and a GetItem signed by curl" gateway_request

# ddb-local from its package, as a new user runs it: an ordinary user of the
# root, any key; it answers, and on SIGTERM exits 0 having removed its cluster.
local_runs() {
    local log=$CACHE_DIR/ddb-local.log out t0 elapsed
    in_root useradd --create-home developer >>"$LOG" 2>&1 || return 1
    : >"$log"
    t0=$(date +%s%N)
    chroot "$NEW_ROOT" /usr/bin/env -i PATH=/usr/bin:/bin HOME=/home/developer \
        setpriv --reuid=developer --regid=developer --init-groups ddb-local --port "$LOCAL_PORT" >"$log" 2>&1 &
    LOCAL_PID=$!
    until grep -q "DynamoDB's API at http://127.0.0.1:$LOCAL_PORT" "$log"; do
        kill -0 "$LOCAL_PID" 2>/dev/null && [ $(($(date +%s%N) - t0)) -lt 60000000000 ] ||
            { echo "ddb-local did not start:"; tail -15 "$log"; return 1; }
        sleep 0.05
    done
    out=$(signed "$LOCAL_PORT" local local ListTables '{}')
    elapsed=$((($(date +%s%N) - t0) / 1000000))
    [[ "$out" == '{"TableNames": ['* ]] || { echo "ListTables: $out"; tail -5 "$log"; return 1; }
    echo "ddb-local answered $elapsed ms after it was started"
    kill -TERM "$LOCAL_PID"
    wait "$LOCAL_PID" || { echo "ddb-local did not exit 0 on SIGTERM"; tail -5 "$log"; return 1; }
    LOCAL_PID=
    [ -z "$(find "$NEW_ROOT/tmp" -maxdepth 1 -name 'ddb-local.*')" ] || { echo "ddb-local left $NEW_ROOT/tmp/ddb-local.*"; return 1; }
}
if [ -f "$NEW_ROOT/usr/bin/ddb-local" ]; then
    check "ddb-local as an ordinary user: a ListTables answered, its cluster removed on SIGTERM" local_runs
fi

echo "$((SECONDS - start)) s in the fresh root"
[ "$failed" = 0 ]
