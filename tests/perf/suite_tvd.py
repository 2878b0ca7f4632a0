"""Accuracy figure of tests/perf/suite.sh: the total variation distance between the activity
sampler's and pg_wait_sampling's distributions of client backends' waits over one window, from
two /metrics scrapes of a daemon sampling one server with both (targets "activity" and
"wait_sampling"). Both sides leave out the same samples: backends without a wait event (CPU and
pgwaitprof's Kernel rows, which pg_wait_sampling 1.1 records as no event) and Client waits
(pg_wait_sampling keeps no session state to tell an idle ClientRead from one in a transaction).

    suite_tvd.py BEFORE AFTER WORKLOAD RUN   -> one JSON line
"""
import json
import re
import sys

SERIES = re.compile(
    r'pgwaitprof_wait_samples_total\{target="(\w+)",backend_type="client backend",'
    r'state="([^"]*)",wait_event_type="([^"]*)",wait_event="([^"]*)"\} (\S+)')
LEFT_OUT = ("CPU", "Kernel", "Client")


def load(path):
    samples = {}
    for line in open(path):
        match = SERIES.match(line)
        if not match or match.group(2) == "idle" or match.group(3) in LEFT_OUT:
            continue
        key = (match.group(1), match.group(3), match.group(4))
        samples[key] = samples.get(key, 0) + float(match.group(5))
    return samples


def distribution(delta, target, by_class):
    counts = {}
    for (name, event_type, event), count in delta.items():
        if name == target:
            key = event_type if by_class else f"{event_type} | {event}"
            counts[key] = counts.get(key, 0) + count
    total = sum(counts.values())
    return {key: count / total for key, count in counts.items()} if total else {}, total


def tvd(p, q):
    return 0.5 * sum(abs(p.get(key, 0) - q.get(key, 0)) for key in set(p) | set(q))


def main():
    before, after = load(sys.argv[1]), load(sys.argv[2])
    delta = {key: after[key] - before.get(key, 0) for key in after}
    ours, our_total = distribution(delta, "activity", False)
    theirs, their_total = distribution(delta, "wait_sampling", False)
    our_classes, _ = distribution(delta, "activity", True)
    their_classes, _ = distribution(delta, "wait_sampling", True)
    # The events that differ most, signed (ours minus theirs), for docs/performance.md.
    largest = sorted(set(ours) | set(theirs),
                     key=lambda key: -abs(ours.get(key, 0) - theirs.get(key, 0)))[:3]
    print(json.dumps({
        "part": "accuracy", "workload": sys.argv[3], "run": int(sys.argv[4]),
        "tvd_by_event": round(tvd(ours, theirs), 4),
        "tvd_by_class": round(tvd(our_classes, their_classes), 4),
        "samples_activity": int(our_total), "samples_wait_sampling": int(their_total),
        "largest_differences": {key: round(ours.get(key, 0) - theirs.get(key, 0), 4)
                                for key in largest}}))


if __name__ == "__main__":
    main()
