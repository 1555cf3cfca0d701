#!/usr/bin/env python3
"""Fails when files of cp-mlir depend on each other in a circle.

Two graphs are read:
  - includes, between files: A uses B when A includes B (cp's own headers,
    and private headers next to the file);
  - calls, between translation units: A uses B when A's object file needs
    a symbol (function or variable, not an inline or template copy) that
    B's object file defines. Read with `nm` from the object files under
    OBJ_ROOT, so a call through a declaration in a third header counts.
Each strongly connected set of more than one node is a circle and is
printed with its members. The runtime is checked the same way.

One set of units is read as one: the cp ops. TableGen generates their
classes into CPOps.cpp (and the op list into CPDialect.cpp); the generated
code calls the verifiers, builders and region checks written by hand in
the files below, which call the generated accessors back. That is how
every ODS dialect is built, upstream's included: one unit split for
reading, not a circle between concepts.
Usage: check-circles.py SRC_ROOT [OBJ_ROOT]
"""
import os
import re
import subprocess
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
ONE_UNIT = {
    "Dialect/CP/IR/" + name: "Dialect/CP/IR/{ops}"
    for name in ("CPDialect", "CPOps", "AttentionOps", "AttentionGradOps",
                 "CollectiveOps", "ModRegions")
}
SOURCES = (".h", ".cpp", ".c")


def node_of(rel):
    """The include-graph node of a tree file: its path, or None."""
    if not rel.endswith((".h", ".cpp", ".c")):
        return None
    if rel.startswith(("include/", "lib/")):
        return rel
    return None


def include_graph(root):
    graph = {}
    for top in ("include", "lib"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in files:
                rel = os.path.relpath(os.path.join(dirpath, name), root)
                node = node_of(rel)
                if node is None:
                    continue
                graph.setdefault(node, set())
                with open(os.path.join(root, rel), errors="replace") as f:
                    for line in f:
                        m = INCLUDE.match(line)
                        if not m or m.group(1).endswith(".inc"):
                            continue
                        target = m.group(1)
                        if target.startswith(("cp/", "cp-c/")):
                            used = "include/" + target
                        else:
                            used = os.path.normpath(
                                os.path.join(os.path.dirname(rel), target))
                        if os.path.exists(os.path.join(root, used)):
                            graph[node].add(used)
    return graph


OBJECT = re.compile(r"(?:^|/)lib/(.*)/CMakeFiles/[^/]+\.dir/(.*)\.(?:cpp|c)\.o$")


def call_graph(obj_root):
    defined, needed = {}, {}
    for dirpath, _, files in os.walk(os.path.join(obj_root, "lib")):
        for name in files:
            path = os.path.join(dirpath, name)
            m = OBJECT.search(os.path.relpath(path, obj_root))
            if not m:
                continue
            unit = m.group(1) + "/" + os.path.splitext(m.group(2))[0]
            unit = ONE_UNIT.get(unit, unit)
            out = subprocess.run(["nm", "-P", path], capture_output=True,
                                 text=True).stdout
            for line in out.splitlines():
                parts = line.split()
                if len(parts) < 2:
                    continue
                symbol, kind = parts[0], parts[1]
                if kind == "U":
                    needed.setdefault(unit, set()).add(symbol)
                elif kind in "TDBR":  # strong definitions only
                    defined.setdefault(symbol, set()).add(unit)
    graph = {unit: set() for unit in set(needed) | {u for us in
             defined.values() for u in us}}
    for unit, symbols in needed.items():
        for symbol in symbols:
            for owner in defined.get(symbol, ()):
                if owner != unit:
                    graph[unit].add(owner)
    return graph


def circles(graph):
    """Strongly connected sets of more than one unit (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        work = [(v, iter(sorted(graph.get(v, ()))))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        while work:
            node, edges = work[-1]
            advanced = False
            for w in edges:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    advanced = True
                    break
                if w in on_stack:
                    low[node] = min(low[node], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                members = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    members.append(w)
                    if w == node:
                        break
                if len(members) > 1:
                    found.append(sorted(members))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    failed = False
    graphs = [("include", include_graph(sys.argv[1]))]
    if len(sys.argv) == 3:
        graphs.append(("call", call_graph(sys.argv[2])))
    for kind, graph in graphs:
        found = circles(graph)
        for members in found:
            failed = True
            print("error: %s circle: %s" % (kind, " <-> ".join(members)))
        print("%s graph: %d %s, %d circles" % (
            kind, len(graph), "files" if kind == "include" else "units",
            len(found)))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
