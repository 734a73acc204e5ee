#!/usr/bin/env bash
# Runs the SQL examples of every docs/*.md and docs/models/*.md page against
# the running cluster:
# each page in a fresh database with the extension; a ```sql block must
# succeed and a ```sql fails block must raise an error.  Prints TAP
# (test/lib.sh), a check per page, and exits non-zero if any page failed.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
work_dir docs-examples

for page in "$ROOT"/docs/*.md "$ROOT"/docs/models/*.md; do
    name=$(basename "$page" .md)
    [ "$(basename "$(dirname "$page")")" = models ] && name="models-$name"
    # Split the page into numbered block files: NNN.sql (must pass) or NNN.fails.sql.
    mkdir -p "$WORK/$name"
    awk -v dir="$WORK/$name" '
        /^```sql/ { n++; kind = ($0 ~ /^```sql fails/) ? "fails.sql" : "sql";
                    file = sprintf("%s/%03d.%s", dir, n, kind); inblock = 1; next }
        /^```/ && inblock { inblock = 0; close(file); next }
        inblock { print > file }
    ' "$page"
    ls "$WORK/$name"/*.sql >/dev/null 2>&1 || continue

    db="docs_$name"
    fresh_db --extension "$db" >/dev/null
    page_ok=1
    # One session per page, so that temp tables and settings carry from block to block.
    script="$WORK/$name.session.sql"
    : >"$script"
    for block in "$WORK/$name"/*.sql; do
        if [[ "$block" == *.fails.sql ]]; then
            { echo '\set ON_ERROR_STOP 0'; echo "\\echo BLOCK $(basename "$block")";
              cat "$block"; echo '\set ON_ERROR_STOP 1'; } >>"$script"
        else
            { echo "\\echo BLOCK $(basename "$block")"; cat "$block"; } >>"$script"
        fi
    done
    out="$WORK/$name.out"
    psql -X -v ON_ERROR_STOP=1 -d "$db" -f "$script" >"$out" 2>&1 || page_ok=0
    # Every "fails" block must have printed an error.
    for block in "$WORK/$name"/*.fails.sql; do
        [ -e "$block" ] || continue
        b=$(basename "$block")
        awk -v b="BLOCK $b" '$0 == b {on = 1; next} /^BLOCK / {on = 0} on && /ERROR:/ {found = 1} END {exit !found}' \
            "$out" || { diag "docs/$name.md: block $b did not fail"; page_ok=0; }
    done
    if [ $page_ok = 1 ]; then
        ok yes "docs example $name"
    else
        ok no "docs example $name" "$(tail -20 "$out")"
    fi
    drop_db "$db" >/dev/null
done
done_testing
