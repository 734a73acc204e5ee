#!/usr/bin/env bash
# tools/check_release.sh — what a release carries besides its code
# (docs/releasing.md): the PostgreSQL License in LICENSE, named by README.md
# and debian/copyright; META.json, PGXN's metadata (spec 1.0.0), with the
# versions of the control files and debian/changelog; NEWS.md's sections and
# the upgrade scripts from each frozen release.  Prints
# checks (test/lib.sh's check); needs no server.  The test command runs it
# with the code shape checks.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$ROOT/test/lib.sh"
cd "$ROOT"

# ---- the license ----
# The PostgreSQL License's grant and disclaimers, one line each as LICENSE
# wraps them, in their order.
license_lines=(
    'Permission to use, copy, modify, and distribute this software and its'
    'is hereby granted, provided that the above copyright notice and this'
    'paragraph and the following two paragraphs appear in all copies.'
    'DIRECT, INDIRECT, SPECIAL, INCIDENTAL, OR CONSEQUENTIAL DAMAGES, INCLUDING'
    'FOR A PARTICULAR PURPOSE. THE SOFTWARE PROVIDED HEREUNDER IS ON AN "AS IS"'
)
missing=""
for line in "${license_lines[@]}"; do
    grep -qxF "$line" LICENSE 2>/dev/null || missing+="'$line'; "
done
check "license: LICENSE holds the PostgreSQL License" "PostgreSQL License|" \
    "$(head -1 LICENSE 2>/dev/null)|${missing%; }"
check "license: LICENSE names its copyright holders" "1" \
    "$(grep -c '^Copyright (c) [0-9]\{4\}, the ddb_model developers$' LICENSE 2>/dev/null)"
check "license: README.md has a License section naming it and LICENSE" "yes" \
    "$(sed -n '/^## License$/,/^## /p' README.md | tr '\n' ' ' |
        grep -q 'PostgreSQL License.*\[LICENSE\](LICENSE)' && echo yes || echo no)"
# debian/copyright, machine-readable: every Files paragraph under the
# PostgreSQL License, whose text is there (it is not in common-licenses)
check "license: debian/copyright gives every file the PostgreSQL License" "PostgreSQL" \
    "$(awk '/^Files:/ { files = 1 } files && /^License:/ { print $2; files = 0 }' debian/copyright | sort -u | tr '\n' ' ' | sed 's/ $//')"
check "license: debian/copyright holds the license's text" "yes" \
    "$(sed -n '/^License: PostgreSQL$/,/^$/p' debian/copyright | grep -v '^License:' | sed 's/^ //; s/^\.$//' |
        grep -vxF -f - <(sed -n '/^Permission/,$p' LICENSE) | grep -q . && echo "no: LICENSE's lines missing" || echo yes)"
check "license: debian/copyright no longer says that no license was granted" "0" \
    "$(grep -ci 'no license has been granted\|no-license-stated' debian/copyright)"

# ---- the version, and META.json ----
ext_version=$(sed -n "s/^default_version = '\(.*\)'/\1/p" ddb_model.control)
check "version: ddb_router.control has ddb_model's default_version" "$ext_version" \
    "$(sed -n "s/^default_version = '\(.*\)'/\1/p" ddb_router.control)"
check "version: debian/changelog's upstream version is default_version" "$ext_version" \
    "$(head -1 debian/changelog | sed -n 's/^[^ ]* (\([^-)]*\)-[^)]*).*/\1/p')"

# Every release: default_version and each frozen install script
# sql/ddb_model--X.sql (docs/releasing.md, "Starting the next version").
releases=$(ls sql/ddb_model--*.sql | sed -n 's|^sql/ddb_model--\([^-]*\)\.sql$|\1|p' | sort -V)
for release in $releases; do
    # the upgrade scripts from it, one step at a time, to default_version
    at=$release steps=0
    while [ "$at" != "$ext_version" ] && [ "$steps" -lt 20 ]; do
        next=$(ls sql/ddb_model--"$at"--*.sql 2>/dev/null | sed -n "s|^sql/ddb_model--$at--\(.*\)\.sql$|\1|p" | sort -V | tail -1)
        [ -n "$next" ] || break
        at=$next steps=$((steps + 1))
    done
    check "version: the upgrade scripts lead from release $release to $ext_version" "$ext_version" "$at"
