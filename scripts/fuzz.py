#!/usr/bin/env python3
"""Mutation fuzzer for cp-opt over the lit inputs.

Each run takes one `// -----` case of a test/**.mlir file, applies one to
three mutations that matter for cp (sizes 0/1/-1/huge, grid shapes and
axes, scheme and mask swaps, element type swaps, deleted lines) and runs it
through one of: parse and verify, -canonicalize, cp-apply-scheme,
cp-lower-to-cpu, cp-lower-to-nvvm (format=isa, no CUDA needed). A run that
ends in a signal, prints "LLVM ERROR" or a stack dump is a crash; one that
passes --timeout seconds is a hang. Under a sanitizer build, any ASan or
UBSan report is a crash too. Exit code 0 or 1 with diagnostics is fine:
that is what bad input should get.

A crash that stock mlir-opt (--stock-mlir-opt) reproduces by merely parsing
the same input is upstream MLIR's, not cp's (an upstream op's verifier
crashing, e.g. shard.reduce_scatter on a grid of size 0): it is counted in
the `upstream` column and saved as upstream-NNN, and does not fail the run.

Deterministic for a given --seed and --runs. Prints runs, crashes and hangs
per pipeline; writes each crash or hang as a reproducer into --save-dir;
exits 1 on any.

  scripts/fuzz.py --cp-opt build/bin/cp-opt --seed 1 --runs 600
  scripts/fuzz.py --cp-opt build/bin/cp-opt --seconds 900 --save-dir fuzz-out
"""
import argparse
import concurrent.futures
import os
import random
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCHEMES = ["allgather", "ulysses", "hybrid(2)", "head_tail", "ring", "zigzag",
           "auto"]
MASKS = ["none", "causal", "sliding_window(1)", "sliding_window(7)",
         "sliding_window(2147483647)"]
SIZES = ["0", "1", "-1", "3", "9223372036854775807", "2147483647", "1024"]
TYPES = ["f32", "f16", "bf16", "i1", "i32", "f64"]
PIPELINES = {
    "verify": lambda s: [],
    "canonicalize": lambda s: ["-canonicalize"],
    "apply-scheme": lambda s: ["--cp-apply-scheme=scheme=" + s, "-canonicalize"],
    "lower-to-cpu": lambda s: ["--cp-lower-to-cpu=scheme=" + s],
    "lower-to-nvvm": lambda s: ["--cp-lower-to-nvvm=scheme=" + s + " format=isa"],
}
CRASH = re.compile(r"LLVM ERROR|Stack dump|PLEASE submit a bug report|"
                   r"Assertion .* failed|ERROR: AddressSanitizer|"
                   r"runtime error: |UndefinedBehaviorSanitizer")


def cases(root):
    """Every `// -----` case of the lit inputs, without RUN/CHECK lines."""
    found = []
    for dirpath, _, files in os.walk(os.path.join(root, "test")):
        for name in sorted(files):
            if not name.endswith(".mlir"):
                continue
            text = open(os.path.join(dirpath, name), errors="replace").read()
            for case in text.split("// -----"):
                lines = [l for l in case.splitlines()
                         if not re.match(r"\s*//\s*(RUN|CHECK|[A-Z0-9_-]+:)", l)]
                body = "\n".join(lines).strip()
                if "cp." in body or "linalg." in body or "tosa." in body:
                    found.append((os.path.relpath(os.path.join(dirpath, name),
                                                  root), body))
    return sorted(found)


def mutate(text, rng):
    """One mutation; the text unchanged when none applies."""
    kind = rng.choice(["size", "size", "grid", "axes", "scheme", "mask",
                       "type", "delete", "offset"])
    if kind == "size":
        spots = list(re.finditer(r"(?<=[<x(=\s])\d+(?=[x>),\s])", text))
        if spots:
            m = rng.choice(spots)
            return text[:m.start()] + rng.choice(SIZES) + text[m.end():]
    if kind == "grid":
        spots = list(re.finditer(r"shape = [0-9x?]+", text))
        if spots:
            m = rng.choice(spots)
            shape = rng.choice(["0", "1", "3", "0x4", "2x0", "1024",
                                "9999999", "2147483647", "4x4x4", "?"])
            return text[:m.start()] + "shape = " + shape + text[m.end():]
    if kind == "axes":
        spots = list(re.finditer(r"(grid_)?axes = \[[0-9, ]*\]", text))
        if spots:
            m = rng.choice(spots)
            axes = rng.choice(["[]", "[1]", "[0, 0]", "[2]", "[-1]", "[1, 0]"])
            prefix = "grid_axes" if m.group(0).startswith("grid") else "axes"
            return text[:m.start()] + prefix + " = " + axes + text[m.end():]
    if kind == "scheme":
        spots = list(re.finditer(r"scheme = [a-z_]+(\(\d+\))?", text))
        if spots:
            m = rng.choice(spots)
            scheme = rng.choice(SCHEMES + ["hybrid(0)", "hybrid(7)"])
            return text[:m.start()] + "scheme = " + scheme + text[m.end():]
        m = re.search(r"mask = [a-z_]+(\(\d+\))?", text)
        if m:
            return (text[:m.end()] + " scheme = " + rng.choice(SCHEMES) +
                    text[m.end():])
    if kind == "mask":
        spots = list(re.finditer(r"mask = [a-z_]+(\(-?\d+\))?", text))
        if spots:
            m = rng.choice(spots)
            return text[:m.start()] + "mask = " + rng.choice(MASKS) + text[m.end():]
    if kind == "type":
        spots = list(re.finditer(r"\b(f32|f16|bf16|i1|i32|index)\b", text))
        if spots:
            m = rng.choice(spots)
            return text[:m.start()] + rng.choice(TYPES) + text[m.end():]
    if kind == "delete":
        lines = text.splitlines()
        if len(lines) > 2:
            del lines[rng.randrange(len(lines))]
            return "\n".join(lines)
    if kind == "offset":
        spots = list(re.finditer(r"(offset|gather_axis|split_axis|concat_axis) = -?\d+", text))
        if spots:
            m = rng.choice(spots)
            name = m.group(1)
            value = rng.choice(["-1", "0", "1", "4", "9223372036854775807"])
            return text[:m.start()] + name + " = " + value + text[m.end():]
    return text


