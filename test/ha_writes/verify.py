# test/ha_writes/verify.py — the checks of test/ha_writes.sh: reads the
# clients' logs (test/ha_writes/load.py) and the new primary (psql), and
# prints a "<check> ... ok" or "<check> ... FAILED (why)" line per check
# (test/lib.sh's checks_from) and diagnostics.
#
#   verify.py LOG_DIRECTORY KILLED_AT SOCKET PORT
# KILLED_AT: when the primary was killed (epoch seconds).
import collections
import json
import subprocess
import sys

logs, killed, socket, port = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4]
# the answers that say a request was not applied; any other than "ok" leaves it unknown (a 503: maybe committed)
REFUSED = ("400 ConditionalCheckFailedException",)


class Request:
    """A line of a client's log."""

    def __init__(self, line):
        start, end, self.kind, self.key, self.answer = line.split(" ", 4)
        self.start, self.end = float(start), float(end)
        self.ok = self.answer == "ok"
        self.unknown = not self.ok and self.answer not in REFUSED


def read_log(name):
    return [Request(line.rstrip("\n")) for line in open("%s/%s.log" % (logs, name)) if line[0].isdigit()]


def sql(query):
    """One value (JSON) that a query on the new primary returns."""
    out = subprocess.run(["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-h", socket, "-p", port,
                          "-U", "postgres", "-d", "ddb", "-c", query], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def check(name, problems):
    """A check that passes when there are no problems (a list): else the first few, and how many."""
    if problems:
        print("%s ... FAILED (%d: %s)" % (name, len(problems), "; ".join(map(str, problems[:5]))))
    else:
        print("%s ... ok" % name)


def items(table):
    """The items of a table on the new primary, by id."""
    return {item["id"]: item for item in sql("SELECT coalesce(json_agg(item), '[]') FROM ddb.scan('%s') item" % table)}


def history(table):
    """The point-in-time recovery history of a table on the new primary, in commit order: (id, item or None)."""
    return [tuple(v) for v in sql(
        'SELECT coalesce(json_agg(json_build_array(pk::text, item) ORDER BY changed_at, change_order), \'[]\') '
        'FROM public."%s$pitr"' % table)]


def number(item, name):
    return None if item is None or name not in item else int(item[name])


puts, updates, deletes, batches, transacts = (read_log(k) for k in ("put", "update", "delete", "batch", "transact"))
counters = [r for n in (1, 2, 3) for r in read_log("counter%d" % n) if r.kind == "counter"]
reads = [r for n in (1, 2, 3) for r in read_log("counter%d" % n) if r.kind == "read"]
replays, restore = read_log("replay"), read_log("restore")
everything = puts + updates + deletes + batches + transacts + counters + reads
now = items("ha_writes")
acked = sum(r.ok for r in everything)
print("%d requests, %d acknowledged, %d answered 503, %d refused by their condition" % (
    len(everything), acked, sum(r.answer.startswith("503") for r in everything),
    sum(r.answer in REFUSED for r in everything)))

# -- the gateway's answers while the primary was gone
check("every request not acknowledged was answered 503 ServiceUnavailable (retryable) or refused by its condition",
      ["%s %s: %s" % (r.kind, r.key, r.answer) for r in everything
       if not r.ok and r.answer not in REFUSED + ("503 ServiceUnavailable",)])
first_back = []
for kind, log in (("put", puts), ("update", updates), ("delete", deletes), ("batch", batches),
                  ("transact", transacts), ("counter", counters + reads)):
    # the counter client's reads count too: while its read fails it sends no update
    failed = sorted(r.start for r in log if r.start > killed and not r.ok and r.answer not in REFUSED)
    back = sorted(r.end for r in log if failed and r.start > failed[0] and r.ok)
    check("the %s client was answered 503 after the kill, then acknowledged again" % kind,
          [] if back else ["%d failures after the kill, then no acknowledgement" % len(failed)])
    first_back += ["%s %.1f s" % (kind, back[0] - killed)] if back else []
print("the first write acknowledged after the kill, after it: " + ", ".join(first_back))

# -- 1. every acknowledged write is on the new primary
check("every acknowledged PutItem (%d) is on the new primary, with its value" % sum(r.ok for r in puts),
      [r.key for r in puts if r.ok and number(now.get(r.key), "v") != int(r.key[1:])])
problems = []
for key in sorted({r.key.split("=")[0] for r in updates}):
    mine = [(int(r.key.split("=")[1]), r) for r in updates if r.key.startswith(key + "=")]
    done = [i for i, r in mine if r.ok]
    unknown = [i for i, r in mine if r.unknown]
    last = max(done, default=None)
    v, n = number(now.get(key), "v"), number(now.get(key), "n")
    # one client in order: the item holds the last acknowledged update, or a later one answered 503 that committed
    if v != last and v not in [i for i in unknown if last is None or i > last]:
        problems.append("%s: v = %s, the last acknowledged %s" % (key, v, last))
    if n is None or not len(done) <= n <= len(done) + len(unknown):
        problems.append("%s: n = %s, %d acknowledged ADDs, %d unknown" % (key, n, len(done), len(unknown)))
check("every acknowledged UpdateItem (%d) is on the new primary: SET v the last acknowledged, ADD n counts each"
      % sum(r.ok for r in updates), problems)
check("every acknowledged DeleteItem (%d): its item is gone from the new primary" % sum(r.ok for r in deletes),
      [r.key for r in deletes if r.ok and r.key in now])
check("the items no request deleted are there (%d)" % sum(k.startswith("d") for k in now),
      ["d%06d" % i for i in range(len(deletes) + 1, 3001) if "d%06d" % i not in now])
check("every item of each acknowledged BatchWriteItem (%d batches of 5) is on the new primary"
      % sum(r.ok for r in batches),
      ["%s_%d" % (r.key, j) for r in batches if r.ok for j in range(5)
       if number(now.get("%s_%d" % (r.key, j)), "v") != int(r.key[1:])])
tokens = collections.OrderedDict()
for r in transacts:
    tokens.setdefault(r.key, []).append(r)
check("every acknowledged TransactWriteItems (%d) is whole on the new primary, its ADD applied once"
      % sum(r.ok for r in transacts),
      [t for t, tries in tokens.items() if tries[-1].ok and
       [number(now.get("t%s_%s" % (t[3:], s)), c) for s, c in (("a", "v"), ("b", "v"), ("n", "n"))] !=
       [int(t[3:]), int(t[3:]), 1]])
check("every TransactWriteItems (%d) is all or nothing" % len(tokens),
      [t for t in tokens if len({"t%s_%s" % (t[3:], s) in now for s in "abn"}) != 1])

# -- 2. conditional writes stay linearizable
versions = collections.Counter(int(r.key.split("=")[1]) for r in counters if r.ok)
unknown = sorted({int(r.key.split("=")[1]) for r in counters if r.unknown})
top = max(versions, default=0)
final = number(items("ha_counter").get("c"), "version")
print("counter: %d versions acknowledged (the last %d), %d conditional updates refused, %d answered 503 (versions %s); "
      "%s on the new primary" % (sum(versions.values()), top, sum(r.answer in REFUSED for r in counters),
                                 sum(r.unknown for r in counters), unknown, final))
check("no counter version acknowledged twice (by any two clients)",
      ["version %d acknowledged %d times" % (v, n) for v, n in sorted(versions.items()) if n > 1])
# a version no one acknowledged: its request answered 503 after it committed (the next read saw it), else a gap
check("the acknowledged versions are 1..%d without a gap, but for versions whose request answered 503" % top,
      [v for v in range(1, top + 1) if v not in versions and v not in unknown])
check("the counter on the new primary is the last acknowledged version, or above it only by versions answered 503",
      [] if final is not None and final >= top and all(v in unknown for v in range(top + 1, final + 1))
      else ["version %s on the new primary, %d the last acknowledged, %s answered 503" % (final, top, unknown)])
check("every strongly consistent read (%d) saw the versions acknowledged before it was sent" % sum(r.ok for r in reads),
      ["%s at %.3f: version %s acknowledged before" % (r.key, r.start, v) for r in reads if r.ok
       for v in [max((int(w.key.split("=")[1]) for w in counters if w.ok and w.end < r.start), default=0)]
       if int(r.key.split("=")[1]) < v])
committed = [number(item, "version") for _, item in history("ha_counter")]
check("the counter's committed versions (its PITR history, in commit order) are 0..%s: none written twice, none skipped"
      % final, [] if committed == list(range(0, (final or 0) + 1))
      else ["%d versions, the first wrong at %s" % (len(committed), next(
          (i for i, v in enumerate(committed) if v != i), len(committed)))])

# -- 3. ClientRequestTokens across the failover
before = [t for t, tries in tokens.items() if tries[-1].ok and tries[-1].end < killed]
retried = [t for t, tries in tokens.items() if tries[-1].ok and tries[0].unknown]
print("transactions: %d tokens acknowledged before the kill, %d whose first request answered 503 (%s), "
      "acknowledged on a retry with the same token" % (len(before), len(retried), ", ".join(retried)))
check("each acknowledged TransactWriteItems (%d) sent again after the failover with its token and parameters: "
      "success, as DynamoDB answers a token already used" % len([r for r in replays if r.kind == "replay"]),
      ["%s: %s" % (r.key, r.answer) for r in replays if r.kind == "replay" and not r.ok])
check("one acknowledged before the kill, sent again after it, is not applied twice (its ADD n is 1)",
      [] if before and number(now.get("t%s_n" % before[0][3:]), "n") == 1 else ["%s: %s" % (before[:1], now.get(
          "t%s_n" % before[0][3:]) if before else "none acknowledged before the kill")])
mismatch = [r for r in replays if r.kind == "mismatch"]
check("its token with other parameters after the failover: IdempotentParameterMismatchException",
      [] if [(r.key, r.answer) for r in mismatch] == [((before[:1] or [None])[0], "400 IdempotentParameterMismatchException")]
      else ["%s: %s" % (r.key, r.answer) for r in mismatch])
check("a token whose first request answered 503 during the failover, retried after it: applied exactly once",
      [t for t in retried if number(now.get("t%s_n" % t[3:]), "n") != 1] if retried else ["no such token"])

# -- 4. the point-in-time recovery history holds every acknowledged version
kept = set()
for key, item in history("ha_writes"):
    kept.add((key, "deleted" if item is None else number(item, "v")))
    if item is not None and "n" in item:
        kept.add((key, "n=%d" % number(item, "n")))
wanted = ([(r.key, int(r.key[1:])) for r in puts if r.ok] +
          [(r.key.split("=")[0], int(r.key.split("=")[1])) for r in updates if r.ok] +
          [(r.key, "deleted") for r in deletes if r.ok] +
          [("%s_%d" % (r.key, j), int(r.key[1:])) for r in batches if r.ok for j in range(5)] +
          [("t%s_%s" % (t[3:], s), int(t[3:])) for t in tokens if tokens[t][-1].ok for s in "ab"] +
          [("t%s_n" % t[3:], "n=1") for t in tokens if tokens[t][-1].ok])
print("point-in-time recovery: %d versions in the history of ha_writes, %d of acknowledged writes looked for"
      % (len(kept), len(wanted)))
check("the PITR history of ha_writes holds every acknowledged version (a delete's too)",
      [w for w in wanted if w not in kept])
check("the PITR history of ha_counter holds every acknowledged version",
      sorted(set(versions) - set(committed)))
check("RestoreTableToPointInTime (the latest restorable time) through the gateway after the failover answers",
      ["%s" % r.answer for r in restore if not r.ok])
restored = items("ha_writes_restored")
check("the restored table has the items of ha_writes, every acknowledged one with it (%d)" % len(restored),
      sorted(k for k in set(now) | set(restored) if now.get(k) != restored.get(k)))
