#!/usr/bin/env bash
# ddb-transfer: DynamoDB's export to S3 format out of and into tables.  Runs
# the built binary against the cluster of tools/test.sh (PGHOST/PGPORT/PGUSER
# set) and prints TAP (test/lib.sh): a round trip of every
# DynamoDB type (export, import into a twin table, every item compared, GSIs
# verified), gzip, plain, several files and export directories, bad lines
# reported by file:line with nothing loaded (or skipped on request), bad
# files and arguments, garbage that must never crash it, and the two
# commands the server's exports and imports run (write-export, read-items).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
work_dir transfer
DB=ddb_transfer
DSN="host=$PGHOST port=$PGPORT user=$PGUSER dbname=$DB"
TRANSFER="$ROOT/ddb-transfer"

# run ARGS...: runs ddb-transfer, stdout in $WORK/out, stderr in $WORK/err; prints the exit status
run() { "$TRANSFER" "$@" >"$WORK/out" 2>"$WORK/err"; echo $?; }
# digest TABLE: md5 of the items a read of the table sees, in key order
digest() {
    q -c "SELECT md5(string_agg(item::text, E'\n' ORDER BY pk, sk)) FROM $1 WHERE ddb.ttl_visible(expires_at)"
}
count() { q -c "SELECT count(*) FROM $1"; }

fresh_db "$DB"
q >/dev/null <<'SQL'
CREATE EXTENSION ddb_model;
-- the source: a quoted schema, hash partitions, a GSI, TTL
SELECT ddb.create_table('Source', 'pk', 'S', 'sk', 'N', schema_name => 'Odd "Schema"', partitions => 2,
                        ttl_attribute => 'ttl');
SELECT ddb.create_index('Source', 'ByKind', 'kind', 'S', 'sk', 'N');
-- every type, nested, strings that COPY and JSON escape, numbers at DynamoDB's limits
SELECT ddb.execute('PutItem', jsonb_build_object('TableName', 'Source', 'Item', i)) FROM (VALUES
  ('{"pk": {"S": "all"}, "sk": {"N": "1"}, "kind": {"S": "types"},
     "s": {"S": "plain"}, "n": {"N": "-12.50"}, "b": {"B": "AAEC/w=="}, "t": {"BOOL": true}, "f": {"BOOL": false},
     "z": {"NULL": true}, "ss": {"SS": ["a", "b c"]}, "ns": {"NS": ["1", "2.5", "-3E+10"]},
     "bs": {"BS": ["AAE=", "AgM="]}, "l": {"L": [{"S": "x"}, {"N": "1"}, {"L": []}, {"M": {}}]},
     "m": {"M": {"deep": {"M": {"deeper": {"L": [{"M": {"n": {"N": "7"}, "set": {"SS": ["q"]}}}]}}}}},
     "empty": {"S": ""}, "emptyb": {"B": ""}}'::jsonb),
  ('{"pk": {"S": "all"}, "sk": {"N": "2"}, "kind": {"S": "strings"},
     "escapes": {"S": "back\\slash \"quoted\" tab\there\nnewline\r\u0001 spaces  kept"},
     "unicode": {"S": "héllo wörld ✓ 😀"}, "key with spaces": {"S": "a : b , c"},
     "\\weird\"key": {"S": "{\"Item\": not json}"}}'),
  ('{"pk": {"S": "all"}, "sk": {"N": "3"},
     "big": {"N": "12345678901234567890123456789012345678"}, "tiny": {"N": "1E-130"},
     "huge": {"N": "9.9999999999999999999999999999999999999E+125"}, "neg": {"N": "-0.000001"}}'),
  ('{"pk": {"S": "all"}, "sk": {"N": "4"}, "m": {"M": {"$SS": {"L": [{"S": "looks like a set"}]}}},
     "wrapped": {"M": {"$B": {"S": "not binary"}}}}'),
  ('{"pk": {"S": "ttl"}, "sk": {"N": "1"}, "ttl": {"N": "4102444800"}, "kind": {"S": "lives"}}'),
  (jsonb_build_object('pk', '{"S": "ttl"}'::jsonb, 'sk', '{"N": "2"}'::jsonb, 'kind', '{"S": "expired"}'::jsonb,
                      'ttl', jsonb_build_object('N', (extract(epoch FROM now())::bigint - 3600)::text)))
) v(i);
SELECT count(ddb.put_item('Source', jsonb_strip_nulls(jsonb_build_object('pk', 'USER#' || (i % 37), 'sk', i,
                          'kind', CASE WHEN i % 3 = 0 THEN 'k' || (i % 5) END, 'payload', repeat('p', i % 50)))))
