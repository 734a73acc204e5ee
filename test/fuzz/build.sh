#!/usr/bin/env bash
# Builds the libFuzzer harnesses test/fuzz/<name>_fuzz.c, each with the code
# it tests, into build/fuzz/<name>_fuzz (ASan + UBSan, any sanitizer report
# aborts).  With arguments, builds only the named harnesses:
#   test/fuzz/build.sh              # every harness
#   test/fuzz/build.sh expr_parse   # build/fuzz/expr_parse_fuzz only
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CC="${FUZZ_CC:-clang-14}"

# The source files and include directory each harness links with.
sources_of() {
    case "$1" in
        key_text)   echo "-Isrc/key src/key/key_codec.c" ;;
        expr_parse) echo "-Isrc/expr src/expr/reserved_words.c src/expr/expr_lex.c src/expr/expr_parse.c" ;;
        expr_eval)  echo "-Isrc/expr src/expr/reserved_words.c src/expr/expr_lex.c src/expr/expr_parse.c src/expr/expr_eval.c" ;;
        *)          return 1 ;;
    esac
}

cd "$ROOT"
if [ "$#" -gt 0 ]; then
    names=("$@")
else
    names=()
    for f in test/fuzz/*_fuzz.c; do
        n="${f##*/}"
        names+=("${n%_fuzz.c}")
    done
fi

mkdir -p build/fuzz
for name in "${names[@]}"; do
    if [ ! -f "test/fuzz/${name}_fuzz.c" ] || ! deps=$(sources_of "$name"); then
        echo "test/fuzz/build.sh: unknown harness '$name' (add it to sources_of)" >&2
        exit 2
    fi
    # shellcheck disable=SC2086  # deps is "-Idir file.c", split on purpose
    "$CC" -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
        -Wall -Wextra -Werror $deps \
        "test/fuzz/${name}_fuzz.c" -o "build/fuzz/${name}_fuzz"
done
