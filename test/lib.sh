# test/lib.sh — what the shell suites share; each sources it
# (source "$(dirname "${BASH_SOURCE[0]}")/lib.sh") after setting status=0.

# Prints "<name> ... ok" when the actual value is the expected one, else
# "<name> ... FAILED (expected ..., got ...)" and sets status=1: the lines
# tools/test.sh counts.
check() {  # name, expected, actual
    if [ "$2" = "$3" ]; then echo "$1 ... ok"; else echo "$1 ... FAILED (expected $2, got $3)"; status=1; fi
}