FROM generate_series(100, 599) i;
-- twins with the same schema, plain
SELECT ddb.create_table('Target', 'pk', 'S', 'sk', 'N', ttl_attribute => 'ttl');
SELECT ddb.create_index('Target', 'ByKind', 'kind', 'S', 'sk', 'N');
SELECT ddb.create_table('Twin', 'pk', 'S', 'sk', 'N', ttl_attribute => 'ttl');
SELECT ddb.create_table('Bad', 'pk', 'S', 'sk', 'N');
SQL
SOURCE='"Odd ""Schema"""."Source"'
source_digest=$(digest "$SOURCE")
visible=$(q -c "SELECT count(*) FROM $SOURCE WHERE ddb.ttl_visible(expires_at)")

# export: DynamoDB's layout, gzip
check "export exits 0" "0" "$(run export --dsn "$DSN" --table Source --out "$WORK/export" --file-items 200)"
check "export reports the items a read sees (not the expired one)" "exported $visible items" \
    "$(grep -o "exported [0-9]* items" "$WORK/out")"
check "export writes DynamoDB's manifests and _started" "_started data manifest-files.checksum manifest-files.json manifest-summary.checksum manifest-summary.json" \
    "$(LC_ALL=C ls "$WORK/export" | tr '\n' ' ' | sed 's/ $//')"
check "manifest-summary.json has the item count and format" "$visible DYNAMODB_JSON FULL_EXPORT" \
    "$(perl -MJSON::PP -e 'local $/; my $m = decode_json(<STDIN>); print "$m->{itemCount} $m->{outputFormat} $m->{exportType}"' \
        <"$WORK/export/manifest-summary.json")"
check "data files of at most --file-items items, listed in manifest-files.json" "3 3 $visible" \
    "$(ls "$WORK/export/data" | grep -c '\.json\.gz$') $(wc -l <"$WORK/export/manifest-files.json") \
$(perl -MJSON::PP -ne '$n += decode_json($_)->{itemCount}; END { print $n }' "$WORK/export/manifest-files.json")"
check "data lines are {\"Item\":{...}}, compact as DynamoDB writes them" "$visible 0" \
    "$(zcat "$WORK"/export/data/*.json.gz | grep -c '^{"Item":{".*}}$') $(zcat "$WORK"/export/data/*.json.gz | grep -c '": {\|}, "')"
check "manifest md5Checksum is the data file's MD5" "ok" \
    "$(perl -MJSON::PP -MDigest::MD5 -MMIME::Base64 -ne '
        my $e = decode_json($_); my ($name) = $e->{dataFileS3Key} =~ m{data/([^/]+)$};
        open my $f, "<", "'"$WORK"'/export/data/$name" or die; binmode $f;
        my $md5 = Digest::MD5->new->addfile($f)->b64digest; $bad++ if "$md5==" ne $e->{md5Checksum};
        END { print $bad ? "mismatch" : "ok" }' "$WORK/export/manifest-files.json")"
check "an export into a directory that holds one is refused" "1" \
    "$(run export --dsn "$DSN" --table Source --out "$WORK/export")"
check "and says why" "1" "$(grep -c 'holds an export already' "$WORK/err")"

# import the export directory: every item, every GSI entry
check "import of the export directory exits 0" "0" "$(run import --dsn "$DSN" --table Target "$WORK/export")"
check "import reports what it loaded" "loaded $visible items into Target from 3 files" \
    "$(grep -o 'loaded [0-9]* items into Target from [0-9]* files' "$WORK/out")"
check "round trip: every item equal" "$source_digest" "$(digest '"Target"')"
check "round trip: the GSI is right" "0" "$(q -c "SELECT count(*) FROM ddb.verify_gsi('Target')")"
check "round trip: the GSI holds the items with a kind" \
    "$(q -c "SELECT count(*) FROM $SOURCE WHERE item ? 'kind' AND ddb.ttl_visible(expires_at)")" \
    "$(count '"Target:ByKind"')"
