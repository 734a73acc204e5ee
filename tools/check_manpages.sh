#!/usr/bin/env bash
# tools/check_manpages.sh — the manual pages, docs/man/<program>.1 (written
# by hand, installed by `make install`), against their programs: every
# program below has its page and every page is one of theirs; every option
# `<program> --help` names (each --word of its text) is a tag of the page's
# OPTIONS section (the line after a .TP), and every such tag is an option
# --help names; the page's .TH names the program, section 1, and the
# version `<program> --version` prints; the page renders without a warning,
# with groff's every warning and as lintian renders it (man --warnings);
# its SEE ALSO names the other programs' pages.  Each program is built
# first (make <program>), so that its --help is its source's.  Prints checks
# (test/lib.sh's check); needs no server.  The test command runs it with
# the code shape checks.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$ROOT/test/lib.sh"
cd "$ROOT"

# The programs, each with its manual page docs/man/<program>.1.
programs=(ddb-gateway ddb-transfer ddb-local)

# The options a program's --help names, one a line, sorted: each --word
# (lower case, so that --NAME and --FLAG, placeholders, are left out).
help_options() {  # program
    "./$1" --help | grep -oE -- '(^|[^[:alnum:]-])--[a-z][a-z0-9-]*' | sed 's/^[^-]//' | sort -u
}

# The options a page's OPTIONS section lists, one a line, sorted: the
# --words of each .TP's tag line, the roff's \- read as -.
page_options() {  # page
    awk '/^\.SH / { in_options = ($2 == "OPTIONS") }
         in_options && tag { gsub(/\\-/, "-"); while (match($0, /--[a-z][a-z0-9-]*/)) {
                                 print substr($0, RSTART, RLENGTH); $0 = substr($0, RSTART + RLENGTH) } }
         { tag = in_options && /^\.TP/ }' "$1" | sort -u
}

# What a page's .TH line says: "<NAME> <section> <version>" when it is
# `.TH NAME 1 DATE "ddb_model VERSION" ...`, else the line itself.
th_line() {  # page
    local line
    line=$(grep -m1 '^\.TH ' "$1")
    sed -n 's/^\.TH \([^ ]*\) \([^ ]*\) [^ ]* "ddb_model \([^"]*\)".*/\1 \2 \3/p' <<<"$line" | grep . || echo "$line"
}

# The words of a list that are not in another: "a b" when a and b are missing.
missing_from() {  # list, list (one item a line each)
    comm -23 <(echo "$1") <(echo "$2") | tr '\n' ' ' | sed 's/ $//'
}

pages=$(ls docs/man/*.1 2>/dev/null | sed 's|^docs/man/||; s|\.1$||' | sort)
check "every page of docs/man/ is a program's of this check" "" \
    "$(missing_from "$pages" "$(printf '%s\n' "${programs[@]}" | sort)")"

for program in "${programs[@]}"; do
    page=docs/man/$program.1
    check "$program(1): the page $page exists" yes "$([ -f "$page" ] && echo yes || echo no)"
    [ -f "$page" ] || continue
    if ! built=$(make -s "$program" 2>&1); then
        ok no "$program(1): the program builds (make $program)" "$built"
        continue
    fi

    help=$(help_options "$program")
    listed=$(page_options "$page")
    check "$program(1): every option of $program --help is in the page's OPTIONS" "" \
        "$(missing_from "$help" "$listed")"
    check "$program(1): every option of the page's OPTIONS is in $program --help" "" \
        "$(missing_from "$listed" "$help")"
    version=$("./$program" --version)
    check "$program(1): .TH names the page, section 1, and the version of $program --version" \
        "${program^^} 1 ${version#"$program "}" "$(th_line "$page")"

    check "$program(1): renders without a warning (groff -man -ww)" "" \
        "$(groff -man -ww -z -Tutf8 "$page" 2>&1)"
    check "$program(1): renders without a warning as lintian renders it (man --warnings)" "" \
        "$(LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z "$page" 2>&1 >/dev/null)"
    see_also=$(sed -n '/^\.SH "\{0,1\}SEE ALSO/,/^\.SH /p' "$page")
    unnamed=""
    for other in "${programs[@]}"; do
        [ "$other" = "$program" ] || grep -q "^\.BR $other (1)" <<<"$see_also" || unnamed+="$other "
    done
    check "$program(1): SEE ALSO names the other programs' pages" "" "${unnamed% }"
done

done_testing
