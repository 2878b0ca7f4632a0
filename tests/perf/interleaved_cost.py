"""The tps cost of a sampler paused and resumed within one pgbench run (tests/perf/suite.sh, part
1b), as one JSON object.

    interleaved_cost.py PROGRESS PHASES

PROGRESS: pgbench's stderr with -P 1 --progress-timestamp ("progress: <epoch> s, <tps> tps, ...",
each line the second before its time). PHASES: "<epoch> STOP|CONT|SKIP" a line, when the sampler
was paused or resumed, or began to start or stop (tests/perf/trace_cost.sh --interleaved: a
SKIP phase counts for neither). A second counts for a phase when it lies wholly inside it, at least SETTLE
seconds after the phase began. Each running phase is compared with the mean of the paused
phases on either side: cost = 1 - running / paused. Prints the costs, their median and quartiles.
"""
import json
import re
import statistics
import sys

SETTLE = 0.25
PROGRESS = re.compile(r"^progress: ([0-9.]+) s, ([0-9.]+) tps")


def read_phases(path):
    phases = []
    with open(path) as lines:
        for line in lines:
            at, state = line.split()
            phases.append((float(at), None if state == "SKIP" else state == "CONT"))
    return phases


def read_seconds(path):
    seconds = []
    with open(path) as lines:
        for line in lines:
            match = PROGRESS.match(line)
            if match:
                seconds.append((float(match.group(1)), float(match.group(2))))
    return seconds


def phase_means(phases, seconds):
    """Per phase (start, running, mean tps or None)."""
    means = []
    for index, (start, running) in enumerate(phases):
        end = phases[index + 1][0] if index + 1 < len(phases) else float("inf")
        tps = [value for at, value in seconds if at - 1 >= start + SETTLE and at <= end]
        means.append((start, running, statistics.fmean(tps) if tps else None))
    return means


def costs(means):
    means = [mean for mean in means if mean[1] is not None]
    found = []
    for index in range(1, len(means) - 1):
        _, running, tps = means[index]
        before, after = means[index - 1][2], means[index + 1][2]
        if running and tps is not None and before is not None and after is not None:
            found.append(1 - tps / ((before + after) / 2))
    return found


def main():
    means = phase_means(read_phases(sys.argv[2]), read_seconds(sys.argv[1]))
    found = costs(means)
    if len(found) < 3:
        print(f"interleaved_cost.py: error: only {len(found)} running phases between paused ones",
              file=sys.stderr)
        sys.exit(1)
    quartiles = statistics.quantiles(found, n=4)
    paused = [tps for _, running, tps in means if running is False and tps is not None]
    running = [tps for _, running, tps in means if running and tps is not None]
    print(json.dumps({
        "median": round(statistics.median(found), 4),
        "q1": round(quartiles[0], 4),
        "q3": round(quartiles[2], 4),
        "pairs": len(found),
        "paused_tps": round(statistics.median(paused), 1),
        "running_tps": round(statistics.median(running), 1),
        "costs": [round(cost, 4) for cost in found],
    }))


if __name__ == "__main__":
    main()
