#!/usr/bin/env python3
"""The layering of docs/architecture.md, checked on the sources (deploy/test.sh runs it).

Folders are layers, lowest first: base, model, config, collectors, loadgen, store, exporters,
daemon. A file may include (with #include "...") files of its own layer and of lower ones, never
of a higher one. Inside exporters/, prometheus/ and render/ include nothing of each other; inside
daemon/, engine/ < service/ < commands/ < main.cc. Every layer stays at most 30 % of the product
code (lines of .h, .cc and .inc files). And no cycle between units (a unit is a .h/.cc pair,
or an .inc file): unit A depends on unit B when a file of A includes a file of B, and no unit
may depend on itself through others. Prints one line per violation ("FILE:LINE: ...", "cycle
between units: A, B") and exits 1, or a one-line summary.
"""
import os
import re
import sys

LAYERS = ["base", "model", "config", "collectors", "loadgen", "store", "exporters", "daemon"]
DAEMON = ["daemon/engine", "daemon/service", "daemon/commands", "daemon"]
EXPORTER_PARTS = ["exporters/prometheus", "exporters/render"]
MAX_SHARE = 0.30
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def layer_of(path):
    top = path.split("/", 1)[0]
    return top if top in LAYERS else None


def rank_in(path, order):
    for index in range(len(order) - 1, -1, -1):
        if path == order[index] or path.startswith(order[index] + "/"):
            return index
    return None


def violation(source, target):
    """Why `source` may not include `target`, or None."""
    source_layer, target_layer = layer_of(source), layer_of(target)
    if source_layer is None or target_layer is None:
        return None
    if LAYERS.index(target_layer) > LAYERS.index(source_layer):
        return f"{source_layer}/ includes {target_layer}/, a higher layer"
    if source_layer == target_layer == "exporters":
        source_part, target_part = rank_in(source, EXPORTER_PARTS), rank_in(target, EXPORTER_PARTS)
        if source_part is not None and target_part is not None and source_part != target_part:
            return f"{EXPORTER_PARTS[source_part]}/ includes {EXPORTER_PARTS[target_part]}/"
    if source_layer == target_layer == "daemon":
        source_rank, target_rank = rank_in(source, DAEMON), rank_in(target, DAEMON)
        if target_rank is not None and source_rank is not None and target_rank > source_rank:
            return f"{DAEMON[source_rank]}/ includes {DAEMON[target_rank]}/, a higher layer"
    return None


def unit_of(path):
    return os.path.splitext(path)[0]


def cycles(edges):
    """The strongly connected components of more than one unit (Tarjan's), each sorted."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(unit):
        index[unit] = low[unit] = len(index)
        stack.append(unit)
        on_stack.add(unit)
        for other in sorted(edges.get(unit, ())):
            if other not in index:
                visit(other)
                low[unit] = min(low[unit], low[other])
            elif other in on_stack:
                low[unit] = min(low[unit], index[other])
        if low[unit] == index[unit]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == unit:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for unit in sorted(edges):
        if unit not in index:
            visit(unit)
    return sorted(found)


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    problems, includes, files = [], 0, 0
    edges = {}
    lines = {layer: 0 for layer in LAYERS}
    for layer in LAYERS:
        for directory, _, names in os.walk(os.path.join(root, layer)):
            for name in sorted(names):
                if not name.endswith((".h", ".cc", ".inc")):
                    continue
                path = os.path.relpath(os.path.join(directory, name), root)
                files += 1
                with open(os.path.join(root, path), encoding="utf-8") as source:
                    text = source.read().splitlines()
                lines[layer] += len(text)
                for number, line in enumerate(text, 1):
                    match = INCLUDE.match(line)
                    if not match:
                        continue
                    includes += 1
                    target = match.group(1)
                    if layer_of(target) and unit_of(target) != unit_of(path):
                        edges.setdefault(unit_of(path), set()).add(unit_of(target))
                    if layer_of(target) and not os.path.exists(os.path.join(root, target)):
                        problems.append(f"{path}:{number}: includes \"{target}\", which does not exist")
                    why = violation(path, target)
                    if why:
                        problems.append(f"{path}:{number}: includes \"{target}\": {why}")
    total = sum(lines.values())
    for layer, count in lines.items():
        if total and count / total > MAX_SHARE:
            problems.append(f"{layer}/: {count} of {total} lines ({count / total:.0%}), over "
                            f"{MAX_SHARE:.0%} of the product code")
    for component in cycles(edges):
        problems.append("cycle between units: " + ", ".join(component) +
                        " (each reaches the others through their includes)")
    for problem in problems:
        print(f"check-layers: {problem}", file=sys.stderr)
    if problems:
        return 1
    largest = max(lines, key=lines.get)
    print(f"check-layers: {includes} includes in {files} files, none upward; largest layer "
          f"{largest}/ ({lines[largest] / total:.0%} of {total} lines); no cycle between "
          f"{len({unit_of(p) for p in edges} | set().union(*edges.values()))} units")
    return 0


if __name__ == "__main__":
    sys.exit(main())
