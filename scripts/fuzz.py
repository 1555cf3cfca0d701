#!/usr/bin/env python3
"""Mutation fuzzer for cp-opt over the lit inputs.

Each run takes one `// -----` case of a test/**.mlir file (or of
examples/*.mlir, GRID read as 2), applies one to three mutations that
matter for cp (sizes 0/1/-1/huge, grid shapes and axes, sharding split
axes, scheme and mask swaps, element type swaps, deleted lines) and runs it
through one of: parse and verify, -canonicalize, cp-apply-scheme,
cp-lower-to-cpu, cp-lower-to-nvvm (format=isa, no CUDA needed), upstream's
sharding-propagation and shard-partition then -canonicalize (`sharding`),
or those then cp-lower-to-cpu (`sharding-to-cpu`). A sharding pipeline gets
a case with `shard.sharding` annotations two times in three, and a case
with any `shard.` op otherwise. A run that ends in a signal, prints
"LLVM ERROR" or a stack dump is a crash; one that passes --timeout seconds
is a hang. Under a sanitizer build, any ASan or UBSan report is a crash
too. Exit code 0 or 1 with diagnostics is fine: that is what bad input
should get.

A crash or hang that stock mlir-opt (--stock-mlir-opt) reproduces is
upstream MLIR's, not cp's: one it shows by merely parsing the same input
(an upstream op's verifier crashing, e.g. shard.reduce_scatter on a grid of
size 0); for a mutant without cp ops under a pipeline of upstream passes
(-canonicalize, `sharding`, or the `sharding` part of `sharding-to-cpu`
when cp-opt fails there already), one it shows running that pipeline; and
for a crash under `sharding` (or that part of `sharding-to-cpu`), one it
shows on the mutant's shardings alone: a module of the mutant's shard.grid
ops and, for each `shard.shard` of it, a function that annotates an
argument of the same type with the same sharding (upstream's partitioner
divides by a grid axis of size 0 and reads grid axes past the grid's rank,
whatever the ops around them). It is counted in the `upstream` column,
saved as upstream-NNN (upstream-hang-NNN) with the reason (and that
module) in its log, and does not fail the run. Stock mlir-opt cannot parse
cp ops, so a mutant with cp ops that its shardings alone do not explain
stays a crash: minimise it by hand. A hang is run once more with
--hang-recheck seconds as the limit, and its log says whether and when it
finished (slow, not stuck).

Mutants under the same pipeline and scheme run --batch at a time in one
cp-opt process (`--split-input-file`): most of a run is cp-opt starting.
A batch that crashes or passes --timeout is run again one mutant at a
time, so every verdict, and the limit of --timeout seconds, is a single
mutant's.

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
import shlex
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
SHARDING = "func.func(sharding-propagation,shard-partition),canonicalize"
PIPELINES = {
    "verify": lambda s: [],
    "canonicalize": lambda s: ["-canonicalize"],
    "apply-scheme": lambda s: ["--cp-apply-scheme=scheme=" + s, "-canonicalize"],
    "lower-to-cpu": lambda s: ["--cp-lower-to-cpu=scheme=" + s],
    "lower-to-nvvm": lambda s: ["--cp-lower-to-nvvm=scheme=" + s + " format=isa"],
    "sharding": lambda s: ["--pass-pipeline=builtin.module(%s)" % SHARDING],
    "sharding-to-cpu": lambda s: [
        "--pass-pipeline=builtin.module(%s,cp-lower-to-cpu{scheme=%s})" % (
            SHARDING, s)],
}
# Pipelines of upstream passes alone: stock mlir-opt runs them too.
UPSTREAM_PIPELINES = {"verify", "canonicalize", "sharding"}
# A pipeline whose first part is one of those: a failure that cp-opt shows
# on that part alone is checked against stock mlir-opt on that part.
UPSTREAM_PREFIX = {"sharding-to-cpu": "sharding"}
SHARDING_PIPELINES = {"sharding", "sharding-to-cpu"}
CP_OP = re.compile(r"\bcp\.[a-z_]")
ANNOTATED = re.compile(r"\bshard\.shard(ing)?\b")
SHARDING_OP = re.compile(r"(%[\w.$-]+) = shard\.sharding (@[\w.$-]+) "
                         r"(split_axes = [^:\n]*): !shard\.sharding")
SHARD_OP = re.compile(r"= shard\.shard (%[\w.$-]+) to (%[\w.$-]+)"
                      r"(?: annotate_for_users)? : (tensor<[^>\n]*>)")
GRID_OP = re.compile(r"^\s*shard\.grid .*$", re.M)
WITNESS = """{grids}
func.func @shardings(%x: {type}) -> {type} {{
  %s = shard.sharding {grid} {split} : !shard.sharding
  %y = shard.shard %x to %s : {type}
  %r = shard.sharding {grid} split_axes = [[]] : !shard.sharding
  %z = shard.shard %y to %r {users}: {type}
  return %z : {type}
}}
"""
CRASH = re.compile(r"LLVM ERROR|Stack dump|PLEASE submit a bug report|"
                   r"Assertion .* failed|ERROR: AddressSanitizer|"
                   r"runtime error: |UndefinedBehaviorSanitizer")


def cases(root):
    """Every `// -----` case of the lit inputs and the examples, without
    RUN/CHECK lines."""
    found = []
    for top in ("test", "examples"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if not name.endswith(".mlir"):
                    continue
                path = os.path.join(dirpath, name)
                text = open(path, errors="replace").read()
                # examples/transformer-block-sharded.mlir: the grid size is
                # filled in by whoever compiles it.
                text = text.replace("shape = GRID)", "shape = 2)")
                for case in text.split("// -----"):
                    lines = [l for l in case.splitlines() if not re.match(
                        r"\s*//\s*(RUN|CHECK|[A-Z0-9_-]+:)", l)]
                    body = "\n".join(lines).strip()
                    if any(d in body for d in ("cp.", "linalg.", "tosa.",
                                               "shard.")):
                        found.append((os.path.relpath(path, root), body))
    return sorted(found)


def mutate(text, rng):
    """One mutation; the text unchanged when none applies."""
    kind = rng.choice(["size", "size", "grid", "axes", "scheme", "mask",
                       "type", "delete", "offset", "split"])
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
    if kind == "split":
        spots = list(re.finditer(r"split_axes = \[[\[\]0-9, ]*\]", text))
        if spots:
            m = rng.choice(spots)
            axes = rng.choice(["[]", "[[0]]", "[[], [0]]", "[[], [], [0]]",
                               "[[], [], [], [0]]", "[[], [], [], [], [0]]",
                               "[[0], [0]]", "[[0, 0]]", "[[], [], [1]]",
                               "[[], [], [0, 1]]", "[[], [], [-1]]"])
            return text[:m.start()] + "split_axes = " + axes + text[m.end():]
    return text


def crashes(args, timeout):
    """Whether running `args` crashes (a signal, LLVM ERROR, a stack dump)."""
    proc = subprocess.run(args, capture_output=True, text=True,
                          errors="replace", timeout=timeout)
    return proc.returncode < 0 or bool(CRASH.search(proc.stderr)), proc.stderr


def sharding_witnesses(text):
    """The mutant's shardings alone, without its ops: for each distinct
    `shard.shard %v to %s : T` whose %s is a `shard.sharding` of the mutant,
    a module of the mutant's grids and one function that annotates an
    argument of type T with that sharding and returns it, as it is and
    resharded to replicated. No cp op in them."""
    defs = {m.group(1): (m.group(2), m.group(3))
            for m in SHARDING_OP.finditer(text)}
    grids = "\n".join(GRID_OP.findall(text))
    seen = set()
    for m in SHARD_OP.finditer(text):
        if m.group(2) not in defs:
            continue
        grid, split = defs[m.group(2)]
        key = (grid, split, m.group(3))
        if key in seen:
            continue
        seen.add(key)
        for users in ("", "annotate_for_users "):
            yield WITNESS.format(grids=grids, grid=grid, split=split,
                                 type=m.group(3), users=users)


def stock_crashes(stock_mlir_opt, text, flags, timeout, hang=False):
    """Whether stock mlir-opt crashes (with `hang`: runs over `timeout`) on
    `text` under `flags`."""
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
        f.write(text)
    try:
        return crashes([stock_mlir_opt, f.name, "-o", os.devnull] + flags,
                       timeout)[0] and not hang
    except subprocess.TimeoutExpired:
        return hang
    finally:
        os.unlink(f.name)


def upstream_reason(cp_opt, stock_mlir_opt, path, text, pipeline, timeout,
                    hang):
    """Why the crash (with `hang`: the hang) of cp-opt on this mutant is
    upstream MLIR's, as stock mlir-opt shows it; "" when it does not."""
    if not stock_mlir_opt or not os.path.exists(stock_mlir_opt):
        return ""
    if stock_crashes(stock_mlir_opt, text, [], timeout, hang):
        return "stock mlir-opt fails the same way parsing it"
    part = pipeline if pipeline in UPSTREAM_PIPELINES else \
        UPSTREAM_PREFIX.get(pipeline)
    if not part or part == "verify":
        return ""
    flags = PIPELINES[part]("")
    if part != pipeline:
        # cp-opt must fail the same way on the upstream part alone.
        try:
            failed = crashes([cp_opt, path, "-o", os.devnull] + flags,
                             timeout)[0] and not hang
        except subprocess.TimeoutExpired:
            failed = hang
        if not failed:
            return ""
    if not CP_OP.search(text) and stock_crashes(stock_mlir_opt, text, flags,
                                                timeout, hang):
        return "stock mlir-opt fails the same way running %s on it" % part
    if part == "sharding" and not hang:
        for witness in sharding_witnesses(text):
            if stock_crashes(stock_mlir_opt, witness, flags, timeout):
                return ("stock mlir-opt crashes running %s on the mutant's "
                        "shardings alone:\n%s" % (part, witness))
    return ""


