#!/usr/bin/env bash
# Runs the client examples of the docs/*.md pages against ddb-gateway on the
# cluster of tools/test.sh (PGHOST/PGPORT/PGUSER set).  The fenced blocks
# marked "gateway" of a page run in the page's order, in a fresh database
# with the extension:
#   ```sql gateway      psql (test/docs_examples.sh runs it too, as every
#                       ```sql block)
#   ```sh gateway       bash
#   ```python gateway   /usr/bin/python3 (Debian's python3-boto3)
#   ```js gateway       node, as an ES module next to the packages of
#                       test/docs_gateway/package-lock.json (the AWS SDK for
#                       JavaScript v3), which npm installs into
#                       build/docs-gateway-npm when they are not there yet
# with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (a key from
# ddb.create_access_key()), AWS_DEFAULT_REGION=us-east-1 and ENDPOINT (the
# gateway's URL) set.  Each must exit 0, and print what the ```text block
# right after it shows, if there is one ("..." in it stands for any text).  Prints TAP (test/lib.sh), a check per
# block; the gateway listens on 127.0.0.1:$DDB_DOCS_GATEWAY_PORT (55543), and
# allows the web pages of http://localhost:3000 (its cors setting).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
work_dir docs-gateway
NPM_DIR="$ROOT/build/docs-gateway-npm"
PORT=${DDB_DOCS_GATEWAY_PORT:-55543}

# prints EXPECTED PRINTED: whether the file PRINTED holds what the file
# EXPECTED shows, "..." standing for any text (trailing newlines aside)
prints() {
    /usr/bin/python3 -c 'import re, sys
expected, printed = (open(f, encoding="utf-8").read().rstrip("\n") for f in sys.argv[1:3])
sys.exit(re.fullmatch(".*".join(map(re.escape, expected.split("..."))), printed, re.DOTALL) is None)' "$1" "$2"
}

# The environment of the examples: the key and region in AWS's variables,
# nothing from ~/.aws or the caller's AWS settings.
export AWS_DEFAULT_REGION=us-east-1 AWS_CONFIG_FILE="$WORK/no-aws-config" \
    AWS_SHARED_CREDENTIALS_FILE="$WORK/no-aws-credentials" AWS_EC2_METADATA_DISABLED=true AWS_PAGER=
unset AWS_PROFILE AWS_SESSION_TOKEN AWS_REGION AWS_ENDPOINT_URL AWS_ENDPOINT_URL_DYNAMODB

for page in "$ROOT"/docs/*.md "$ROOT"/docs/models/*.md; do
    grep -qE '^```(sh|python|js) gateway *$' "$page" || continue
    name=$(basename "$page" .md)
    [ "$(basename "$(dirname "$page")")" = models ] && name="models-$name"
    dir="$WORK/$name"
    mkdir -p "$dir"
    # Block files NNN.<sql|sh|py|mjs>, and NNN.expected from a ```text block right after one.
    /usr/bin/python3 - "$page" "$dir" <<'PY'
import re, sys
page, out = sys.argv[1], sys.argv[2]
lines = open(page, encoding="utf-8").read().split("\n")
blocks, i = [], 0
while i < len(lines):
    m = re.match(r"^```(\S*)\s*(.*?)\s*$", lines[i])
    if not m:
        i += 1
        continue
    j = i + 1
    while j < len(lines) and not lines[j].startswith("```"):
        j += 1
    blocks.append((m.group(1), m.group(2), "\n".join(lines[i + 1:j]) + "\n"))
    i = j + 1
ext = {"sql": "sql", "sh": "sh", "python": "py", "js": "mjs"}
n = 0
for k, (lang, tag, text) in enumerate(blocks):
    if tag != "gateway" or lang not in ext:
        continue
    n += 1
    open(f"{out}/{n:03d}.{ext[lang]}", "w", encoding="utf-8").write(text)
    if k + 1 < len(blocks) and blocks[k + 1][0] == "text" and blocks[k + 1][1] == "":
        open(f"{out}/{n:03d}.expected", "w", encoding="utf-8").write(blocks[k + 1][2])
PY
    if ls "$dir"/*.mjs >/dev/null 2>&1 && ! { npm_packages "$ROOT/test/docs_gateway" "$NPM_DIR" && mkdir -p "$NPM_DIR/run"; }; then
        ok no "docs client examples of $name: the SDK for JavaScript" "npm could not install it"; continue
    fi

    db="docs_gateway_$name"
    fresh_db --extension "$db" >/dev/null
    read -r AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY <<<"$(q -d "$db" -F ' ' -c "SELECT * FROM ddb.create_access_key()")"
    export AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY ENDPOINT="http://127.0.0.1:$PORT"
    start_gateway "$PORT" "$dir/gateway.log" --dsn "dbname=$db" --pool 2 --access-log off --cors http://localhost:3000

    for block in "$dir"/[0-9][0-9][0-9].*; do
        base=${block%.*}
        case "$block" in
            *.sql) lang=sql; run=(psql -X -q -v ON_ERROR_STOP=1 -d "$db" -f "$block") ;;
            *.sh) lang=sh; run=(bash "$block") ;;
            *.py) lang=python; run=(/usr/bin/python3 "$block") ;;
            *.mjs) lang=js; cp "$block" "$NPM_DIR/run/$name-$(basename "$block")"; run=(node "$NPM_DIR/run/$name-$(basename "$block")") ;;
            *) continue ;;
        esac
        (cd "$dir" && PATH="/usr/bin:/bin:$PATH" timeout 60 "${run[@]}") >"$base.stdout" 2>"$base.stderr"
        code=$?
        check="docs client example $name $(basename "$block") ($lang)"
        if [ "$code" -ne 0 ]; then
            ok no "$check" "exit status $code" "$(tail -20 "$base.stderr")"
        elif [ -f "$base.expected" ] && ! prints "$base.expected" "$base.stdout"; then
            ok no "$check" "it printed something else than the page shows:" \
                "$(diff <(cat "$base.expected"; echo) <(cat "$base.stdout"; echo))"
        else
            ok yes "$check"
        fi
    done
    stop_gateway
    drop_db "$db" >/dev/null
done
done_testing
