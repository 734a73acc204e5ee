"""bench/failover/check.py: the figures and the history check of bench/failover.sh.

    check.py LOG_DIR FINAL ROUNDS

LOG_DIR holds the load clients' logs (load.py: a line a request), FINAL the
counters as the final primary has them (a line each: key, version, history
as JSON: the ids of the writes that made versions 1, 2, ...), ROUNDS a line
per round: number, kind, the time its disruption began, the time the
primary was killed, the time the killed primary was started again (rounds
where the secondary was stopped first) or -, the seconds tools/ha.sh took
to see a new primary (or -), and the seconds its rejoin took until the
formation had a primary and a secondary again.

Prints a Markdown table of the rounds (time from the kill to the first
acknowledged write sent after the last request that failed, requests
failed by answer, throughput before and after)
and the history check: acknowledged writes lost (an acknowledged update
whose id is not its counter's history at its version), versions written
twice, versions no request wrote, refused updates applied anyway, reads of
a value no write made, and reads or updates older than an operation that
had completed before they were sent (linearizability: each counter a
register whose versions go up by one).  Exits 1 when any of these is found.
"""
import bisect
import collections
import glob
import json
import os
import sys

CONFLICT = "400 ConditionalCheckFailedException"
WINDOW = 10.0


def read_requests(log_dir):
    """Every request of the logs as a dict, in the order sent."""
    requests = []
    for path in glob.glob(os.path.join(log_dir, "*.log")):
        with open(path) as log:
            for line in log:
                fields = line.split(" ", 7)
                if len(fields) < 8:
                    continue
                requests.append(dict(sent=float(fields[0]), answered=float(fields[1]), worker=fields[2],
                                     op=fields[3], key=fields[4], version=fields[5], writer=fields[6],
                                     answer=fields[7].strip()))
    return sorted(requests, key=lambda r: r["sent"])


def read_final(path):
    """Each counter's final version and history (the writers of versions 1, 2, ...)."""
    final = {}
    with open(path) as lines:
        for line in lines:
            key, version, history = line.rstrip("\n").split("\t")
            final[key] = (int(version), json.loads(history))
    return final


def read_rounds(path):
    """The rounds: number, kind, disruption's start, kill, primary's return, promotion and rejoin seconds."""
    rounds = []
    with open(path) as lines:
        for line in lines:
            number, kind, began, killed, back, promoted, rejoined = line.split()
            rounds.append(dict(number=number, kind=kind, began=float(began), killed=float(killed),
                               back=None if back == "-" else float(back), promoted=promoted, rejoined=rejoined))
    return rounds


def failed(request):
    """True when the request was not answered ok and not refused by its condition."""
    return request["answer"] not in ("ok", CONFLICT)


def round_figures(requests, rnd, end):
    """A round's time to the first acknowledged write, failures by answer, throughput before and after."""
    during = [r for r in requests if rnd["began"] <= r["answered"] < end]
    # the outage ends with the last request that failed: requests in flight at the kill may still succeed
    last_failure = max((r["sent"] for r in during if failed(r) and r["answered"] >= rnd["killed"]),
                       default=rnd["killed"])
    since = max(last_failure, rnd["back"] or 0)
    first = min((r["answered"] for r in during
                 if r["op"] == "update" and r["answer"] == "ok" and r["sent"] >= since), default=None)
    failures = collections.Counter(r["answer"] for r in during if failed(r))
    before = sum(1 for r in requests if r["answer"] == "ok" and rnd["began"] - WINDOW <= r["answered"] < rnd["began"])
    after = first and sum(1 for r in requests if r["answer"] == "ok" and first <= r["answered"] < first + WINDOW)
    return dict(first=None if first is None else first - rnd["killed"],
                first_after_back=None if first is None or rnd["back"] is None else first - rnd["back"],
                failures=failures, before=before / WINDOW, after=None if after is None else after / WINDOW,
                total=len(during))


def history_check(requests, final):
    """The history check's findings: a list of (kind, description), empty when the history is sound."""
    findings = []
    updates = collections.defaultdict(dict)  # key -> writer -> request
    for r in requests:
        if r["op"] == "update":
            updates[r["key"]][r["writer"]] = r
    for key, (version, history) in sorted(final.items()):
        if version != len(history):
            findings.append(("history", "%s: version %d with %d writes in its history" % (key, version, len(history))))
        position = {}
        for at, writer in enumerate(history, 1):
            if writer in position:
                findings.append(("twice", "%s: write %s at versions %d and %d" % (key, writer, position[writer], at)))
            position[writer] = at
            request = updates[key].get(writer)
            if request is None or int(request["version"]) != at:
                findings.append(("phantom", "%s: version %d by %s, which no request wrote" % (key, at, writer)))
            elif request["answer"] == CONFLICT:
                findings.append(("refused applied", "%s: version %d by %s, refused by its condition" % (key, at, writer)))
        for writer, request in updates[key].items():
            if request["answer"] == "ok" and position.get(writer) != int(request["version"]):
                findings.append(("lost", "%s: acknowledged version %s by %s (answered %.3f) is not in the history"
                                 % (key, request["version"], writer, request["answered"])))
    for r in requests:
        if r["op"] == "get" and r["answer"] == "ok" and r["version"] != "0":
            history = final.get(r["key"], (0, []))[1]
            at = int(r["version"])
            if at > len(history) or history[at - 1] != r["writer"]:
                findings.append(("read unwritten", "%s: read version %s by %s (answered %.3f), not the history's"
                                 % (r["key"], r["version"], r["writer"], r["answered"])))
    findings.extend(real_time_findings(requests))
    return findings


