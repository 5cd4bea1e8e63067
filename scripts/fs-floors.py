#!/usr/bin/env python3
"""fs-floors.py - check that the modules of fs/ form floors that only look down.

  scripts/fs-floors.py FS_DIR [OBJECT.o ...]

A module is a .c and its own .h (inode.c + inode.h = "inode"); a header without a .c (util.h,
mount.h) is a module of its own, and the FUSE handler files ops_*.c share ops.h: they are one
module, "ops" (none of them may call another). Two graphs are built between modules:

  - includes: module A -> module B when A.c or A.h has #include "B.h";
  - calls (with the objects of smb3fs): A -> B when A's object has an undefined symbol that B's
    object defines (nm), i.e. A calls a function of B or uses its data.

The check fails when
  - either graph, or both together, has a cycle (the cycle is printed);
  - A calls B without including B.h itself (something else declares B's functions for it: the
    include graph would then hide a dependency);
  - a header declares a function its own module does not define (one header declaring the
    functions of several modules is how a one-header-for-all layout hides a cycle).

On success it prints the floors: floor 0 needs nothing else in fs/, floor n needs floor n-1.
"""
import os
import re
import subprocess
import sys


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def header_declarations(text):
    """Names of the functions a header declares (top level, not static inline, not typedef)."""
    names = set()
    for line in strip_comments(text).splitlines():
        if not line or line[0].isspace() or line.startswith(("#", "static", "typedef", "}")):
            continue
        m = re.match(r"[A-Za-z_][\w \*]*?\b(\w+)\s*\(", line)
        if m and not re.match(r"struct \w+ \{", line):
            names.add(m.group(1))
    return names


def find_cycle(graph):
    """A cycle of graph (dict: node -> set of nodes) as a list of nodes, or None."""
    state = {}
    stack = []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if m not in state:
                c = visit(m)
                if c:
                    return c
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state:
            c = visit(n)
            if c:
                return c
    return None


def floors(graph, nodes):
    level = {}

    def lv(n):
        if n not in level:
            level[n] = 1 + max((lv(m) for m in graph.get(n, ())), default=-1)
        return level[n]

    for n in nodes:
        lv(n)
    return level


def nm(obj, *args):
    out = subprocess.run([os.environ.get("NM", "nm"), "-P", *args, obj], check=True, capture_output=True, text=True).stdout
    return {line.split()[0] for line in out.splitlines() if line.strip()}


def main():
    if len(sys.argv) >= 2 and sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    fs_dir, objects = sys.argv[1], sys.argv[2:]
    if not os.path.isdir(fs_dir):
        print(f"fs-floors: '{fs_dir}' is not a directory (usage: scripts/fs-floors.py FS_DIR [OBJECT.o ...])",
              file=sys.stderr)
        return 2
    files = sorted(f for f in os.listdir(fs_dir) if f.endswith((".c", ".h")))
    headers = {f[:-2] for f in files if f.endswith(".h")}

    def module_of(stem):
        family = stem.split("_")[0]
        return family if stem not in headers and family != stem and family in headers else stem

    modules = sorted({module_of(f[:-2]) for f in files})
    errors = []

    includes = {m: set() for m in modules}
    for f in files:
        text = open(os.path.join(fs_dir, f), encoding="utf-8").read()
        for h in re.findall(r'^\s*#\s*include\s+"([^"]+)"', text, flags=re.M):
            target = os.path.basename(h)[:-2] if h.endswith(".h") else None
            if target in headers and target != module_of(f[:-2]):
                includes[module_of(f[:-2])].add(target)

    cycle = find_cycle(includes)
    if cycle:
        errors.append("include cycle: " + " -> ".join(cycle))

    graph = {m: set(e) for m, e in includes.items()}
    if objects:
        defined, undefined = {}, {}
        units = {}  # file stem -> module
        owner = {}  # symbol -> the file stem whose object defines it
        for o in objects:
            u = os.path.basename(o).split(".")[0]
            m = units[u] = module_of(u)
            syms = nm(o, "-g", "--defined-only")
            defined.setdefault(m, set()).update(syms)
            owner.update((sym, u) for sym in syms)
            undefined[u] = nm(o, "-u")
        calls = {m: set() for m in modules}
        for u, syms in undefined.items():
            m = units[u]
            for sym in sorted(syms):
                bu = owner.get(sym)
                if not bu or bu == u:
                    continue
                b = units[bu]
                if b == m:
                    errors.append(f"{u}.c uses {sym} of {bu}.c: the files of {m} must not call each other")
                    continue
                calls[m].add(b)
                if b not in includes.get(m, ()):
                    errors.append(f"{u}.c uses {sym} of {b} without including {b}.h")
        cycle = find_cycle(calls)
        if cycle:
            errors.append("call cycle: " + " -> ".join(cycle))
        for m, e in calls.items():
            graph.setdefault(m, set()).update(e)
        for h in sorted(headers):
            decl = header_declarations(open(os.path.join(fs_dir, h + ".h"), encoding="utf-8").read())
            for name in sorted(decl - defined.get(h, set())):
                where = owner.get(name)
                errors.append(f"{h}.h declares {name}, " + (f"which {where}.c defines" if where else "which nothing defines"))
        cycle = find_cycle(graph)
        if cycle and not errors:
            errors.append("cycle through includes and calls: " + " -> ".join(cycle))

    if errors:
        for e in errors:
            print("fs-floors: " + e, file=sys.stderr)
        return 1
    level = floors(graph, modules)
    for n in range(max(level.values()) + 1):
        print(f"floor {n}: " + " ".join(sorted(m for m in modules if level[m] == n)))
    print(f"fs-floors: {len(modules)} modules, no cycle" + ("" if objects else " (includes only; no objects given)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