check "round trip: TTL kept (expires_at)" "4102444800" "$(q -c "SELECT expires_at FROM \"Target\" WHERE pk = 'ttl'")"
check "round trip through DynamoDB JSON: GetItem answers alike" \
    "$(q -c "SELECT ddb.execute('GetItem', '{\"TableName\": \"Source\", \"Key\": {\"pk\": {\"S\": \"all\"}, \"sk\": {\"N\": \"2\"}}}')")" \
    "$(q -c "SELECT ddb.execute('GetItem', '{\"TableName\": \"Target\", \"Key\": {\"pk\": {\"S\": \"all\"}, \"sk\": {\"N\": \"2\"}}}')")"

# plain files, several files named one by one, a directory without manifests
check "export --no-gzip exits 0" "0" "$(run export --dsn "$DSN" --table Source --out "$WORK/plain" --no-gzip)"
check "--no-gzip writes plain .json data" "$visible" "$(cat "$WORK"/plain/data/*.json | grep -c '^{"Item":')"
head -n 100 "$WORK"/plain/data/*.json >"$WORK/part1.json"
tail -n +101 "$WORK"/plain/data/*.json | gzip >"$WORK/part2.json.gz"
check "import of a plain and a gzip file" "0" "$(run import --dsn "$DSN" --table Twin "$WORK/part1.json" "$WORK/part2.json.gz")"
check "every item equal" "$source_digest" "$(digest '"Twin"')"
mkdir -p "$WORK/bare/data"
cp "$WORK"/export/data/*.json.gz "$WORK/bare/data/"
q -c 'TRUNCATE "Twin"'
check "import of a directory with data/ only" "0" "$(run import --dsn "$DSN" --table Twin "$WORK/bare")"
check "every item equal" "$source_digest" "$(digest '"Twin"')"
printf '%s\n' '{"\u0049tem": {"pk": {"S": "escaped"}, "sk": {"N": "1"}, "v": {"S": "x"}}}' \
    '  {"Item" : {"pk": {"S": "spaced"}, "sk": {"N": "1"}}}  ' '' >"$WORK/spelled.json"
printf '{"Item":{"pk":{"S":"crlf"},"sk":{"N":"1"}}}\r\n{"Item":{"pk":{"S":"last"},"sk":{"N":"1"}}}' >>"$WORK/spelled.json"
check "lines spelled otherwise (escaped key, spaces, blank line, CRLF, no final newline)" "0 4" \
    "$(run import --dsn "$DSN" --table Bad "$WORK/spelled.json") $(count '"Bad"')"
q -c 'TRUNCATE "Bad"'

# bad lines: reported with file:line, nothing loaded
good() { printf '{"Item": {"pk": {"S": "%s"}, "sk": {"N": "%s"}}}\n' "$1" "$2"; }
{ good a 1; good a 2; echo '{"Item": {"pk": {"S": "a"}, "sk": {"N": "3"}'; good a 4; } >"$WORK/badjson.json"
check "a bad JSON line fails the import" "1" "$(run import --dsn "$DSN" --table Bad "$WORK/badjson.json")"
check "it is reported as file:line" "1" "$(grep -c "^$WORK/badjson.json:3: invalid JSON" "$WORK/err")"
check "nothing is loaded" "0" "$(count '"Bad"')"
{ for i in $(seq 1 9); do good b "$i"; done; echo '{"Item": {"pk": {"S": "b"}, "sk": {"N": "10"}, "n": {"N": "x"}}}'
  good b 11; } | gzip >"$WORK/baditem.json.gz"
check "an item the server refuses fails the import (after earlier batches were written)" "1" \
    "$(run import --dsn "$DSN" --table Bad --batch 3 "$WORK/part1.json" "$WORK/baditem.json.gz")"
check "it is reported as file:line with DynamoDB's message" \
    "$WORK/baditem.json.gz:10: A value provided cannot be converted into a number" "$(head -1 "$WORK/err")"
check "nothing is loaded (the earlier batches are rolled back)" "0" "$(count '"Bad"')"
{ good c 1; echo '{"Item": {"pk": {"S": "c"}}}'; echo '{"Item": {"pk": {"N": "3"}, "sk": {"N": "3"}}}'; good c 4
  echo '{"Item": {"pk": {"S": "c"}, "sk": {"N": "5"}}, "Other": 1}'; echo '[]'; good c 7; } >"$WORK/mixed.json"
check "the first bad line is the one reported" "$WORK/mixed.json:2: One or more parameter values were invalid: Missing the key sk in the item" \
    "$(run import --dsn "$DSN" --table Bad "$WORK/mixed.json" >/dev/null; head -1 "$WORK/err")"

# --skip-bad-lines: the good lines load, every bad one is reported, status 3
check "--skip-bad-lines exits 3 when it skipped lines" "3" \
    "$(run import --dsn "$DSN" --table Bad --skip-bad-lines --batch 2 "$WORK/badjson.json" "$WORK/baditem.json.gz" "$WORK/mixed.json")"
check "it loads every good line" "16" "$(count '"Bad"')"
check "it reports every bad line, in order" "badjson.json:3 baditem.json.gz:10 mixed.json:2 mixed.json:3 mixed.json:5 mixed.json:6" \
    "$(grep -o '[a-z.]*json[.gz]*:[0-9]*:' "$WORK/err" | sed 's/:$//' | tr '\n' ' ' | sed 's/ $//')"
check "the summary counts them" "1" "$(grep -c 'loaded 16 items into Bad from 3 files in .*; skipped 6 bad lines' "$WORK/out")"
q -c 'TRUNCATE "Bad"'

# bad files and arguments
check "a missing table" "1 1" \
    "$(run import --dsn "$DSN" --table Nope "$WORK/part1.json") $(grep -c 'no table named Nope' "$WORK/err")"
check "a missing table on export" "1 1" \
    "$(run export --dsn "$DSN" --table Nope --out "$WORK/nope") $(grep -c 'no table named Nope' "$WORK/err")"
check "a bad DSN: one line, the reason and what to check" "1 1 1" \
    "$(run import --dsn "$DSN port=1" --table Bad "$WORK/part1.json") $(wc -l <"$WORK/err") \
$(grep -c 'cannot connect: connection to server .* failed: .*; check --dsn, and that the server runs$' "$WORK/err")"
check "a database without ddb_model" "1 1" \
    "$(run import --dsn "${DSN/dbname=$DB/dbname=postgres}" --table Bad "$WORK/part1.json") $(grep -c 'no ddb_model extension' "$WORK/err")"
check "a missing file loads nothing, not even the files before it" "1 0" \
    "$(run import --dsn "$DSN" --table Bad "$WORK/part1.json" "$WORK/missing.json") $(count '"Bad"')"
check "a directory that is no export" "1" "$(run import --dsn "$DSN" --table Bad "$WORK/bare/data")"
first=$(ls "$WORK"/export/data/*.json.gz | head -1)
head -c $(( $(stat -c %s "$first") / 2 )) "$first" >"$WORK/truncated.json.gz"
check "a truncated gzip file loads nothing, even with --skip-bad-lines" "1 0" \
    "$(run import --dsn "$DSN" --table Bad --skip-bad-lines "$WORK/truncated.json.gz") $(count '"Bad"')"
check "and says so" "1" "$(grep -c 'truncated.json.gz: unexpected end of file' "$WORK/err")"
cp -r "$WORK/export" "$WORK/short"
perl -i -pe 's/"itemCount":(\d+)/"itemCount":@{[$1 + 1]}/ if $. == 1' "$WORK/short/manifest-files.json"
check "a data file with fewer items than its manifest lists loads nothing" "1 0" \
    "$(run import --dsn "$DSN" --table Bad "$WORK/short") $(count '"Bad"')"
check "bad arguments exit 2" "2 2 2" \
    "$(run import --dsn "$DSN" --table Bad) $(run export --dsn "$DSN" --table Bad) $(run frobnicate)"

# without --dsn: libpq's defaults and the PG* variables (PGHOST, PGPORT and PGUSER are set here), as for psql
check "import without --dsn loads into the database PGDATABASE names" "0 100" \
    "$(PGDATABASE=$DB run import --table Bad "$WORK/part1.json") $(count '"Bad"')"
q -c 'TRUNCATE "Bad"'
check "export without --dsn reads the database PGDATABASE names" "0 exported $visible items" \
    "$(PGDATABASE=$DB run export --table Source --out "$WORK/nodsn") $(grep -o "exported [0-9]* items" "$WORK/out")"
check "without --dsn nor PGDATABASE, libpq's default database (the user's: no ddb_model there)" "1 1" \
    "$(env -u PGDATABASE "$TRANSFER" import --table Bad "$WORK/part1.json" 2>"$WORK/err" >/dev/null; echo $?) \
$(grep -c 'no ddb_model extension' "$WORK/err")"
check "an unreachable server: exit 1, one line saying what to do" "1 1 1" \
    "$(PGPORT=1 run import --table Bad "$WORK/part1.json") $(wc -l <"$WORK/err") \
$(grep -c 'cannot connect: .*; give --dsn CONNINFO or set PGHOST, PGPORT, PGDATABASE, PGUSER, and check that the server runs$' "$WORK/err")"

# the progress line: on standard error when it is a terminal (script, of util-linux, runs the tool under one)
# pty FILE COMMAND: runs the shell command under a pseudo-terminal, what the terminal got in FILE; prints the exit status
pty() { script -qefc "$2" /dev/null </dev/null >"$1" 2>&1; echo $?; }
# screen FILE: the lines as the terminal shows them at the end (a line's last rewrite after \r, trailing spaces cut)
screen() { perl -pe 's/\r\n/\n/g; s/.*\r//; s/ +$//' "$1"; }
# draws FILE: how many times the progress line was drawn
draws() { perl -ne '$n++ while /(^|\r)ddb-transfer: [0-9]+ (items|of about)/g; END { print $n + 0 }' "$1"; }
# human BYTES: as the progress line writes sizes from 1000 bytes on
human() { perl -e 'printf "%.1f kB", $ARGV[0] / 1000' "$1"; }
cmd() { printf '%q ' "$TRANSFER" "$@"; }
check "on a terminal, import shows the progress line, ended by a newline before the summary" \
    "0|ddb-transfer: 100 items, $(human "$(stat -c %s "$WORK/part1.json")") of $(human "$(stat -c %s "$WORK/part1.json")") (100%), R items/s|ddb-transfer: loaded 100 items into Bad from 1 file" \
    "$(pty "$WORK/tty" "$(cmd import --dsn "$DSN" --table Bad "$WORK/part1.json")")|$(screen "$WORK/tty" \
        | sed -E 's/[0-9]+ items\/s/R items\/s/; s/ in [0-9.]+ s .*//' | paste -sd '|')"