def real_time_findings(requests):
    """Reads older, or updates not newer, than an operation on their counter that completed before they were sent."""
    findings = []
    by_key = collections.defaultdict(list)
    for r in requests:
        if r["answer"] == "ok":
            by_key[r["key"]].append(r)
    for key, done in by_key.items():
        done.sort(key=lambda r: r["answered"])
        answered = [r["answered"] for r in done]
        highest, newest = [], 0
        for r in done:
            newest = max(newest, int(r["version"]))
            highest.append(newest)
        for r in done:
            before = bisect.bisect_left(answered, r["sent"])
            if before == 0:
                continue
            floor = highest[before - 1]
            version = int(r["version"])
            if version < floor or (r["op"] == "update" and version == floor):
                findings.append(("stale", "%s: %s of version %d sent at %.3f, after version %d had been answered"
                                 % (key, r["op"], version, r["sent"], floor)))
    return findings


def seconds(value):
    """A time in seconds to the tenth, or - ."""
    return "-" if value is None else "%.1f" % value


def main(log_dir, final_path, rounds_path):
    requests = read_requests(log_dir)
    final = read_final(final_path)
    rounds = read_rounds(rounds_path)
    print("| round | kind | promoted (tools/ha.sh) | kill → first write | failed requests (answer: count) | "
          "req/s before | req/s after | rejoin |")
    print("|---|---|---|---|---|---|---|---|")
    firsts = collections.defaultdict(list)
    for i, rnd in enumerate(rounds):
        end = rounds[i + 1]["began"] if i + 1 < len(rounds) else float("inf")
        f = round_figures(requests, rnd, end)
        first = seconds(f["first"])
        if f["first_after_back"] is not None:
            first += " (%s after its return)" % seconds(f["first_after_back"])
        failures = ", ".join("%s: %d" % item for item in sorted(f["failures"].items())) or "none"
        print("| %s | %s | %s s | %s s | %s | %.0f | %s | %s s |"
              % (rnd["number"], rnd["kind"], rnd["promoted"], first, failures, f["before"],
                 "-" if f["after"] is None else "%.0f" % f["after"], rnd["rejoined"]))
        firsts[rnd["kind"]].append(f["first"])
    print()
    for rnd in rounds:
        if rnd["back"] is not None:
            alone = sum(1 for r in requests if r["op"] == "update" and r["answer"] == "ok"
                        and rnd["began"] <= r["answered"] < rnd["killed"])
            print("round %s: %d updates acknowledged by the primary alone, between the secondary's stop and the kill"
                  % (rnd["number"], alone))
    for kind, values in firsts.items():
        known = sorted(v for v in values if v is not None)
        if known:
            print("%s: kill → first write, median %.1f s, max %.1f s over %d rounds%s"
                  % (kind, known[(len(known) - 1) // 2], known[-1], len(values),
                     "" if len(known) == len(values) else " (%d without a write)" % (len(values) - len(known))))
    acked = sum(1 for r in requests if r["op"] == "update" and r["answer"] == "ok")
    uncertain = [r for r in requests if r["op"] == "update" and failed(r)]
    applied = sum(1 for r in uncertain if r["writer"] in final.get(r["key"], (0, []))[1])
    counts = collections.Counter(r["answer"] for r in requests)
    print("requests: %d (%s)" % (len(requests), ", ".join("%s: %d" % item for item in sorted(counts.items()))))
    print("updates acknowledged: %d; failed: %d, of which %d applied all the same (answered with an error after"
          " the commit, or the commit's outcome unknown)" % (acked, len(uncertain), applied))
    findings = history_check(requests, final)
    kinds = collections.Counter(kind for kind, _ in findings)
    print("acknowledged writes lost: %d" % kinds["lost"])
    print("linearizability violations: %d (%s)" % (len(findings) - kinds["lost"],
                                                   ", ".join("%s: %d" % k for k in sorted(kinds.items()) if k[0] != "lost")
                                                   or "none"))
    for _, text in findings[:50]:
        print("  " + text)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
