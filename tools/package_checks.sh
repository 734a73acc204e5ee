# tools/package_checks.sh — the checks of tools/package.sh and
# tools/package_chroot.sh (source it): one "<check> ... ok|FAILED" line per
# check, and failed=1 once one failed.

failed=0

# Runs a check: "<name> ... ok" when the command succeeds, else "... FAILED".
check() {  # name, command...
    local name=$1
    shift
    if "$@"; then
        echo "$name ... ok"
    else
        echo "$name ... FAILED"
        failed=1
    fi
}

# A package holds a path (a pattern of grep -x over dpkg-deb -c's paths).
deb_has() {  # deb, path...
    local deb=$1 paths path
    shift
    paths=$(dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|')
    for path in "$@"; do
        grep -qx "$path" <<<"$paths" || { echo "$(basename "$deb") lacks $path"; return 1; }
    done
}
