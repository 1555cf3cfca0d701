#!/usr/bin/env python3
"""Deletes the tensor-core kernel's end-of-tile gpu.barrier: the last one
before the first `nvvm.cp.async.wait.group 0` of the file (the key loop's
last op before its yield). The emulator must then catch the next tile's
cp.async overwriting a stage other warps still read.

usage: drop_loop_barrier.py IN OUT
"""

import sys

lines = open(sys.argv[1]).read().split("\n")
end = next(i for i, line in enumerate(lines)
           if "nvvm.cp.async.wait.group 0" in line)
last = max(i for i in range(end) if "gpu.barrier" in lines[i])
del lines[last]
open(sys.argv[2], "w").write("\n".join(lines))
