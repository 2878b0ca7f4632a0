#!/usr/bin/env python3
"""Validates pgwaitprof's JSON files against the published schemas (docs/schema) with Debian's
python3-jsonschema: a run's report.json against report.schema.json, a matrix's table.json
against matrix.schema.json.

  validate_json.py SCHEMA_DIR FILE...        the files named (report.json or table.json)
  validate_json.py --collected DIR SCHEMA_DIR
      every file the test suite wrote, as tests/support/json_output_collector.cc copied them
      into DIR; each is deleted once validated, or moved to DIR/invalid when it is not, so
      that it fails one check only (two suites running at once share DIR)

Prints one line per kind with the number of files validated and, for each invalid file, where
it was written, the place in the document and the reason; exits 1 if any file is invalid.
"""
import json
import os
import sys

import jsonschema

KINDS = {"report.json": "report.schema.json", "table.json": "matrix.schema.json"}


def kind_of(path):
    for suffix in KINDS:
        if os.path.basename(path).endswith(suffix):
            return suffix
    return None


def load_validators(schema_dir):
    validators = {}
    for kind, schema_name in KINDS.items():
        with open(os.path.join(schema_dir, schema_name), encoding="utf-8") as schema_file:
            schema = json.load(schema_file)
        validator_class = jsonschema.validators.validator_for(schema)
        validator_class.check_schema(schema)
        validators[kind] = validator_class(schema)
    return validators


def problems_of(validators, path):
    """The reasons `path` is not valid, none when it is; None when it vanished meanwhile."""
    try:
        with open(path, encoding="utf-8") as document_file:
            document = json.load(document_file)
    except FileNotFoundError:
        return None
    except ValueError as error:
        return [f"not JSON: {error}"]
    problems = []
    for error in sorted(validators[kind_of(path)].iter_errors(document), key=lambda e: list(e.path)):
        where = "/" + "/".join(str(part) for part in error.absolute_path)
        problems.append(f"at {where}: {error.message[:300]}")
    return problems


def main(argv):
    collected = len(argv) == 4 and argv[1] == "--collected"
    if not collected and len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    schema_dir = argv[3] if collected else argv[1]
    validators = load_validators(schema_dir)
    origins = {}
    if collected:
        directory = argv[2]
        if os.path.isdir(directory):
            paths = sorted(os.path.join(directory, name) for name in os.listdir(directory)
                           if kind_of(name) and not name.startswith("."))
            try:
                with open(os.path.join(directory, "origins.tsv"), encoding="utf-8") as lines:
                    origins = dict(line.rstrip("\n").split("\t", 1) for line in lines if "\t" in line)
            except FileNotFoundError:
                pass
        else:
            paths = []
    else:
        paths = argv[2:]
        unknown = [path for path in paths if not kind_of(path)]
        if unknown:
            print(f"validate_json: not a report.json or table.json: {unknown[0]}", file=sys.stderr)
            return 2
    counts = {kind: 0 for kind in KINDS}
    invalid = 0
    for path in paths:
        problems = problems_of(validators, path)
        if problems is None:
            continue  # the other suite's check took it
        counts[kind_of(path)] += 1
        if problems:
            invalid += 1
            written = origins.get(os.path.basename(path), path)
            print(f"INVALID {written} (against {KINDS[kind_of(path)]}):")
            for problem in problems[:20]:
                print(f"  {problem}")
        if collected:
            try:
                if problems:
                    os.makedirs(os.path.join(argv[2], "invalid"), exist_ok=True)
                    os.rename(path, os.path.join(argv[2], "invalid", os.path.basename(path)))
                else:
                    os.unlink(path)
            except FileNotFoundError:
                pass
    for kind, count in counts.items():
        print(f"validate_json: {count} {kind} file(s) checked against {KINDS[kind]}")
    if invalid:
        print(f"validate_json: {invalid} invalid file(s)" +
              (f"; kept in {os.path.join(argv[2], 'invalid')}" if collected else ""))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
