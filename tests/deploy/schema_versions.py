#!/usr/bin/env python3
"""A schema's shape may change only with a new version (issue 28): for each published schema
(docs/schema/*.schema.json), every version of the file in the git history that declares the same
version (properties.schema_version.const) must have the same shape, i.e. the same schema once
descriptions, titles, comments and examples are left out. A codec change that adds, removes or
retypes a field fails the suite's validation or the schema's completeness test until the schema
says so, and then this check until the version is raised (in the schema and in the C++
constant, which tests/exporters/render/json_schema_test.cc compares).

  schema_versions.py SOURCE_DIR

Prints one line per schema; exits 1 if a shape changed under the same version. Outside a git
checkout (a release tarball) there is no history to compare with: it says so and passes.
"""
import json
import os
import subprocess
import sys

WORDS = {"description", "title", "$comment", "examples"}


def shape(node):
    if isinstance(node, dict):
        return {key: shape(value) for key, value in node.items() if key not in WORDS}
    if isinstance(node, list):
        return [shape(value) for value in node]
    return node


def version_of(schema):
    return schema.get("properties", {}).get("schema_version", {}).get("const")


def git(source_dir, *args):
    return subprocess.run(["git", "-C", source_dir, *args], check=True, capture_output=True,
                          text=True).stdout


def main(argv):
    source_dir = argv[1]
    schema_dir = os.path.join(source_dir, "docs", "schema")
    try:
        git(source_dir, "rev-parse", "--git-dir")
    except (OSError, subprocess.CalledProcessError):
        print("schema_versions: not a git checkout, no history to compare with")
        return 0
    changed = 0
    for name in sorted(os.listdir(schema_dir)):
        if not name.endswith(".schema.json"):
            continue
        relative = f"docs/schema/{name}"
        with open(os.path.join(schema_dir, name), encoding="utf-8") as schema_file:
            current = json.load(schema_file)
        version = version_of(current)
        if not isinstance(version, int):
            print(f"FAIL  {relative}: no properties.schema_version.const")
            changed += 1
            continue
        commits = git(source_dir, "log", "--format=%H", "--", relative).split()
        same_version = 0
        for commit in commits:
            try:
                old = json.loads(git(source_dir, "show", f"{commit}:{relative}"))
            except (subprocess.CalledProcessError, ValueError):
                continue  # deleted or not JSON in that commit
            if version_of(old) != version:
                continue
            same_version += 1
            if shape(old) != shape(current):
                print(f"FAIL  {relative}: its shape differs from version {version} as committed in "
                      f"{commit[:12]}; a changed shape needs a new schema_version "
                      f"(and the codec's constant raised with it)")
                changed += 1
                break
        else:
            print(f"ok    {relative}: version {version}, the same shape in {same_version} "
                  f"commit(s) of that version")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