def run_one(cp_opt, job, timeout, stock_mlir_opt="", hang_recheck=0):
    name, text, pipeline, scheme = job
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
        f.write(text)
        path = f.name
    flags = PIPELINES[pipeline](scheme)
    args = [cp_opt, path, "-o", os.devnull] + flags
    try:
        crashed, output = crashes(args, timeout)
        verdict = "crash" if crashed else "ok"
        if crashed:
            why = upstream_reason(cp_opt, stock_mlir_opt, path, text,
                                  pipeline, timeout, False)
            if why:
                verdict = "upstream"
                output += "upstream: " + why + "\n"
    except subprocess.TimeoutExpired:
        verdict, output = "hang", "cp-opt: over %g s" % timeout
        if hang_recheck > timeout:
            began = time.time()
            try:
                proc = subprocess.run(args, capture_output=True, text=True,
                                      errors="replace", timeout=hang_recheck)
                output += "; finished in %.1f s, exit code %d\n%s" % (
                    time.time() - began, proc.returncode, proc.stderr)
            except subprocess.TimeoutExpired:
                output += "; still running after %g s\n" % hang_recheck
        else:
            output += "\n"
        why = upstream_reason(cp_opt, stock_mlir_opt, path, text, pipeline,
                              timeout, True)
        if why:
            verdict = "upstream-hang"
            output += "upstream: " + why + "\n"
    os.unlink(path)
    return verdict, output, flags


