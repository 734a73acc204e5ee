#!/usr/bin/env bash
# Builds the fuzz harnesses and runs each once over its seed corpus
# test/fuzz/corpus/<name>/ (no fuzzing).  Silent on success.  Prints one line
# per failing harness and exits non-zero; the full output is in
# build/fuzz/replay.log.  Part of the test command (tools/test.sh).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
HARNESSES=()
for f in "$ROOT"/test/fuzz/*_fuzz.c; do
    n="${f##*/}"
    HARNESSES+=("${n%_fuzz.c}")
done
LOG="$ROOT/build/fuzz/replay.log"

mkdir -p "$ROOT/build/fuzz"
if ! bash "$ROOT/test/fuzz/build.sh" "${HARNESSES[@]}" >"$LOG" 2>&1; then
    echo "fuzz replay: FAILED: the harnesses did not build (see build/fuzz/replay.log)"
    exit 1
fi

failures=0
for name in "${HARNESSES[@]}"; do
    corpus="$ROOT/test/fuzz/corpus/$name"
    one_log="$ROOT/build/fuzz/replay-$name.log"
    if [ ! -d "$corpus" ]; then
        echo "fuzz replay: FAILED: $name: no seed corpus test/fuzz/corpus/$name/"
        failures=$((failures + 1))
        continue
    fi
    # -runs=0 on a directory runs each file once and stops; a crash input is
    # saved under build/fuzz/, never in the current directory.  -max_len=4200
    # covers a 2048-byte \x key and expressions just over the 4096-byte limit.
    if "$ROOT/build/fuzz/${name}_fuzz" -runs=0 -max_len=4200 \
            -artifact_prefix="$ROOT/build/fuzz/replay-$name-" "$corpus" >"$one_log" 2>&1; then
        rc=0
    else
        rc=$?
    fi
    if [ "$rc" -ne 0 ]; then
        reason=$(grep -m1 -E 'invariant failed|ERROR: [A-Za-z]+Sanitizer|runtime error|deadly signal' "$one_log" \
                 | sed 's/^==[0-9]*==//' || true)
        echo "fuzz replay: FAILED on a $name seed corpus input: ${reason:-see build/fuzz/replay.log}"
        failures=$((failures + 1))
    fi
    { echo "== $name (libFuzzer exit $rc)"; cat "$one_log"; } >>"$LOG"
    rm -f "$one_log"
done
[ "$failures" -eq 0 ]