q -c 'TRUNCATE "Bad"'
check "from a pipe, whose size is unknown: the bytes read, no fraction nor time left" \
    "0|ddb-transfer: 100 items, $(human "$(stat -c %s "$WORK/part1.json")"), R items/s|ddb-transfer: loaded 100 items into Bad from 1 file" \
    "$(pty "$WORK/tty" "cat $(printf %q "$WORK/part1.json") | $(cmd import --dsn "$DSN" --table Bad /dev/stdin)")|$(screen "$WORK/tty" \
        | sed -E 's/[0-9]+ items\/s/R items\/s/; s/ in [0-9.]+ s .*//' | paste -sd '|')"
q -c 'TRUNCATE "Bad"'
q -c "ANALYZE $SOURCE"
check "on a terminal, export shows the progress line, of the table's estimated items (ANALYZE)" \
    "0|ddb-transfer: $visible items (100%), $(human "$(zcat "$WORK"/export/data/*.json.gz | wc -c)"), R items/s|ddb-transfer: exported $visible items" \
    "$(pty "$WORK/tty" "$(cmd export --dsn "$DSN" --table Source --out "$WORK/tty-export")")|$(screen "$WORK/tty" \
        | sed -E 's/[0-9]+ items\/s/R items\/s/; s/ of Source to .*//' | paste -sd '|')"
check "no progress line when stderr is a file, stdout a terminal" "0 0 0 1" \
    "$(pty "$WORK/tty" "$(cmd import --dsn "$DSN" --table Bad "$WORK/part1.json") 2>$(printf %q "$WORK/tty-err")") \
$(draws "$WORK/tty") $(draws "$WORK/tty-err") $(grep -c 'loaded 100 items' "$WORK/tty")"
check "no progress line when stderr is a pipe" "0 0 1" \
    "$(pty "$WORK/tty" "$(cmd export --dsn "$DSN" --table Source --out "$WORK/tty-pipe") 2>&1 | cat") \
$(draws "$WORK/tty") $(grep -c "exported $visible items" "$WORK/tty")"
check "no progress line with --quiet on a terminal" "0 0 1 0 0 1" \
    "$(pty "$WORK/tty" "$(cmd import --dsn "$DSN" --table Bad --quiet "$WORK/part1.json")") $(draws "$WORK/tty") \
$(grep -c 'loaded 100 items' "$WORK/tty") \
$(pty "$WORK/tty" "$(cmd export --dsn "$DSN" --table Source --quiet --out "$WORK/tty-quiet")") $(draws "$WORK/tty") \
$(grep -c "exported $visible items" "$WORK/tty")"
q -c 'TRUNCATE "Bad"'
# a long import (seconds) that fails at its last file: the line drawn as it goes, then erased for the messages
perl -e 'printf qq({"Item": {"pk": {"S": "m%d"}, "sk": {"N": "%d"}, "v": {"S": "%s"}}}\n), $_ % 97, $_, "v" x 40
         for 1 .. 150000' | gzip -1 >"$WORK/many.json.gz"
started=$(date +%s.%N)
check "a long import on a terminal, stopped by a bad line, exits 1" "1" \
    "$(pty "$WORK/tty" "$(cmd import --dsn "$DSN" --table Bad "$WORK/many.json.gz" "$WORK/badjson.json")")"
seconds=$(perl -e 'printf "%.2f", $ARGV[1] - $ARGV[0]' "$started" "$(date +%s.%N)")
check "it draws the line as it goes, at most 4 times a second" "ok" \
    "$(perl -e 'my ($n, $s) = @ARGV; print $n >= 2 && $n <= 4 * $s + 1 ? "ok" : "$n draws in $s s"' "$(draws "$WORK/tty")" "$seconds")"
check "with the bytes of the files, their percentage and the time left" "1" \
    "$(tr '\r' '\n' <"$WORK/tty" | grep -cm1 -E '^ddb-transfer: [0-9]+ items, [0-9.]+ (kB|MB) of [0-9.]+ (kB|MB) \([0-9]+%\), [0-9]+ items/s, [0-9]+:[0-9]{2} left')"
check "and erases it for the messages, and draws it no more: the terminal shows them alone" \
    "$WORK/badjson.json:3: invalid JSON|ddb-transfer: nothing loaded into Bad 0" \
    "$(screen "$WORK/tty" | sed 's/: invalid JSON.*/: invalid JSON/' | paste -sd '|') $(draws <(perl -0pe 's/.*?invalid JSON//s' "$WORK/tty"))"

# garbage never crashes it: every prefix of a line, random bytes, odd JSON
line='{"Item": {"pk": {"S": "fuzz"}, "sk": {"N": "1"}, "m": {"M": {"l": {"L": [{"N": "1"}, {"B": "AA=="}]}}}}}'
perl -e 'my $l = shift; print substr($l, 0, $_), "\n" for 1 .. length $l' "$line" >"$WORK/prefixes.json"
check "every proper prefix of a line is a bad line, the whole line loads" "3 1 $(( ${#line} - 1 ))" \
    "$(run import --dsn "$DSN" --table Bad --skip-bad-lines "$WORK/prefixes.json") $(count '"Bad"') $(grep -c 'prefixes.json:' "$WORK/err")"
perl -e 'srand(7); for (1 .. 2000) { print map({ chr(int(rand(256))) } 1 .. int(rand(300))), "\n" }' >"$WORK/random.bin"
check "random bytes: skipped, no crash" "3" "$(run import --dsn "$DSN" --table Bad --skip-bad-lines "$WORK/random.bin")"
check "random bytes without --skip-bad-lines: refused, no crash" "1" "$(run import --dsn "$DSN" --table Bad "$WORK/random.bin")"
gzip -c "$WORK/random.bin" | head -c 20000 >"$WORK/random.gz"
check "a gzip file cut short of random bytes: no crash" "1" "$(run import --dsn "$DSN" --table Bad "$WORK/random.gz")"
{ echo '{"Item": {"pk": {"S": "x"}, "sk": {"N": "1"}, "d": '"$(printf '{"M": {"a": %.0s' $(seq 40))"'{"S": "deep"}'"$(printf '}}%.0s' $(seq 40))"'}}'
  echo '{"Item": {"pk": {"S": "x"}, "sk": {"N": "2"}}, "Item": {"pk": {"S": "x"}, "sk": {"N": "3"}}}'
  echo '{"Item": {"pk": {"S": "x"}, "sk": {"N": "99999999999999999999999999999999999999999"}}}'
  echo '{"Item": {"pk": {"S": "\ud800"}, "sk": {"N": "1"}}}'
  echo '{"Item": {"pk": {"S": "x\u0000y"}, "sk": {"N": "1"}}}'
  echo '{"Item": {"pk": {"SS": ["x"]}, "sk": {"N": "1"}}}'
  echo '{"Item": {"pk": {"S": "x"}, "sk": {"N": "1"}, "v": {"Q": "unknown type"}}}'
  echo '{"Item": {"pk": {"S": "x"}, "sk": {"N": "1"}, "v": {"S": "a", "N": "1"}}}'
  echo '{"Item": {"pk": {"S": "x"}, "sk": {"N": "1"}, "v": 12345678901234567890123}}'
  echo '{"Item": {}}'
  echo '{"Item": {"pk": {"S": "x"}, "sk": {"N": "1"}, "b": {"B": "***"}}}'
} >"$WORK/odd.json"
check "odd JSON (deep nesting, duplicates, bad numbers, surrogates, NUL, unknown types): each line refused" "3 11" \
    "$(run import --dsn "$DSN" --table Bad --skip-bad-lines "$WORK/odd.json") $(grep -c 'odd.json:' "$WORK/err")"

# the two commands the server's exports and imports run (docs/transfer.md): files only, no connection
rows() { printf '%s\t%s\n' 10 '{"pk": {"S": "a"}, "v": {"S": "back\\\\slash"}}' 10 '{"pk": {"S": "b"}}'; }
server_export() { "$TRANSFER" write-export --out "$WORK/server/$1" --export-id 01700000000000-0000abcd \
                      --table-arn arn:aws:dynamodb:ddb-model:000000000000:table/T --table-id 00000000-0000-0000-0000-000000000000 \
                      --s3-bucket b --quiet; }
check "write-export writes the rows of its input, ended by \\., as an export" "0 2 b" \
    "$({ rows; printf '\\.\n'; } | server_export done >/dev/null 2>&1; echo $?) $(zcat "$WORK"/server/done/data/*.json.gz | wc -l) $(
       perl -ne 'print $1 if /"s3Bucket":"([^"]*)"/' "$WORK/server/done/manifest-summary.json")"
