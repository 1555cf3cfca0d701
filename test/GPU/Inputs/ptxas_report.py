#!/usr/bin/env python3
"""ptxas's resource report for every kernel of a lowered module.

Reads MLIR printed by cp-lower-to-nvvm with format=isa, takes the PTX of each
gpu.binary (the `assembly` of its #gpu.object), runs `ptxas -v` on it for
the object's chip and prints one line per kernel:

  module=BINARY kernel=NAME chip=sm_80 registers=N shared_bytes=S stack_bytes=F spill_stores=X spill_loads=Y

Exits 1 when ptxas fails or any kernel spills (a store or load of spilled
registers), with the line of the spilling kernel prefixed by SPILL.
"""

import re
import subprocess
import sys
import tempfile


def unescape(text):
    """MLIR string escapes: \\XX (two hex digits), \\\\ and \\"."""
    out, i = bytearray(), 0
    raw = text.encode()
    while i < len(raw):
        if raw[i] == ord("\\"):
            nxt = raw[i + 1:i + 3]
            if re.fullmatch(rb"[0-9A-Fa-f]{2}", nxt):
                out.append(int(nxt, 16))
                i += 3
                continue
            out.append(raw[i + 1])
            i += 2
            continue
        out.append(raw[i])
        i += 1
    return out.decode()


def main():
    ptxas, path = sys.argv[1], sys.argv[2]
    text = open(path).read()
    objects = re.findall(
        r'gpu\.binary @(\w+).*?chip = "(sm_\w+)".*?'
        r'assembly = "((?:[^"\\]|\\.)*)"', text, re.S)
    if not objects:
        print(f"ptxas_report: no #gpu.object with an assembly in {path}; "
              "lower with format=isa", file=sys.stderr)
        return 1
    spilled = False
    # A scheme lowers many identical kernels (one per step of a ring, per
    # chunk of a zigzag): ptxas runs once per distinct (chip, PTX).
    reports = {}
    for module, chip, escaped in objects:
        text = unescape(escaped)
        done = reports.get((chip, text))
        if done is None:
            with tempfile.NamedTemporaryFile("w", suffix=".ptx") as ptx:
                ptx.write(text)
                ptx.flush()
                done = subprocess.run(
                    [ptxas, "-v", f"--gpu-name={chip}", ptx.name, "-o",
                     "/dev/null"],
                    capture_output=True, text=True)
            reports[(chip, text)] = done
        if done.returncode != 0:
            print(done.stderr, file=sys.stderr)
            return 1
        kernel = None
        for line in done.stderr.splitlines():
            m = re.search(r"Compiling entry function '(\w+)'", line)
            if m:
                kernel, frame = m.group(1), (0, 0, 0)
                continue
            m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, "
                          r"(\d+) bytes spill loads", line)
            if m:
                frame = tuple(int(x) for x in m.groups())
                continue
            m = re.search(r"Used (\d+) registers(?:.*?(\d+) bytes smem)?", line)
            if m and kernel:
                regs, smem = m.group(1), m.group(2) or "0"
                spills = frame[1] + frame[2] > 0
                spilled |= spills
                print(f"{'SPILL ' if spills else ''}module={module} "
                      f"kernel={kernel} chip={chip} "
                      f"registers={regs} shared_bytes={smem} "
                      f"stack_bytes={frame[0]} spill_stores={frame[1]} "
                      f"spill_loads={frame[2]}")
                kernel = None
    return 1 if spilled else 0


if __name__ == "__main__":
    sys.exit(main())
