#!/usr/bin/env bash
# Builds the libFuzzer harness test/fuzz/key_text_fuzz.c with the codec into
# build/fuzz/key_text_fuzz (ASan + UBSan, any sanitizer report aborts).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CC="${FUZZ_CC:-clang-14}"
OUT="$ROOT/build/fuzz/key_text_fuzz"

mkdir -p "$ROOT/build/fuzz"
cd "$ROOT"
"$CC" -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
    -Wall -Wextra -Werror -Isrc/key \
    test/fuzz/key_text_fuzz.c src/key/key_codec.c -o "$OUT"
