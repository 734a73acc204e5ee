#!/usr/bin/env bash
# The documented fuzz runs (docs/fuzzing.md): the ddb_key codec (key_text)
# and the condition-expression parser (expr_parse).
#
# Builds build/fuzz/<name>_fuzz for each harness test/fuzz/<name>_fuzz.c (or
# only FUZZ_TARGET=<name>), copies its seed corpus test/fuzz/corpus/<name>/
# into build/fuzz/corpus-work/<name>/ (kept between runs, so coverage
# accumulates; set FUZZ_FRESH=1 to start again from the seeds), fuzzes it for
# FUZZ_SECONDS (default 60) and prints one summary line per harness.  Exits
# non-zero if any harness found a crash, a broken invariant or a hang, after
# printing how to keep the input.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SECONDS_TO_RUN="${FUZZ_SECONDS:-60}"
FUZZ_DIR="$ROOT/build/fuzz"

HARNESSES=()
for f in "$ROOT"/test/fuzz/*_fuzz.c; do
    n="${f##*/}"
    HARNESSES+=("${n%_fuzz.c}")
done
if [ -n "${FUZZ_TARGET:-}" ]; then
    if [ ! -f "$ROOT/test/fuzz/${FUZZ_TARGET}_fuzz.c" ]; then
        echo "bench/fuzz.sh: unknown FUZZ_TARGET '$FUZZ_TARGET' (one of: ${HARNESSES[*]})" >&2
        exit 2
    fi
    HARNESSES=("$FUZZ_TARGET")
fi

bash "$ROOT/test/fuzz/build.sh" "${HARNESSES[@]}"

# Before there were several harnesses, the key codec's work corpus and crash
# files sat directly in corpus-work/ and artifacts/: move them to key_text/.
for dir in corpus-work artifacts; do
    if [ -d "$FUZZ_DIR/$dir" ] && find "$FUZZ_DIR/$dir" -maxdepth 1 -type f | grep -q .; then
        mkdir -p "$FUZZ_DIR/$dir/key_text"
        find "$FUZZ_DIR/$dir" -maxdepth 1 -type f -exec mv -t "$FUZZ_DIR/$dir/key_text/" {} +
    fi
done

# Fuzzes one harness and prints its summary line; returns 1 on a crash.
fuzz_one() {
    local name="$1"
    local bin="$FUZZ_DIR/${name}_fuzz"
    local seeds="$ROOT/test/fuzz/corpus/$name"
    local work="$FUZZ_DIR/corpus-work/$name"
    local artifacts="$FUZZ_DIR/artifacts/$name"
    local log="$FUZZ_DIR/fuzz-$name.log"
    local rc status execs rate cov ft corp files artifact summary start took

    if [ "${FUZZ_FRESH:-0}" = 1 ]; then
        rm -rf "$work"
    fi
    mkdir -p "$work" "$artifacts"
    cp "$seeds"/* "$work"/

    echo "fuzzing ${name}_fuzz for ${SECONDS_TO_RUN}s (log: build/fuzz/fuzz-$name.log)"
    # -max_len=4200: enough for a \x key of 2048 bytes, and for expressions
    # just over the 4096-byte limit.
    start=$SECONDS
    set +e
    "$bin" -max_total_time="$SECONDS_TO_RUN" -max_len=4200 -timeout=10 \
        -print_final_stats=1 -artifact_prefix="$artifacts/" "$work" >"$log" 2>&1
    rc=$?
    set -e
    took=$((SECONDS - start))

    # Figures from libFuzzer's last status line and its final stats.
    status=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$status")
    ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$status")
    corp=$(sed -n 's/.* corp: \([0-9]*\/[0-9]*[a-zA-Z]*\).*/\1/p' <<<"$status")
    files=$(find "$work" -type f | wc -l)
    artifact=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)

    summary="fuzz $name: ${SECONDS_TO_RUN}s, ${execs:-?} executions (${rate:-?} exec/s), cov ${cov:-?}, ft ${ft:-?}, corpus ${corp:-?} (${files} files in build/fuzz/corpus-work/$name)"
    if [ "$rc" -eq 0 ] && [ -z "$artifact" ]; then
        echo "$summary, no crash"
        return 0
    fi

    echo "$summary, CRASH after ${took}s (libFuzzer exit $rc): ${artifact:-see build/fuzz/fuzz-$name.log}"
    grep -m1 -E 'invariant failed|ERROR: [A-Za-z]+Sanitizer|runtime error|deadly signal|timeout' "$log" || true
    if [ -n "$artifact" ] && [ -f "$artifact" ]; then
        echo "input (hex): $(od -An -tx1 -v "$artifact" | tr -d ' \n' | cut -c1-400)"
    fi
    cat <<HELP
From the repo root:
  reproduce:  build/fuzz/${name}_fuzz <crash file>
  minimise:   build/fuzz/${name}_fuzz -minimize_crash=1 -runs=100000 \\
                  -artifact_prefix=build/fuzz/artifacts/$name/min- <crash file>
  keep it:    once fixed, copy the minimised input into the seed corpus under a
              descriptive name (cp build/fuzz/artifacts/$name/min-... \\
              test/fuzz/corpus/$name/what_it_is) and run test/fuzz/replay.sh.
HELP
    return 1
}

crashed=0
for name in "${HARNESSES[@]}"; do
    fuzz_one "$name" || crashed=$((crashed + 1))
done
[ "$crashed" -eq 0 ]
