#!/usr/bin/env bash
# tools/check_includes.sh — the include graph of src/ against the map in
# docs/architecture.md, the one place it is drawn: the fenced block after
# the comment "the include graph", a line per folder, "a -> b, c" (or
# "a -> (nothing)"), then two spaces and what the folder holds.  Every
# `#include "..."` line under src/ that names a file of another folder is
# an edge from its folder to that one; an edge the map does not draw fails.
# A folder is a directory of src/; "base" is the files directly in src/ but
# ddb_model.c, the module block, which is a node of its own.  Prints checks
# (test/lib.sh's check); needs no server.  The test command runs it.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
MAP="$ROOT/docs/architecture.md"
source "$ROOT/test/lib.sh"
cd "$ROOT"

# The node of a file under src/.
node_of() {  # path relative to the checkout
    case $1 in
        src/ddb_model.c) echo ddb_model.c ;;
        src/*/*) local rest=${1#src/}; echo "${rest%%/*}" ;;
        *) echo base ;;
    esac
}

# The map's lines, "node dep dep ..." ("node" alone for "-> (nothing)"), in
# the map's order.
map_lines=$(awk '
    /<!-- the include graph/ { seen = 1; next }
    seen && /^```/ { if (inside) exit; inside = 1; next }
    inside {
        split($0, sides, / *-> */)
        deps = sides[2]; sub(/  .*/, "", deps)
        if (deps == "(nothing)") deps = ""
        gsub(/, */, " ", deps)
        print sides[1] (deps == "" ? "" : " " deps)
    }' "$MAP")

check "includes: docs/architecture.md draws the include graph" "yes" \
    "$([ -n "$map_lines" ] && echo yes || echo "no block after <!-- the include graph -->")"

declare -A drawn=() listed=()
out_of_order=""
while read -r node deps; do
    [ -n "$node" ] || continue
    for dep in $deps; do
        drawn["$node $dep"]=1
        [ -n "${listed[$dep]:-}" ] || out_of_order+="$node -> $dep; "
    done
    listed["$node"]=1
done <<<"$map_lines"
# listing each folder after those it includes is what makes the map acyclic
check "includes: the map lists each folder after every folder it includes (no cycle)" "" "${out_of_order%; }"

# Every edge of the code, as "node target file:line": a quoted include
# resolved against its file's directory, when that names a file of src/
# (else it is a PostgreSQL or system header).
edges=$(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"' src --include='*.c' --include='*.h' | sort |
    awk -v files="$(find src -type f | tr '\n' ' ')" '
    function node(path,   parts) {
        if (path == "src/ddb_model.c") return "ddb_model.c"
        split(path, parts, "/")
        return length(parts) > 2 ? parts[2] : "base"
    }
    BEGIN { n = split(files, list, " "); for (i = 1; i <= n; i++) exists[list[i]] = 1 }
    {
        split($0, f, ":"); file = f[1]; line = f[2]
        target = $0; sub(/^[^"]*"/, "", target); sub(/".*/, "", target)
        path = file; sub(/[^\/]*$/, "", path); path = path target
        # drop "." and "dir/.." steps
        k = split(path, steps, "/"); m = 0
        for (i = 1; i <= k; i++) {
            if (steps[i] == ".") continue
            if (steps[i] == ".." && m > 0 && kept[m] != "..") { m--; continue }
            kept[++m] = steps[i]
        }
        path = kept[1]; for (i = 2; i <= m; i++) path = path "/" kept[i]
        if (!(path in exists)) next
        if (node(file) != node(path)) print node(file), node(path), file ":" line
    }')

nodes=$( { find src -mindepth 1 -maxdepth 1 -type d -printf '%f\n'
           ls src/*.c src/*.h 2>/dev/null | while read -r f; do node_of "$f"; done; } | sort -u)

unlisted=""
for node in $nodes; do
    [ -n "${listed[$node]:-}" ] || unlisted+="$node "
done
check "includes: the map draws every folder of src/" "" "${unlisted% }"

gone=""
for node in "${!listed[@]}"; do
    grep -qx "$node" <<<"$nodes" || gone+="$node "
done
check "includes: every folder the map draws is in src/" "" "${gone% }"

# One check per folder: the includes of its files that the map does not draw.
for node in $nodes; do
    undrawn=""
    while read -r from to where; do
        [ "$from" = "$node" ] || continue
        [ -n "${drawn["$from $to"]:-}" ] || undrawn+="$where includes $to; "
    done <<<"$edges"
    case $node in
        base) name="src/*.[ch]" ;;
        ddb_model.c) name="src/ddb_model.c" ;;
        *) name="src/$node/" ;;
    esac
    check "includes: $name includes only what docs/architecture.md draws" "" "${undrawn%; }"
done

done_testing
