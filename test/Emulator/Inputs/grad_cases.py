#!/usr/bin/env python3
"""Backward cases through the tensor-core backward kernel, on the CPU.

Writes one cp.buffer.local_attention_grad function per case, lowers the file
with cp-lower-local-attention-grad-to-gpu{kernel=mma dq=MODE}, fails if the
lowering falls back to the SIMT kernel for any case (a remark), runs every
case under cp-gpu-emulate --grad against the reference gradient, and checks
that each result line says kernel=mma. Prints one line per case and one
summary line per dq mode; exits 1 if any case fails.

  matrix: every mask (none, causal with a query offset, a sliding window
          with both offsets, a document mask_mod, a softcap score_mod) x
          every head layout (MHA, GQA 4:1, MLA with Dv != D) x f16, bf16;
  random: seeded random shapes (batches, heads, Sq and Sk from 1, head
          dims, offsets, the masks above and an explicit boolean mask,
          16-bit or f32 gradients).

--only NAME runs one case; --emulate-flag passes a flag to every
cp-gpu-emulate (--break-ldmatrix-trans); --mutate drop-delta rewrites the
lowered kernels so that D_i = rowsum(dO o O) is 0 (its math.fma becomes
x - x): the checks must then fail.

usage: grad_cases.py CP_OPT CP_GPU_EMULATE WORKDIR matrix|random
                     [--count N] [--seed S] [--dq atomic,recompute]
                     [--only NAME] [--emulate-flag FLAG] [--mutate drop-delta]
"""

import argparse
import random
import re
import subprocess
import sys

# The 16-bit tolerances of the forward checks (max abs error, here as a
# fraction of max(1, |gradient|)).
TOLERANCE = {"bf16": "8e-3", "f16": "2e-3"}

SOFTCAP = 2.0

PRELUDE = f"""
func.func private @softcap(%x: f32, %b: index, %h: index, %qi: index, %ki: index) -> f32 {{
  %cap = arith.constant {SOFTCAP} : f32
  %xs = arith.divf %x, %cap : f32
  %t = math.tanh %xs : f32
  %y = arith.mulf %t, %cap : f32
  return %y : f32
}}
"""


def document_fn(length):
    return f"""
func.func private @same_document_{length}(%b: index, %h: index, %qi: index, %ki: index, %s: memref<{length}xi32>) -> i1 {{
  %a = memref.load %s[%qi] : memref<{length}xi32>
  %c = memref.load %s[%ki] : memref<{length}xi32>
  %same = arith.cmpi eq, %a, %c : i32
  return %same : i1
}}
"""


def case_text(name, c):
    dt, gt = c["dt"], c["gt"]
    q = f"{c['B']}x{c['H']}x{c['Sq']}x{c['D']}"
    k = f"{c['B']}x{c['Hkv']}x{c['Sk']}x{c['D']}"
    v = f"{c['B']}x{c['Hkv']}x{c['Sk']}x{c['Dv']}"
    o = f"{c['B']}x{c['H']}x{c['Sq']}x{c['Dv']}"
    lse = f"{c['B']}x{c['H']}x{c['Sq']}xf32"
    types = {
        "q": f"memref<{q}x{dt}>", "k": f"memref<{k}x{dt}>",
        "v": f"memref<{v}x{dt}>", "o": f"memref<{o}x{dt}>",
        "lse": f"memref<{lse}>", "do": f"memref<{o}x{dt}>",
        "dq": f"memref<{q}x{gt}>", "dk": f"memref<{k}x{gt}>",
        "dv": f"memref<{v}x{gt}>",
    }
    args = [f"%q: {types['q']}", f"%k: {types['k']}", f"%v: {types['v']}"]
    mods, attrs, explicit = "", "", ""
    mask = c["mask"]
    if mask == "document":
        length = c["segments"]
        args.append(f"%seg: memref<{length}xi32>")
        mods = f" mod_operands(%seg : memref<{length}xi32>)"
        attrs = f" mask = causal mask_mod = @same_document_{length}"
    elif mask == "causal":
        attrs = " mask = causal"
    elif mask == "window":
        attrs = f" mask = sliding_window({c['window']})"
    elif mask == "softcap":
        attrs = " mask = causal score_mod = @softcap"
    elif mask == "explicit":
        # A boolean [Sq, Sk] mask on top of causal (the emulator fills it).
        explicit = f"memref<{c['Sq']}x{c['Sk']}xi1>"
        args.append(f"%m: {explicit}")
        attrs = " mask = causal"
    for a in ["o", "lse", "do", "dq", "dk", "dv"]:
        args.append(f"%{a}: {types[a]}")
    ins = ", ".join(types[a] for a in ["q", "k", "v", "o", "lse", "do"])
    if explicit:
        ins += ", " + explicit
    outs = ", ".join(types[a] for a in ["dq", "dk", "dv"])
    return f"""
func.func @{name}({", ".join(args)}) {{
  %qo = arith.constant {c['qo']} : index
  %ko = arith.constant {c['ko']} : index
  cp.buffer.local_attention_grad %q, %k, %v, %o, %lse, %do offsets(%qo, %ko){mods}
      {"explicit_mask %m " if explicit else ""}into %dq, %dk, %dv{attrs}
      : {ins}
      into {outs}
  return
}}
"""


def emulate_flags(c):
    mask = {"none": "none", "window": f"window:{c['window']}"}.get(
        c["mask"], "causal")
    flags = ["--mask", mask, "--q-offset", str(c["qo"]),
             "--kv-offset", str(c["ko"]), "--tolerance", TOLERANCE[c["dt"]]]
    if c["mask"] == "softcap":
        flags += ["--softcap", str(SOFTCAP)]
    return flags


