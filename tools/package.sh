#!/usr/bin/env bash
# Builds the Debian packages (debian/: postgresql-15-ddb-model, ddb-transfer,
# ddb-gateway and ddb-local) with dpkg-buildpackage from a copy of the
# checkout's tracked files in build/package/, where the .debs are left;
# checks what they hold; reports lintian's findings (not fatal); installs
# them into a fresh Debian 12 root (tools/package_chroot.sh: refused on an
# older PostgreSQL 15, loaded and served on the oldest one allowed).  Then,
# unless --no-install is given, installs them on this machine, checks what
# they installed and that the systemd unit parses, and runs the demo against
# the installed packages (DDB_DEMO_INSTALLED=1 bash tools/demo.sh), then
# stops the demo's cluster.  Prints "<check> ... ok|FAILED" lines and exits
# non-zero if any check failed.  docs/packaging.md.
CLUSTER_NAME=demo
source "$(dirname "${BASH_SOURCE[0]}")/cluster.sh"
# check, deb_has, failed
source "$ROOT/tools/package_checks.sh"

PKG_DIR="$ROOT/build/package"
HOST_INSTALL=yes
case "${1:-}" in
    --no-install) HOST_INSTALL=no ;;
    "") ;;
    *) echo "usage: tools/package.sh [--no-install]"; exit 2 ;;
esac

# The shared test lock: other checkouts install into and run the same
# PostgreSQL installation, and apt allows one install at a time.
exec 9>/tmp/ddb-test.lock
lock_wait=0
take_lock() {
    local start=$SECONDS
    flock 9
    lock_wait=$((lock_wait + SECONDS - start))
}
take_lock
install_packages dpkg-dev debhelper fakeroot lintian debootstrap
flock -u 9

VERSION=$(dpkg-parsechangelog -l "$ROOT/debian/changelog" -S Version)
SRC_DIR="$PKG_DIR/ddb-model-${VERSION%-*}"
ARCH=$(dpkg --print-architecture)
EXT_DEB="$PKG_DIR/postgresql-15-ddb-model_${VERSION}_$ARCH.deb"
TRANSFER_DEB="$PKG_DIR/ddb-transfer_${VERSION}_$ARCH.deb"
GW_DEB="$PKG_DIR/ddb-gateway_${VERSION}_$ARCH.deb"
LOCAL_DEB="$PKG_DIR/ddb-local_${VERSION}_all.deb"
echo "== building the packages in $PKG_DIR (log: $PKG_DIR/build.log)"
rm -rf "$PKG_DIR"
mkdir -p "$SRC_DIR"
git -C "$ROOT" ls-files -z | (cd "$ROOT" && tar --null -T - -cf -) | tar -xf - -C "$SRC_DIR"
build_packages() {
    (cd "$SRC_DIR" && DEB_BUILD_OPTIONS="parallel=$(nproc)" dpkg-buildpackage -us -uc -b) \
        >"$PKG_DIR/build.log" 2>&1 || { tail -30 "$PKG_DIR/build.log"; return 1; }
}
check "dpkg-buildpackage -us -uc -b" build_packages
[ "$failed" = 0 ] || exit 1

check "postgresql-15-ddb-model holds the extension" deb_has "$EXT_DEB" \
    /usr/lib/postgresql/15/lib/ddb_model.so /usr/share/postgresql/15/extension/ddb_model.control \
    "/usr/share/postgresql/15/extension/ddb_model--${VERSION%-*}.sql" \
    /usr/lib/postgresql/15/lib/ddb_router.so /usr/share/postgresql/15/extension/ddb_router.control \
    "/usr/share/postgresql/15/extension/ddb_router--${VERSION%-*}.sql" \
    /usr/share/postgresql/15/extension/ddb_model--0.1.sql \
    /usr/share/postgresql/15/extension/ddb_model--0.1--0.2.sql \
    '/usr/lib/postgresql/15/lib/bitcode/ddb_model/.*\.bc' '/usr/lib/postgresql/15/lib/bitcode/ddb_router/.*\.bc'
check "ddb-transfer holds the program and its manual page" deb_has "$TRANSFER_DEB" \
    /usr/bin/ddb-transfer /usr/share/man/man1/ddb-transfer.1.gz
check "ddb-gateway holds the program, its manual page, the unit and the config" deb_has "$GW_DEB" \
    /usr/bin/ddb-gateway /usr/share/man/man1/ddb-gateway.1.gz /lib/systemd/system/ddb-gateway.service \
    /etc/ddb-gateway/ddb-gateway.conf