def crashes(args, timeout):
    """Whether running `args` crashes (a signal, LLVM ERROR, a stack dump)."""
    proc = subprocess.run(args, capture_output=True, text=True,
                          errors="replace", timeout=timeout)
    return proc.returncode < 0 or bool(CRASH.search(proc.stderr)), proc.stderr


def run_one(cp_opt, job, timeout, stock_mlir_opt=""):
    name, text, pipeline, scheme = job
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
        f.write(text)
        path = f.name
    args = [cp_opt, path, "-o", os.devnull] + PIPELINES[pipeline](scheme)
    try:
        crashed, output = crashes(args, timeout)
        verdict = "crash" if crashed else "ok"
        if crashed and stock_mlir_opt and os.path.exists(stock_mlir_opt):
            if crashes([stock_mlir_opt, path, "-o", os.devnull], timeout)[0]:
                verdict = "upstream"
    except subprocess.TimeoutExpired:
        verdict, output = "hang", ""
    os.unlink(path)
    return verdict, output, args[4:]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cp-opt", default=os.path.join(ROOT, "build", "bin", "cp-opt"))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--runs", type=int, default=0,
                        help="runs to make (0: until --seconds)")
    parser.add_argument("--seconds", type=float, default=120)
    parser.add_argument("--timeout", type=float, default=10,
                        help="seconds after which a run is a hang")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--save-dir", default="")
    parser.add_argument("--stock-mlir-opt", default="",
                        help="the LLVM installation's mlir-opt: crashes it "
                        "reproduces on parsing alone are upstream's")
    args = parser.parse_args()

    rng = random.Random(args.seed)
    corpus = cases(ROOT)
    counts = {p: [0, 0, 0, 0] for p in PIPELINES}
    failures = []
    start = time.time()

    def jobs():
        n = 0
        while (args.runs and n < args.runs) or (
                not args.runs and time.time() - start < args.seconds):
            name, text = rng.choice(corpus)
            for _ in range(rng.randint(1, 3)):
                text = mutate(text, rng)
            yield (name, text, rng.choice(list(PIPELINES)), rng.choice(SCHEMES))
            n += 1

    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        pending = set()
        for job in jobs():
            pending.add(pool.submit(lambda j=job: (j, run_one(
                args.cp_opt, j, args.timeout, args.stock_mlir_opt))))
            if len(pending) >= 2 * args.jobs:
                done, pending = concurrent.futures.wait(
                    pending, return_when=concurrent.futures.FIRST_COMPLETED)
                for future in done:
                    record(future.result(), counts, failures)
        for future in concurrent.futures.as_completed(pending):
            record(future.result(), counts, failures)

    if args.save_dir and failures:
        os.makedirs(args.save_dir, exist_ok=True)
        for i, (job, verdict, output, flags) in enumerate(failures):
            base = os.path.join(args.save_dir, "%s-%03d" % (verdict, i))
            with open(base + ".mlir", "w") as f:
                f.write("// %s from %s: cp-opt %s\n%s\n" % (
                    verdict, job[0], " ".join(flags), job[1]))
            with open(base + ".log", "w") as f:
                f.write(output)
    total = [sum(c[i] for c in counts.values()) for i in range(4)]
    print("fuzz: seed %d, %d cases from the lit inputs, %.0f s" % (
        args.seed, len(corpus), time.time() - start))
    print("%-14s %8s %8s %8s %8s" % ("pipeline", "runs", "crashes", "hangs",
                                     "upstream"))
    for p, (runs, crashed, hangs, upstream) in counts.items():
        print("%-14s %8d %8d %8d %8d" % (p, runs, crashed, hangs, upstream))
    print("%-14s %8d %8d %8d %8d" % ("total", *total))
    for job, verdict, output, flags in failures[:20]:
        first = next((l for l in output.splitlines() if CRASH.search(l) or
                      "error" in l), "")
        print("%s: %s (cp-opt %s): %s" % (verdict, job[0], " ".join(flags),
                                          first[:200]))
    sys.exit(1 if any(f[1] != "upstream" for f in failures) else 0)


def record(result, counts, failures):
    job, (verdict, output, flags) = result
    counts[job[2]][0] += 1
    if verdict == "crash":
        counts[job[2]][1] += 1
    if verdict == "hang":
        counts[job[2]][2] += 1
    if verdict == "upstream":
        counts[job[2]][3] += 1
    if verdict != "ok":
        failures.append((job, verdict, output, flags))


if __name__ == "__main__":
    main()
