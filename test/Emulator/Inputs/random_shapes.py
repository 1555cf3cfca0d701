#!/usr/bin/env python3
"""Random attention shapes through both forward GPU kernels, on the CPU.

Writes one function per case (seeded: the same cases every run), lowers the
file with cp-lower-local-attention-to-gpu under kernel=simt and kernel=mma,
runs every case under cp-gpu-emulate against the reference, prints its
PASS/FAIL line, then one summary line per kernel. Exits 1 if any case fails.

usage: random_shapes.py CP_OPT CP_GPU_EMULATE WORKDIR [CASES] [SEED]
"""

import random
import subprocess
import sys


def case_text(name, c):
    q = f"{c['B']}x{c['H']}x{c['Sq']}x{c['D']}x{c['dt']}"
    k = f"{c['B']}x{c['Hkv']}x{c['Sk']}x{c['D']}x{c['dt']}"
    v = f"{c['B']}x{c['Hkv']}x{c['Sk']}x{c['Dv']}x{c['dt']}"
    o = f"{c['B']}x{c['H']}x{c['Sq']}x{c['Dv']}xf32"
    lse = f"{c['B']}x{c['H']}x{c['Sq']}xf32"
    mask = {"none": "", "causal": "mask = causal"}.get(
        c["mask"], f"mask = sliding_window({c['window']})")
    return f"""
func.func @{name}(%q: memref<{q}>, %k: memref<{k}>, %v: memref<{v}>,
                  %o: memref<{o}>, %lse: memref<{lse}>) {{
  %qo = arith.constant {c['qo']} : index
  %ko = arith.constant {c['ko']} : index
  cp.buffer.local_attention %q, %k, %v offsets(%qo, %ko) into %o, %lse {mask}
      : memref<{q}>, memref<{k}>, memref<{v}> into memref<{o}>, memref<{lse}>
  return
}}
"""


def main():
    cp_opt, emulate, work = sys.argv[1:4]
    count = int(sys.argv[4]) if len(sys.argv) > 4 else 12
    rng = random.Random(int(sys.argv[5]) if len(sys.argv) > 5 else 2026)
    cases = []
    for i in range(count):
        hkv = rng.choice([1, 2])
        c = {
            "B": rng.choice([1, 2]), "Hkv": hkv, "H": hkv * rng.choice([1, 2]),
            "Sq": rng.randint(1, 150), "Sk": rng.randint(1, 200),
            "D": rng.choice([16, 32, 48, 64]), "Dv": rng.choice([16, 32, 48]),
            "dt": rng.choice(["bf16", "f16"]),
            "mask": rng.choice(["none", "causal", "window"]),
            "window": rng.randint(1, 90),
            "qo": rng.choice([0, rng.randint(0, 120)]),
            "ko": rng.choice([0, rng.randint(0, 60)]),
        }
        cases.append((f"case{i}", c))
    source = f"{work}/random_shapes.mlir"
    with open(source, "w") as f:
        for name, c in cases:
            f.write(case_text(name, c))
    failed_total = 0
    for kernel in ["simt", "mma"]:
        lowered = f"{work}/random_shapes.{kernel}.mlir"
        lowering = subprocess.run(
            [cp_opt, source, f"-cp-lower-local-attention-to-gpu=kernel={kernel}",
             "-o", lowered], capture_output=True, text=True)
        if lowering.returncode != 0 or "remark" in lowering.stderr:
            # Every case must take the kernel asked for.
            print(lowering.stderr)
            return 1
        failed = 0
        for name, c in cases:
            mask = {"none": "none", "causal": "causal"}.get(
                c["mask"], f"window:{c['window']}")
            tolerance = "8e-3" if c["dt"] == "bf16" else "2e-3"
            run = subprocess.run(
                [emulate, lowered, "--func", name, "--mask", mask,
                 "--q-offset", str(c["qo"]), "--kv-offset", str(c["ko"]),
                 "--tolerance", tolerance],
                capture_output=True, text=True)
            line = (run.stdout.strip() or run.stderr.strip()).splitlines()
            print(f"kernel={kernel} {c['dt']} offsets=({c['qo']},{c['ko']}) "
                  + (line[-1] if line else f"no output (exit {run.returncode})"))
            failed += run.returncode != 0
        print(f"kernel={kernel}: {len(cases)} cases, {failed} failed")
        failed_total += failed
    return 1 if failed_total else 0


if __name__ == "__main__":
    sys.exit(main())
