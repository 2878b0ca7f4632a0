#!/usr/bin/env python3
"""Generates the shared-memory layout of one PostgreSQL major for the memory source.

Run by deploy/generate-layouts.sh (not by the build) against one major's server headers: a
postgresql-server-dev-N package unpacked, or a configured source tree's src/include. The
constants' *names* come from the headers (parsed here); their *values*, every field offset and
every struct size from a C program compiled against those headers, so nothing is typed by hand.
The result is a C++ initializer of collectors::memory::PgLayout (pg_layout.h), checked into
collectors/memory/layouts/.

The headers moved between majors, and this script follows them:
- 13: PgBackendStatus, BackendState and the wait events in pgstat.h; no st_query_id.
- 14-16: utils/backend_status.h and utils/wait_event.h.
- 17+: no PGPROC.backendId (a backend's status slot is its PGPROC's number), the wait events'
  enums generated into utils/wait_event_types.h; 18+: the wait classes in utils/wait_classes.h;
  19: the LWLock tranches listed in storage/lwlocklist.h.

usage: generate_layout.py --include DIR --major N --version TEXT --cc CC --out FILE.inc
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile


def exists(include, path):
    return os.path.exists(os.path.join(include, path))


def read(include, path):
    with open(os.path.join(include, path), encoding="utf-8") as header:
        return header.read()


def enum_body(include, paths, enum_name):
    """The body of `typedef enum [tag] { ... } enum_name;` in the first of `paths` that has it."""
    for path in paths:
        if not exists(include, path):
            continue
        match = re.search(r"typedef\s+enum\s*\w*\s*\{([^}]*)\}\s*" + enum_name + r"\s*;",
                          read(include, path))
        if match:
            return re.sub(r"/\*.*?\*/", "", match.group(1), flags=re.S)
    return None


def required_enum(include, paths, enum_name):
    body = enum_body(include, paths, enum_name)
    if body is None:
        sys.exit(f"generate_layout: enum {enum_name} not found in {', '.join(paths)}")
    return body


def constants(body, prefix):
    return re.findall(r"\b(" + prefix + r"\w+)\b\s*(?:=[^,]*)?,?", body)


WAIT_EVENT_HEADERS = ["utils/wait_event_types.h", "utils/wait_event.h", "pgstat.h"]


def wait_event_constants(include):
    found = []
    for enum in ("WaitEventActivity", "WaitEventClient", "WaitEventIPC", "WaitEventTimeout",
                 "WaitEventIO"):
        found += constants(required_enum(include, WAIT_EVENT_HEADERS, enum), "WAIT_EVENT_")
    # 17+ list the buffer class's events as an enum too (19: several).
    for enum in ("WaitEventBufferPin", "WaitEventBuffer"):
        body = enum_body(include, WAIT_EVENT_HEADERS, enum)
        if body is not None:
            found += constants(body, "WAIT_EVENT_")
    return found


def individual_lwlocks(include):
    text = read(include, "storage/lwlocknames.h")
    return re.findall(r"#define\s+(\w+)Lock\s+\(&MainLWLockArray\[(\d+)\]\.lock\)", text)


def tranche_constants(include):
    body = required_enum(include, ["storage/lwlock.h"], "BuiltinTrancheIds")
    names = [name for name in constants(body, "LWTRANCHE_")
             if name not in ("LWTRANCHE_FIRST_USER_DEFINED", "LWTRANCHE_INVALID")]
    if "storage/lwlocklist.h" in body:
        # 19: the enum includes the list; its tranches are PG_LWLOCKTRANCHE(ID, Name) there.
        names += ["LWTRANCHE_" + name for name in
                  re.findall(r"^PG_LWLOCKTRANCHE\((\w+),", read(include, "storage/lwlocklist.h"),
                             flags=re.M)]
    return names


def program(include, major):
    waits = wait_event_constants(include)
    tranches = tranche_constants(include)
    locktags = constants(required_enum(include, ["storage/lock.h", "storage/locktag.h"],
                                       "LockTagType"), "LOCKTAG_")
    backend_types = constants(required_enum(include, ["miscadmin.h"], "BackendType"), "B_")
    states = constants(required_enum(include, ["utils/backend_status.h", "pgstat.h"],
                                     "BackendState"), "STATE_")
    by_proc_number = major >= 17
    headers = ["postgres.h", "miscadmin.h", "storage/lock.h", "storage/lwlock.h",
               "storage/proc.h", "pgstat.h", "utils/backend_status.h", "utils/wait_event.h",
               "utils/wait_classes.h"]
    lines = [f'#include "{header}"' for header in headers if exists(include, header)]
    lines += [
        "#include <stddef.h>",
        "#include <stdio.h>",
        "#undef printf  /* port.h maps it to pg_printf, which lives in the server */",
        "int main(void) {",
        '  printf("    .proc_hdr_size = %zu,\\n", sizeof(PROC_HDR));',
        '  printf("    .proc_hdr_all_procs = %zu,\\n", offsetof(PROC_HDR, allProcs));',
        '  printf("    .proc_hdr_all_proc_count = %zu,\\n", offsetof(PROC_HDR, allProcCount));',
        '  printf("    .proc_size = %zu,\\n", sizeof(PGPROC));',
        '  printf("    .proc_pid = %zu,\\n", offsetof(PGPROC, pid));',
        '  printf("    .proc_latch_owner = %zu,\\n",'
        " offsetof(PGPROC, procLatch) + offsetof(Latch, owner_pid));",
        '  printf("    .proc_wait_event_info = %zu,\\n", offsetof(PGPROC, wait_event_info));',
    ]
    if by_proc_number:
        lines.append('  printf("    .status_by_proc_number = true,\\n    .proc_backend_id = 0,'
                     '  // no backendId from 17 on\\n");')
    else:
        lines.append('  printf("    .status_by_proc_number = false,\\n");')
        lines.append('  printf("    .proc_backend_id = %zu,\\n", offsetof(PGPROC, backendId));')
    lines += [
        '  printf("    .status_size = %zu,\\n", sizeof(PgBackendStatus));',
        '  printf("    .status_changecount = %zu,\\n", offsetof(PgBackendStatus, st_changecount));',
        '  printf("    .status_procpid = %zu,\\n", offsetof(PgBackendStatus, st_procpid));',
        '  printf("    .status_backend_type = %zu,\\n", offsetof(PgBackendStatus, st_backendType));',
        '  printf("    .status_proc_start = %zu,\\n",'
        " offsetof(PgBackendStatus, st_proc_start_timestamp));",
        '  printf("    .status_database_id = %zu,\\n", offsetof(PgBackendStatus, st_databaseid));',
        '  printf("    .status_user_id = %zu,\\n", offsetof(PgBackendStatus, st_userid));',
        '  printf("    .status_state = %zu,\\n", offsetof(PgBackendStatus, st_state));',
    ]
    if major >= 14:
        lines.append(
            '  printf("    .status_query_id = %zu,\\n", offsetof(PgBackendStatus, st_query_id));')
    else:
        lines.append('  printf("    .status_query_id = std::nullopt,  // st_query_id is 14\'s\\n");')
    # The status array's slots after MaxBackends: one per auxiliary process type (13-16), one
    # per auxiliary PGPROC (17+, indexed by the PGPROC's number).
    extra = "NUM_AUXILIARY_PROCS" if by_proc_number else "NUM_AUXPROCTYPES"
    lines += [
        f'  printf("    .status_extra_slots = %d,\\n", (int) {extra});',
        '  printf("    .auxiliary_procs = %d,\\n", (int) NUM_AUXILIARY_PROCS);',
        '  printf("    .wait_class_lwlock = %uu,\\n", (unsigned) PG_WAIT_LWLOCK);',
        '  printf("    .wait_class_lock = %uu,\\n", (unsigned) PG_WAIT_LOCK);',
        # The class of buffer waits: PG_WAIT_BUFFER_PIN (13-16), PG_WAIT_BUFFERPIN (17-18),
        # PG_WAIT_BUFFER (19, type "Buffer", several events).
        "#if defined(PG_WAIT_BUFFER_PIN)",
        '  printf("    .wait_class_buffer = %uu,\\n    .buffer_class_type = \\"BufferPin\\",\\n",'
        " (unsigned) PG_WAIT_BUFFER_PIN);",
        "#elif defined(PG_WAIT_BUFFERPIN)",
        '  printf("    .wait_class_buffer = %uu,\\n    .buffer_class_type = \\"BufferPin\\",\\n",'
        " (unsigned) PG_WAIT_BUFFERPIN);",
        "#else",
        '  printf("    .wait_class_buffer = %uu,\\n    .buffer_class_type = \\"Buffer\\",\\n",'
        " (unsigned) PG_WAIT_BUFFER);",
        "#endif",
        '  printf("    .wait_class_extension = %uu,\\n", (unsigned) PG_WAIT_EXTENSION);',
        '  printf("    .first_user_tranche = %d,\\n", (int) LWTRANCHE_FIRST_USER_DEFINED);',
    ]

    def table(field, names, value=lambda name: name):
        lines.append(f'  printf("    .{field} = {{\\n");')
        for name in names:
            lines.append(f'  printf("        {{%uu, \\"{name}\\"}},\\n", (unsigned) ({value(name)}));')
        lines.append('  printf("    },\\n");')

    table("wait_events", waits)
    table("tranches", tranches)
    table("lock_tags", locktags)
    table("backend_types", backend_types)
    table("states", states)
    lines.append('  printf("    .individual_lwlocks = {\\n");')
    for name, number in individual_lwlocks(include):
        lines.append(f'  printf("        {{{number}u, \\"{name}\\"}},\\n");')
    lines.append('  printf("    },\\n");')
    lines += ["  return 0;", "}"]
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--include", required=True)
    parser.add_argument("--major", required=True, type=int)
    parser.add_argument("--version", required=True, help="the release the headers are of")
    parser.add_argument("--origin", required=True, help="where the headers came from")
    parser.add_argument("--cc", default="cc")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        source = os.path.join(scratch, "layout.c")
        binary = os.path.join(scratch, "layout")
        with open(source, "w", encoding="utf-8") as out:
            out.write(program(args.include, args.major))
        subprocess.run([args.cc, "-I", args.include, "-o", binary, source], check=True)
        values = subprocess.run([binary], check=True, capture_output=True, text=True).stdout
    body = (f"// PostgreSQL {args.version}, from {args.origin}.\n"
            "// Generated by deploy/generate-layouts.sh (collectors/memory/generate_layout.py): "
            "do not edit.\n"
            f"PgLayout{{\n    .major = {args.major},\n    .version = \"{args.version}\",\n"
            f"{values}}},\n")
    with open(args.out + ".tmp", "w", encoding="utf-8") as out:
        out.write(body)
    os.replace(args.out + ".tmp", args.out)


if __name__ == "__main__":
    main()
