#!/usr/bin/env bash
# The documented fuzz run of the ddb_key codec (docs/fuzzing.md).
#
# Builds build/fuzz/key_text_fuzz, copies the seed corpus into
# build/fuzz/corpus-work (kept between runs, so coverage accumulates; set
# FUZZ_FRESH=1 to start again from the seeds), fuzzes for FUZZ_SECONDS
# (default 60) and prints one summary line.  Exits non-zero on a crash,
# a broken invariant or a hang, after printing how to keep the input.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SECONDS_TO_RUN="${FUZZ_SECONDS:-60}"
BIN="$ROOT/build/fuzz/key_text_fuzz"
SEEDS="$ROOT/test/fuzz/corpus/key_text"
WORK="$ROOT/build/fuzz/corpus-work"
ARTIFACTS="$ROOT/build/fuzz/artifacts"
LOG="$ROOT/build/fuzz/fuzz.log"

bash "$ROOT/test/fuzz/build.sh"

if [ "${FUZZ_FRESH:-0}" = 1 ]; then
    rm -rf "$WORK"
fi
mkdir -p "$WORK" "$ARTIFACTS"
cp "$SEEDS"/* "$WORK"/

echo "fuzzing key_text_fuzz for ${SECONDS_TO_RUN}s (log: build/fuzz/fuzz.log)"
set +e
"$BIN" -max_total_time="$SECONDS_TO_RUN" -max_len=4200 -timeout=10 \
    -print_final_stats=1 -artifact_prefix="$ARTIFACTS/" "$WORK" >"$LOG" 2>&1
rc=$?
set -e

# Figures from libFuzzer's last status line and its final stats.
status=$(grep -E '^#[0-9]+' "$LOG" | tail -1 || true)
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$LOG" | tail -1)
rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$LOG" | tail -1)
cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$status")
ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$status")
corp=$(sed -n 's/.* corp: \([0-9]*\/[0-9]*[a-zA-Z]*\).*/\1/p' <<<"$status")
files=$(find "$WORK" -type f | wc -l)
artifact=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$LOG" | tail -1)

summary="fuzz: ${SECONDS_TO_RUN}s, ${execs:-?} executions (${rate:-?} exec/s), cov ${cov:-?}, ft ${ft:-?}, corpus ${corp:-?} (${files} files in build/fuzz/corpus-work)"
if [ "$rc" -eq 0 ] && [ -z "$artifact" ]; then
    echo "$summary, no crash"
    exit 0
fi

echo "$summary, CRASH (libFuzzer exit $rc): ${artifact:-see build/fuzz/fuzz.log}"
grep -m1 -E 'invariant failed|ERROR: [A-Za-z]+Sanitizer|runtime error|deadly signal|timeout' "$LOG" || true
if [ -n "$artifact" ] && [ -f "$artifact" ]; then
    echo "input (hex): $(od -An -tx1 -v "$artifact" | tr -d ' \n' | cut -c1-400)"
fi
cat <<HELP
From the repo root:
  reproduce:  build/fuzz/key_text_fuzz <crash file>
  minimise:   build/fuzz/key_text_fuzz -minimize_crash=1 -runs=100000 \\
                  -artifact_prefix=build/fuzz/artifacts/min- <crash file>
  keep it:    once fixed, copy the minimised input into the seed corpus under a
              descriptive name (cp build/fuzz/artifacts/min-... \\
              test/fuzz/corpus/key_text/n_what_it_is) and run test/fuzz/replay.sh.
HELP
exit 1