check "ddb-local holds the program and its manual page" deb_has "$LOCAL_DEB" \
    /usr/bin/ddb-local /usr/share/man/man1/ddb-local.1.gz
check "the config file is a conffile" \
    grep -qx /etc/ddb-gateway/ddb-gateway.conf <(dpkg-deb --ctrl-tarfile "$GW_DEB" | tar -xOf - ./conffiles)
# debhelper installs debian/copyright into every binary package
copyright_in_every_package() {
    local deb pkg status=0
    for deb in "$PKG_DIR"/*_"$VERSION"_*.deb; do
        pkg=$(dpkg-deb -f "$deb" Package)
        case $pkg in *-dbgsym) continue ;; esac
        dpkg-deb --fsys-tarfile "$deb" | tar -xOf - "./usr/share/doc/$pkg/copyright" 2>/dev/null |
            grep -qx 'License: PostgreSQL' || { echo "$pkg: no /usr/share/doc/$pkg/copyright under the PostgreSQL License"; status=1; }
    done
    return "$status"
}
check "every package carries the PostgreSQL License (/usr/share/doc/<package>/copyright)" copyright_in_every_package

# lintian's findings, but for those debian/*.lintian-overrides explain, fail
# the check (lintian's warnings included; -I prints the informational ones too)
run_lintian() {
    lintian -I --tag-display-limit 0 --fail-on error,warning "$PKG_DIR"/ddb-model_"${VERSION}"_"$ARCH".changes 2>&1
}
check "lintian: no error or warning" run_lintian

echo "== a fresh Debian 12 root (tools/package_chroot.sh)"
bash "$ROOT/tools/package_chroot.sh" || failed=1

if [ "$HOST_INSTALL" = no ]; then
    echo "$SECONDS s in all (--no-install: not installed on this machine)"
    [ "$failed" = 0 ]
    exit
fi

take_lock
echo "== installing the packages on this machine"
apt_install() {
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --reinstall "$EXT_DEB" "$TRANSFER_DEB" "$GW_DEB" "$LOCAL_DEB" \
        >"$PKG_DIR/install.log" 2>&1 || { tail -20 "$PKG_DIR/install.log"; return 1; }
}
check "apt-get install of the four .debs" apt_install
owned_by_packages() {
    dpkg -S /usr/lib/postgresql/15/lib/ddb_model.so /usr/bin/ddb-gateway /usr/bin/ddb-transfer /usr/bin/ddb-local >/dev/null
}
check "the installed extension and tools belong to the packages" owned_by_packages
check "system user ddb-gateway" \
    bash -c 'id -u ddb-gateway >/dev/null && [ "$(id -gn ddb-gateway)" = ddb-gateway ] && [ "$(id -u ddb-gateway)" -lt 1000 ]'
check "config readable by root and group ddb-gateway only" \
    test "$(stat -c '%U:%G %a' /etc/ddb-gateway/ddb-gateway.conf)" = "root:ddb-gateway 640"
check "postinst run again (dpkg-reconfigure ddb-gateway)" dpkg-reconfigure -fnoninteractive ddb-gateway
purge_and_install_again() {
    DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq ddb-gateway >"$PKG_DIR/purge.log" 2>&1 \
        || { tail -20 "$PKG_DIR/purge.log"; return 1; }
    if [ -e /etc/ddb-gateway ] || dpkg-statoverride --list /etc/ddb-gateway/ddb-gateway.conf >/dev/null; then
        echo "the purge left /etc/ddb-gateway or its stat override"
        return 1
    fi
    apt_install
}
check "apt-get purge ddb-gateway, then install again" purge_and_install_again
check "ddb-gateway.service not enabled" \
    bash -c '! ls /etc/systemd/system/*.wants/ddb-gateway.service 2>/dev/null'
if command -v systemd-analyze >/dev/null; then
    # verify exits 0 on an unknown key or a bad value too, and says so: any output fails
    verify_unit() {
        local out
        out=$(systemd-analyze verify /lib/systemd/system/ddb-gateway.service 2>&1) && [ -z "$out" ] && return 0
        echo "$out"
        return 1
    }
    check "systemd-analyze verify ddb-gateway.service" verify_unit
else
    echo "systemd-analyze not found: the unit file's syntax is not checked"
fi

# The servers started from here on do not inherit the lock's descriptor (9>&-),
# which would hold the lock for as long as they ran.
echo "== the demo against the installed packages (log: $PKG_DIR/demo.log)"
SERVICE_GATEWAY_PID=
stop_servers() {
    [ -z "$SERVICE_GATEWAY_PID" ] || kill "$SERVICE_GATEWAY_PID" 2>/dev/null || true
    stop_cluster
}
trap stop_servers EXIT
run_demo() {
    DDB_DEMO_INSTALLED=1 bash "$ROOT/tools/demo.sh" >"$PKG_DIR/demo.log" 2>&1 9>&- \
        || { tail -30 "$PKG_DIR/demo.log"; return 1; }
    # the items exported by ddb-transfer came back the same
    grep -A2 'same_items' "$PKG_DIR/demo.log" | grep -qE '\| t$' \
        || { echo "the demo's export and import do not match:"; tail -8 "$PKG_DIR/demo.log"; return 1; }
}
check "DDB_DEMO_INSTALLED=1 bash tools/demo.sh" run_demo

# The installed gateway as the service runs it, on the demo's database: as the
# system user ddb-gateway, connecting as the PostgreSQL role ddb-gateway with
# README.Debian's grants, for a key acting as a role that may read one table.
service_user_gateway() {
    local port=$((${DDB_GATEWAY_PORT:-55490} + 1)) key_id secret out status=0
    cluster_psql -q -v ON_ERROR_STOP=1 -d ddb_demo \
        -c 'CREATE ROLE "ddb-gateway" LOGIN' -c 'GRANT SELECT ON ddb.access_keys TO "ddb-gateway"' \
        -c 'CREATE ROLE package_reader NOLOGIN' -c 'GRANT package_reader TO "ddb-gateway"' \
        -c "SELECT ddb.grant_tables('package_reader', 'UserServiceTable', true)" >/dev/null
    read -r key_id secret <<<"$(cluster_psql -X -q -At -F ' ' -d ddb_demo \
        -c "SELECT * FROM ddb.create_access_key('package_reader')")"
    # the unit's command line and the installed config file, with the demo's database and a free port from
    # the environment (which wins over the file)
    DDB_GATEWAY_LISTEN="127.0.0.1:$port" DDB_GATEWAY_DSN="host=$SOCKET_DIR port=$PGPORT_NUM dbname=ddb_demo" \
        setpriv --reuid=ddb-gateway --regid=ddb-gateway --init-groups \
        /usr/bin/ddb-gateway --config /etc/ddb-gateway/ddb-gateway.conf 2>"$PKG_DIR/service-gateway.log" 9>&- &
    SERVICE_GATEWAY_PID=$!
    for _ in $(seq 50); do
        curl -sf -o /dev/null "http://127.0.0.1:$port/health" && break
        sleep 0.1
    done
    aws_key() {
        AWS_ACCESS_KEY_ID=$key_id AWS_SECRET_ACCESS_KEY=$secret AWS_DEFAULT_REGION=us-east-1 AWS_PAGER= \
            aws dynamodb --endpoint-url "http://127.0.0.1:$port" --output text "$@" 2>&1
    }
    local key='{"PK": {"S": "USER#abc12300-0000-4000-8000-000000000123"}, "SK": {"S": "PROFILE"}}'
    out=$(aws_key get-item --table-name UserServiceTable --key "$key" --query Item.PK.S)
    [ "$out" = 'USER#abc12300-0000-4000-8000-000000000123' ] || { echo "get-item: $out"; status=1; }
    out=$(aws_key delete-item --table-name UserServiceTable --key "$key")
    [[ "$out" == *AccessDeniedException* ]] || { echo "delete-item was not refused: $out"; status=1; }
    kill "$SERVICE_GATEWAY_PID"
    wait "$SERVICE_GATEWAY_PID" || { echo "the gateway did not exit 0 on SIGTERM"; status=1; }
    SERVICE_GATEWAY_PID=
    [ "$status" = 0 ] || cat "$PKG_DIR/service-gateway.log"
    return "$status"
}
check "ddb-gateway as user ddb-gateway with the installed config file and README.Debian's grants" service_user_gateway

echo "packages: $EXT_DEB $TRANSFER_DEB $GW_DEB $LOCAL_DEB"
echo "$SECONDS s in all, $lock_wait s of them waiting for the test lock"
[ "$failed" = 0 ]