check "and as DynamoDB's lines, COPY's escapes undone" '{"Item":{"pk":{"S":"a"},"v":{"S":"back\\slash"}}}' \
    "$(zcat "$WORK"/server/done/data/*.json.gz | head -1)"
check "rows that end without \\. (a writer stopped) leave no manifest-summary.json" "1 no summary" \
    "$(rows | server_export cut >/dev/null 2>&1; echo $?) $(test -e "$WORK/server/cut/manifest-summary.json" && echo summary || echo no summary)"
mkdir -p "$WORK/bucket/in/sub" "$WORK/bucket/other"
printf '%s\n' '{"Item": {"pk": {"S": "a"}}}' '' 'bad' >"$WORK/bucket/in/one.json"
printf '%s\n' '{"Item": {"pk": {"S": "b"}}}' | gzip >"$WORK/bucket/in/sub/two.json.gz"
printf '%s\n' '{"Item": {"pk": {"S": "c"}}}' >"$WORK/bucket/other/three.json"
ln -s "$WORK/bucket/other/three.json" "$WORK/bucket/in/link.json"
check "read-items: the files under the key prefix, in key order, their lines as records (no link followed)" \
    "F in/one.json|I 0 {\"pk\": {\"S\": \"a\"}}|E 1 invalid JSON: '[' or '{' expected near 'bad' (column 3)|F in/sub/two.json.gz|I 0 {\"pk\": {\"S\": \"b\"}}|S 2" \
    "$("$TRANSFER" read-items --bucket-dir "$WORK/bucket" --key-prefix in/ | tr '\t' ' ' | sed 's/^S \([0-9]*\) .*/S \1/' | paste -sd '|')"
check "read-items refuses more files than its limit" "1 more than 1 files under the prefix" \
    "$("$TRANSFER" read-items --bucket-dir "$WORK/bucket" --max-files 1 >/dev/null 2>"$WORK/err"; echo $?) $(grep -o 'more than 1 files under the prefix' "$WORK/err")"

drop_db "$DB"
done_testing