HEADS = {
    "mha": {"H": 2, "Hkv": 2, "D": 32, "Dv": 32},
    "gqa4": {"H": 4, "Hkv": 1, "D": 32, "Dv": 32},
    "mla": {"H": 2, "Hkv": 1, "D": 48, "Dv": 32},
}


def with_mask(c, mask, rng):
    """Fills the offsets and mask parameters of case `c` for `mask`."""
    c["mask"] = mask
    c["qo"], c["ko"], c["window"] = 0, 0, 0
    if mask == "causal":
        # The queries are the last of the keys' positions, as in a chunk.
        c["qo"] = max(0, c["Sk"] - c["Sq"])
    elif mask == "window":
        c["window"] = rng.randint(8, 60)
        c["qo"], c["ko"] = rng.randint(1, 40), rng.randint(1, 20)
    elif mask in ("document", "softcap", "explicit"):
        c["qo"] = max(0, c["Sk"] - c["Sq"])
    c["segments"] = max(c["qo"] + c["Sq"], c["ko"] + c["Sk"])
    return c


def matrix_cases():
    rng = random.Random(32)
    cases = []
    for mask in ["none", "causal", "window", "document", "softcap"]:
        for heads, dims in HEADS.items():
            for dt in ["f16", "bf16"]:
                c = dict(dims, B=1, Sq=rng.randint(40, 80),
                         Sk=rng.randint(60, 100), dt=dt, gt=dt)
                cases.append((f"{mask}_{heads}_{dt}", with_mask(c, mask, rng)))
    return cases


def random_cases(count, seed):
    rng = random.Random(seed)
    cases = []
    for i in range(count):
        hkv = rng.choice([1, 2])
        dt = rng.choice(["bf16", "f16"])
        c = {
            "B": rng.choice([1, 2]), "Hkv": hkv,
            "H": hkv * rng.choice([1, 2, 4]),
            "Sq": rng.randint(1, 140), "Sk": rng.randint(1, 160),
            "D": rng.choice([16, 32, 48, 64]), "Dv": rng.choice([16, 32, 48]),
            "dt": dt, "gt": rng.choice([dt, "f32"]),
        }
        mask = rng.choice(["none", "causal", "window", "document", "softcap",
                           "explicit"])
        with_mask(c, mask, rng)
        if mask != "window":
            c["qo"] = rng.choice([c["qo"], rng.randint(0, 100)])
            c["ko"] = rng.choice([0, rng.randint(0, 50)])
            c["segments"] = max(c["qo"] + c["Sq"], c["ko"] + c["Sk"])
        cases.append((f"case{i}", c))
    return cases


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("cp_opt")
    parser.add_argument("emulate")
    parser.add_argument("work")
    parser.add_argument("kind", choices=["matrix", "random"])
    parser.add_argument("--count", type=int, default=16)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--dq", default="atomic")
    parser.add_argument("--only")
    parser.add_argument("--emulate-flag", action="append", default=[])
    parser.add_argument("--mutate", choices=["drop-delta"])
    args = parser.parse_args()

    cases = (matrix_cases() if args.kind == "matrix"
             else random_cases(args.count, args.seed))
    if args.only:
        cases = [(name, c) for name, c in cases if name == args.only]
        if not cases:
            print(f"grad_cases.py: no case named {args.only}")
            return 1
    source = f"{args.work}/grad_{args.kind}.mlir"
    with open(source, "w") as f:
        f.write(PRELUDE)
        for length in sorted({c["segments"] for _, c in cases
                              if c["mask"] == "document"}):
            f.write(document_fn(length))
        for name, c in cases:
            f.write(case_text(name, c))
    failed_total = 0
    for mode in args.dq.split(","):
        lowered = f"{args.work}/grad_{args.kind}.{mode}.mlir"
        lowering = subprocess.run(
            [args.cp_opt, source,
             f"-cp-lower-local-attention-grad-to-gpu=kernel=mma dq={mode}",
             "-o", lowered], capture_output=True, text=True)
        if lowering.returncode != 0 or "remark" in lowering.stderr:
            # Every case must take the tensor-core kernel.
            print(lowering.stderr)
            return 1
        if args.mutate == "drop-delta":
            with open(lowered) as f:
                text = f.read()
            text, count = re.subn(
                r"math\.fma %\w+, %\w+, (%\w+) : f32",
                r"arith.subf \1, \1 : f32", text)
            if count == 0:
                print("grad_cases.py: no math.fma to mutate")
                return 1
            with open(lowered, "w") as f:
                f.write(text)
        failed = 0
        for name, c in cases:
            run = subprocess.run(
                [args.emulate, lowered, "--grad", "--func", name]
                + emulate_flags(c) + args.emulate_flag,
                capture_output=True, text=True)
            line = (run.stdout.strip() or run.stderr.strip()).splitlines()
            line = line[-1] if line else f"no output (exit {run.returncode})"
            ok = run.returncode == 0 and line.endswith("kernel=mma")
            print(f"dq={mode} {c['dt']}->{c['gt']} "
                  f"offsets=({c['qo']},{c['ko']}) {line}")
            failed += not ok
        print(f"dq={mode}: {len(cases)} cases, {failed} failed")
        failed_total += failed
    return 1 if failed_total else 0


if __name__ == "__main__":
    sys.exit(main())
