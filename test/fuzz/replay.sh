#!/usr/bin/env bash
# Builds the fuzz harness and runs it once over every seed corpus file (no
# fuzzing).  Silent on success.  On failure prints one line and exits
# non-zero; the full output is in build/fuzz/replay.log.  Part of the test
# command (tools/test.sh).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BIN="$ROOT/build/fuzz/key_text_fuzz"
CORPUS="$ROOT/test/fuzz/corpus/key_text"
LOG="$ROOT/build/fuzz/replay.log"

mkdir -p "$ROOT/build/fuzz"
if ! bash "$ROOT/test/fuzz/build.sh" >"$LOG" 2>&1; then
    echo "fuzz replay: FAILED: the harness did not build (see build/fuzz/replay.log)"
    exit 1
fi
# -runs=0 on a directory runs each file once and stops; a crash input is
# saved under build/fuzz/, never in the current directory.
if ! "$BIN" -runs=0 -max_len=4200 -artifact_prefix="$ROOT/build/fuzz/replay-" \
        "$CORPUS" >>"$LOG" 2>&1; then
    reason=$(grep -m1 -E 'invariant failed|ERROR: [A-Za-z]+Sanitizer|runtime error|deadly signal' "$LOG" \
             | sed 's/^==[0-9]*==//' || true)
    echo "fuzz replay: FAILED on a seed corpus input: ${reason:-see build/fuzz/replay.log}"
    exit 1
fi