done
news_missing=""
for release in $releases $ext_version; do
    grep -q "^## $release (" NEWS.md 2>/dev/null || news_missing+="$release "
done
check "version: NEWS.md has a section for every release ($(echo $releases $ext_version))" "" "${news_missing% }"

check "META.json: valid JSON" "0" "$(/usr/bin/python3 -m json.tool META.json >/dev/null 2>&1; echo $?)"
# One line per check of PGXN's spec 1.0.0 (https://pgxn.org/meta/spec.txt):
# "<name>\t<what is wrong>", nothing after the tab when all is well.
meta_checks=$(/usr/bin/python3 - "$ext_version" <<'PY'
import json, os, re, sys
ext_version = sys.argv[1]
meta = json.load(open("META.json"))
semver = re.compile(r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$")
# PGXN's semantic version of a PostgreSQL extension version: 0.2 is 0.2.0
dist_version = ext_version + ".0" if ext_version.count(".") == 1 else ext_version
def report(name, problems):
    print(name + "\t" + "; ".join(problems))
required = ["name", "version", "abstract", "maintainer", "license", "provides", "meta-spec"]
report("the spec's required keys", ["no " + k for k in required if not meta.get(k)])
report("name ddb_model, license postgresql, meta-spec 1.0.0",
       [f"{k} is {v!r}" for k, v, want in (("name", meta.get("name"), "ddb_model"),
                                          ("license", meta.get("license"), "postgresql"),
                                          ("meta-spec", meta.get("meta-spec", {}).get("version"), "1.0.0"))
        if v != want])
report(f"version {dist_version}, the semantic version of default_version {ext_version}",
       [] if meta.get("version") == dist_version and semver.match(dist_version)
       else [f"version is {meta.get('version')!r}"])
# every extension of the distribution (a control file at its top), with the distribution's version
controls = sorted(f[:-len(".control")] for f in os.listdir(".") if f.endswith(".control"))
provides = meta.get("provides", {})
problems = [] if sorted(provides) == controls else [f"provides {sorted(provides)}, control files {controls}"]
for name, ext in sorted(provides.items()):
    if ext.get("version") != dist_version:
        problems.append(f"{name}'s version is {ext.get('version')!r}")
    # pgxn load runs CREATE EXTENSION only for a file ending in .sql
    if not (ext.get("file", "").endswith(".sql") and os.path.isfile(ext.get("file", ""))):
        problems.append(f"{name}'s file {ext.get('file')!r} is no .sql file of the tree")
    if not ext.get("abstract") or not os.path.isfile(ext.get("docfile", "")):
        problems.append(f"{name} has no abstract or no docfile of the tree")
report("provides: every extension's version, file and docfile", problems)
runtime = meta.get("prereqs", {}).get("runtime", {})
problems = [] if runtime.get("requires", {}).get("PostgreSQL", "").startswith(">= 15.0.0") else ["no runtime PostgreSQL >= 15.0.0"]
# what ddb_router's control file requires, besides ddb_model
for line in open("ddb_router.control"):
    if line.startswith("requires"):
        for req in re.findall(r"[a-z_]+", line.split("=", 1)[1]):
            if req != "ddb_model" and req not in runtime.get("recommends", {}):
                problems.append(f"{req} not recommended")
report("prereqs: PostgreSQL 15, and ddb_router's plproxy and dblink recommended", problems)
PY
)
if [ -n "$meta_checks" ]; then
    while IFS=$'\t' read -r name problems; do
        check "META.json: $name" "" "$problems"
    done <<<"$meta_checks"
fi

done_testing
