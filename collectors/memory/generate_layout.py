#!/usr/bin/env python3
"""Generates the shared-memory layout of one PostgreSQL major for the memory source.

Run at build time, once per installed postgresql-server-dev-N: the constants' *names* come from
the server's own headers (parsed here), their *values*, every field offset and every struct size
from a C program compiled against those headers (so nothing is typed by hand), and the result is
a C++ initializer of collectors::memory::PgLayout (pg_layout.h).

usage: generate_layout.py --include DIR --major N --cc CC --out FILE.inc
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile


def read(include, path):
    with open(os.path.join(include, path), encoding="utf-8") as header:
        return header.read()


def enum_body(text, enum_name):
    """The body of `typedef enum [tag] { ... } enum_name;`."""
    match = re.search(r"typedef\s+enum\s*\w*\s*\{([^}]*)\}\s*" + enum_name + r"\s*;", text)
    if not match:
        sys.exit(f"generate_layout: enum {enum_name} not found")
    return re.sub(r"/\*.*?\*/", "", match.group(1), flags=re.S)


def constants(body, prefix):
    return re.findall(r"\b(" + prefix + r"\w+)\b\s*(?:=[^,]*)?,?", body)


def wait_event_constants(include):
    text = read(include, "utils/wait_event.h")
    found = []
    for enum in ("WaitEventActivity", "WaitEventClient", "WaitEventIPC", "WaitEventTimeout",
                 "WaitEventIO"):
        found += constants(enum_body(text, enum), "WAIT_EVENT_")
    return found


def individual_lwlocks(include):
    text = read(include, "storage/lwlocknames.h")
    return re.findall(r"#define\s+(\w+)Lock\s+\(&MainLWLockArray\[(\d+)\]\.lock\)", text)


def tranche_constants(include):
    body = enum_body(read(include, "storage/lwlock.h"), "BuiltinTrancheIds")
    return [name for name in constants(body, "LWTRANCHE_") if name != "LWTRANCHE_FIRST_USER_DEFINED"]


def program(include):
    waits = wait_event_constants(include)
    tranches = tranche_constants(include)
    locktags = constants(enum_body(read(include, "storage/lock.h"), "LockTagType"), "LOCKTAG_")
    backend_types = constants(enum_body(read(include, "miscadmin.h"), "BackendType"), "B_")
    states = constants(enum_body(read(include, "utils/backend_status.h"), "BackendState"), "STATE_")
    lines = [
        '#include "postgres.h"',
        '#include "miscadmin.h"',
        '#include "storage/lock.h"',
        '#include "storage/lwlock.h"',
        '#include "storage/proc.h"',
        '#include "utils/backend_status.h"',
        '#include "utils/wait_event.h"',
        "#include <stddef.h>",
        "#include <stdio.h>",
        "#undef printf  /* port.h maps it to pg_printf, which lives in the server */",
        "int main(void) {",
        '  printf("    .proc_hdr_size = %zu,\\n", sizeof(PROC_HDR));',
        '  printf("    .proc_hdr_all_procs = %zu,\\n", offsetof(PROC_HDR, allProcs));',
        '  printf("    .proc_hdr_all_proc_count = %zu,\\n", offsetof(PROC_HDR, allProcCount));',
        '  printf("    .proc_size = %zu,\\n", sizeof(PGPROC));',
        '  printf("    .proc_pid = %zu,\\n", offsetof(PGPROC, pid));',
        '  printf("    .proc_backend_id = %zu,\\n", offsetof(PGPROC, backendId));',
        '  printf("    .proc_latch_owner = %zu,\\n",'
        " offsetof(PGPROC, procLatch) + offsetof(Latch, owner_pid));",
        '  printf("    .proc_wait_event_info = %zu,\\n", offsetof(PGPROC, wait_event_info));',
        '  printf("    .status_size = %zu,\\n", sizeof(PgBackendStatus));',
        '  printf("    .status_changecount = %zu,\\n", offsetof(PgBackendStatus, st_changecount));',
        '  printf("    .status_procpid = %zu,\\n", offsetof(PgBackendStatus, st_procpid));',
        '  printf("    .status_backend_type = %zu,\\n", offsetof(PgBackendStatus, st_backendType));',
        '  printf("    .status_proc_start = %zu,\\n",'
        " offsetof(PgBackendStatus, st_proc_start_timestamp));",
        '  printf("    .status_database_id = %zu,\\n", offsetof(PgBackendStatus, st_databaseid));',
        '  printf("    .status_user_id = %zu,\\n", offsetof(PgBackendStatus, st_userid));',
        '  printf("    .status_state = %zu,\\n", offsetof(PgBackendStatus, st_state));',
        '  printf("    .status_query_id = %zu,\\n", offsetof(PgBackendStatus, st_query_id));',
        '  printf("    .aux_proc_types = %d,\\n", (int) NUM_AUXPROCTYPES);',
        '  printf("    .auxiliary_procs = %d,\\n", (int) NUM_AUXILIARY_PROCS);',
        '  printf("    .wait_class_lwlock = %uu,\\n", (unsigned) PG_WAIT_LWLOCK);',
        '  printf("    .wait_class_lock = %uu,\\n", (unsigned) PG_WAIT_LOCK);',
        '  printf("    .wait_class_buffer_pin = %uu,\\n", (unsigned) PG_WAIT_BUFFER_PIN);',
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
    parser.add_argument("--cc", default="cc")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        source = os.path.join(scratch, "layout.c")
        binary = os.path.join(scratch, "layout")
        with open(source, "w", encoding="utf-8") as out:
            out.write(program(args.include))
        subprocess.run([args.cc, "-I", args.include, "-o", binary, source], check=True)
        values = subprocess.run([binary], check=True, capture_output=True, text=True).stdout
    body = (f"// Generated by collectors/memory/generate_layout.py from {args.include}: do not edit.\n"
            f"PgLayout{{\n    .major = {args.major},\n{values}}},\n")
    with open(args.out + ".tmp", "w", encoding="utf-8") as out:
        out.write(body)
    os.replace(args.out + ".tmp", args.out)


if __name__ == "__main__":
    main()
