#!/usr/bin/env bash
# tools/check_release.sh — what a release carries besides its code
# (docs/releasing.md): the PostgreSQL License in LICENSE, named by README.md
# and debian/copyright.  Prints checks (test/lib.sh's check); needs no
# server.  The test command runs it with the code shape checks.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
status=0
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

exit $status