def run_batch(cp_opt, batch, timeout, stock_mlir_opt="", hang_recheck=0):
    """Runs `batch` (jobs under one pipeline and scheme) in one cp-opt
    process; one at a time (run_one) when that crashes or passes
    `timeout`. Returns [(job, (verdict, output, flags))]."""
    if len(batch) > 1:
        _, _, pipeline, scheme = batch[0]
        flags = PIPELINES[pipeline](scheme)
        with tempfile.NamedTemporaryFile("w", suffix=".mlir",
                                         delete=False) as f:
            f.write("\n// -----\n".join(job[1] for job in batch))
            path = f.name
        try:
            crashed, _ = crashes([cp_opt, path, "--split-input-file", "-o",
                                  os.devnull] + flags, timeout)
        except subprocess.TimeoutExpired:
            crashed = True
        finally:
            os.unlink(path)
        if not crashed:
            return [(job, ("ok", "", flags)) for job in batch]
    return [(job, run_one(cp_opt, job, timeout, stock_mlir_opt, hang_recheck))
            for job in batch]


def batches(jobs, size):
    """`jobs` in batches of at most `size` that share pipeline and scheme,
    formed within windows of 24 * size consecutive jobs."""
    jobs = iter(jobs)
    while True:
        window = [job for _, job in zip(range(24 * size), jobs)]
        if not window:
            return
        groups = {}
        for job in window:
            key = (job[2], tuple(PIPELINES[job[2]](job[3])))
            groups.setdefault(key, []).append(job)
        for group in groups.values():
            for i in range(0, len(group), size):
                yield group[i:i + size]


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
    parser.add_argument("--batch", type=int, default=16,
                        help="mutants per cp-opt process (1: one each)")
    parser.add_argument("--save-dir", default="")
    parser.add_argument("--stock-mlir-opt", default="",
                        help="the LLVM installation's mlir-opt: crashes and "
                        "hangs it reproduces (parsing alone, the same "
                        "upstream pipeline on a mutant without cp ops, or "
                        "the sharding passes on the mutant's shardings "
                        "alone) are upstream's")
    parser.add_argument("--hang-recheck", type=float, default=60,
                        help="rerun a hang with this limit and log whether "
                        "it finishes (0: do not)")
    args = parser.parse_args()

    rng = random.Random(args.seed)
    corpus = cases(ROOT)
    shard_cases = [c for c in corpus if "shard." in c[1]]
    annotated = [c for c in corpus if ANNOTATED.search(c[1])]
    counts = {p: [0, 0, 0, 0] for p in PIPELINES}
    failures = []
    start = time.time()

    def jobs():
        n = 0
        while (args.runs and n < args.runs) or (
                not args.runs and time.time() - start < args.seconds):
            pipeline = rng.choice(list(PIPELINES))
            pool = corpus
            if pipeline in SHARDING_PIPELINES:
                pool = annotated if rng.random() < 2 / 3 else shard_cases
            name, text = rng.choice(pool)
            for _ in range(rng.randint(1, 3)):
                text = mutate(text, rng)
            yield (name, text, pipeline, rng.choice(SCHEMES))
            n += 1

    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        pending = set()
        for batch in batches(jobs(), max(1, args.batch)):
            pending.add(pool.submit(lambda b=batch: run_batch(
                args.cp_opt, b, args.timeout, args.stock_mlir_opt,
                args.hang_recheck)))
            if len(pending) >= 2 * args.jobs:
                done, pending = concurrent.futures.wait(
                    pending, return_when=concurrent.futures.FIRST_COMPLETED)
                for future in done:
                    for result in future.result():
                        record(result, counts, failures)
        for future in concurrent.futures.as_completed(pending):
            for result in future.result():
                record(result, counts, failures)

    if args.save_dir and failures:
        os.makedirs(args.save_dir, exist_ok=True)
        for i, (job, verdict, output, flags) in enumerate(failures):
            base = os.path.join(args.save_dir, "%s-%03d" % (verdict, i))
            with open(base + ".mlir", "w") as f:
                f.write("// %s from %s: cp-opt %s\n%s\n" % (
                    verdict, job[0], " ".join(map(shlex.quote, flags)),
                    job[1]))
            with open(base + ".log", "w") as f:
                f.write(output)
    total = [sum(c[i] for c in counts.values()) for i in range(4)]
    print("fuzz: seed %d, %d cases from the lit inputs, %.0f s" % (
        args.seed, len(corpus), time.time() - start))
    print("%-15s %8s %8s %8s %8s" % ("pipeline", "runs", "crashes", "hangs",
                                     "upstream"))
    for p, (runs, crashed, hangs, upstream) in counts.items():
        print("%-15s %8d %8d %8d %8d" % (p, runs, crashed, hangs, upstream))
    print("%-15s %8d %8d %8d %8d" % ("total", *total))
    for job, verdict, output, flags in failures[:20]:
        first = next((l for l in output.splitlines() if CRASH.search(l) or
                      "error" in l or l.startswith("cp-opt: ")), "")
        if verdict.startswith("upstream"):
            first = next((l[len("upstream: "):] for l in output.splitlines()
                          if l.startswith("upstream: ")), first)
        print("%s: %s (cp-opt %s): %s" % (verdict, job[0], " ".join(flags),
                                          first[:200]))
    sys.exit(1 if any(not f[1].startswith("upstream") for f in failures)
             else 0)


def record(result, counts, failures):
    job, (verdict, output, flags) = result
    counts[job[2]][0] += 1
    if verdict == "crash":
        counts[job[2]][1] += 1
    if verdict == "hang":
        counts[job[2]][2] += 1
    if verdict.startswith("upstream"):
        counts[job[2]][3] += 1
    if verdict != "ok":
        failures.append((job, verdict, output, flags))


if __name__ == "__main__":
    main()
