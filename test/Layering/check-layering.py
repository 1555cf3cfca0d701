#!/usr/bin/env python3
"""Fails when a cp-mlir library depends on a layer above it.

The layers and what each may use are docs/Architecture.md's table. Two
readings of the tree are checked against it:
  - every `#include "..."` of the sources and headers (cp's own headers,
    and for the runtime and the Python extension any MLIR/LLVM C++ header);
  - every target_link_libraries of a cp library in lib/**/CMakeLists.txt.
Usage: check-layering.py ROOT   (ROOT: a source tree laid out like cp-mlir)
"""
import os
import re
import sys

# Lowest first. A layer may use the layers listed for it, itself included.
ALLOWED = {
    "IR": {"IR"},
    "Analysis": {"IR", "Analysis"},
    # The rooms of cp -> cp work: each uses IR and Analysis, never another.
    "Extensions": {"IR", "Analysis", "Extensions"},
    "Raising": {"IR", "Analysis", "Raising"},
    "Schemes": {"IR", "Analysis", "Schemes"},
    "Buffers": {"IR", "Analysis", "Buffers"},
    "Conversion": {"IR", "Analysis", "Conversion"},
    "UpstreamTransforms": {"UpstreamTransforms"},
    "Pipelines": {"IR", "Analysis", "Extensions", "Raising", "Schemes",
                  "Buffers", "Conversion", "UpstreamTransforms", "Pipelines"},
    "Registration": {"IR", "Analysis", "Extensions", "Raising", "Schemes",
                     "Buffers", "Conversion", "UpstreamTransforms",
                     "Pipelines", "Registration"},
    "CAPI": {"IR", "Analysis", "Extensions", "Raising", "Schemes", "Buffers",
             "Conversion", "UpstreamTransforms", "Pipelines", "Registration",
             "CAPI"},
    "Runtime": {"Runtime"},
    "TestSupport": {"Runtime", "TestSupport"},
    "Python": {"CAPI"},
}
# Layers that must not include MLIR or LLVM C++ headers at all.
NO_MLIR_CXX = {"Runtime", "TestSupport", "Python"}

# Path prefixes (of a file in the tree, or of an include) and their layer.
PREFIXES = [
    ("Dialect/CP/IR/", "IR"),
    ("Dialect/CP/Analysis/", "Analysis"),
    ("Dialect/CP/Extensions/", "Extensions"),
    ("Dialect/CP/Schemes/", "Schemes"),
    ("Dialect/CP/Buffers/", "Buffers"),
    ("Raising/", "Raising"),
    ("Conversion/", "Conversion"),
    ("Transforms/", "UpstreamTransforms"),
    ("Pipelines/", "Pipelines"),
    ("Runtime/", "Runtime"),
    ("TestSupport/", "TestSupport"),
    ("InitAllCP.h", "Registration"),
]

LIBRARIES = {
    "CPDialect": "IR",
    "CPAnalysis": "Analysis",
    "CPExtensions": "Extensions",
    "CPRaising": "Raising",
    "CPSchemes": "Schemes",
    "CPBuffers": "Buffers",
    "CPRuntimeCalls": "Conversion",
    "CPAttentionCommon": "Conversion",
    "CPToLoops": "Conversion",
    "CPToGPU": "Conversion",
    "CPToMPI": "Conversion",
    "CPToNCCL": "Conversion",
    "CPUpstreamTransforms": "UpstreamTransforms",
    "CPPipelines": "Pipelines",
    "CPMLIRCAPI": "CAPI",
    "cp_runtime": "Runtime",
    "cp_runtime_gpu": "Runtime",
    "CPTestSupport": "TestSupport",
}


def layer_of_path(rel):
    """Layer of a file at `rel` (relative to the root), or None."""
    if rel.startswith("include/cp-c/") or rel.startswith("lib/CAPI/"):
        return "CAPI"
    if rel.startswith("python/"):
        return "Python"
    for top in ("include/cp/", "lib/"):
        if rel.startswith(top):
            return layer_of_include(rel[len(top):])
    return None


def layer_of_include(path):
    if path.startswith("cp-c/"):
        return "CAPI"
    if path.startswith("cp/"):
        path = path[len("cp/"):]
    for prefix, layer in PREFIXES:
        if path.startswith(prefix):
            return layer
    return None


INCLUDE = re.compile(r'^\s*#\s*include\s+([<"])([^>"]+)[>"]')


def check_includes(root, errors):
    checked = 0
    for top in ("include", "lib", "python", "tools", "bench", "test"):
        for dirpath, dirs, files in os.walk(os.path.join(root, top)):
            # This check's own broken example tree is not part of the tree.
            if os.path.relpath(dirpath, root) == "test/Layering":
                dirs[:] = [d for d in dirs if d != "Inputs"]
            for name in sorted(files):
                if not name.endswith((".h", ".cpp", ".c", ".inc")):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                checked += 1
                check_file(root, rel, errors)
    return checked


def check_file(root, rel, errors):
    layer = layer_of_path(rel)
    tool = rel.startswith(("tools/", "bench/", "test/"))
    with open(os.path.join(root, rel), errors="replace") as f:
        for number, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            quoted, target = m.group(1) == '"', m.group(2)
            where = "%s:%d" % (rel, number)
            if tool:
                if quoted and ("../" in target or target.startswith("lib/")):
                    errors.append("%s: includes \"%s\", another tool's or a "
                                  "library's private header; move what is "
                                  "shared to a named library (e.g. "
                                  "cp/TestSupport)" % (where, target))
                continue
            if layer is None:
                continue
            if target.startswith(("mlir/", "llvm/")) and layer in NO_MLIR_CXX:
                if not target.startswith("mlir-c/"):
                    errors.append("%s: the %s layer includes %s; it may not "
                                  "use MLIR or LLVM C++ headers"
                                  % (where, layer, target))
                continue
            if quoted and not target.startswith(("cp/", "cp-c/")):
                # A private header: resolve it next to the file.
                resolved = os.path.normpath(
                    os.path.join(os.path.dirname(rel), target))
                used = layer_of_path(resolved)
                if used is None or not os.path.exists(
                        os.path.join(root, resolved)):
                    continue
            else:
                used = layer_of_include(target)
                if used is None:
                    continue
            if used not in ALLOWED[layer]:
                errors.append("%s: the %s layer includes %s (%s); %s may use "
                              "only %s" % (where, layer, target, used, layer,
                                           ", ".join(sorted(ALLOWED[layer]))))


LINK = re.compile(r"target_link_libraries\(\s*([\w.-]+)([^)]*)\)", re.S)


def check_links(root, errors):
    for dirpath, _, files in os.walk(os.path.join(root, "lib")):
        if "CMakeLists.txt" not in files:
            continue
        path = os.path.join(dirpath, "CMakeLists.txt")
        rel = os.path.relpath(path, root)
        text = open(path).read()
        for m in LINK.finditer(text):
            target, rest = m.group(1), m.group(2)
            layer = LIBRARIES.get(target)
            if layer is None:
                continue
            for used_name in re.findall(r"[\w.-]+", rest):
                used = LIBRARIES.get(used_name)
                if used is not None and used not in ALLOWED[layer]:
                    errors.append("%s: %s (%s) links %s (%s); %s may use only "
                                  "%s" % (rel, target, layer, used_name, used,
                                          layer,
                                          ", ".join(sorted(ALLOWED[layer]))))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = sys.argv[1]
    errors = []
    files = check_includes(root, errors)
    check_links(root, errors)
    for error in errors:
        print("error: " + error)
    print("layering: %d files checked, %d violations" % (files, len(errors)))
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
