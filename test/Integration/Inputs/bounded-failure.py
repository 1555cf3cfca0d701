"""Runs a command that must fail, and fail in bounded time.

Usage: bounded-failure.py SECONDS -- COMMAND...

Prints the command's combined output, then one line
`bounded-failure: exit=N within=SECONDS`. Exits 1 (after killing the
command's whole process group) when the command succeeds, or is still
running after SECONDS.
"""
import os
import signal
import subprocess
import sys
import time

limit = float(sys.argv[1])
command = sys.argv[sys.argv.index("--") + 1:]
start = time.monotonic()
process = subprocess.Popen(command, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, start_new_session=True)
try:
    output, _ = process.communicate(timeout=limit)
except subprocess.TimeoutExpired:
    os.killpg(process.pid, signal.SIGKILL)
    output, _ = process.communicate()
    sys.stdout.write(output.decode(errors="replace"))
    print(f"bounded-failure: still running after {limit:g} s")
    sys.exit(1)
sys.stdout.write(output.decode(errors="replace"))
elapsed = time.monotonic() - start
if process.returncode == 0:
    print("bounded-failure: the command succeeded")
    sys.exit(1)
print(f"bounded-failure: exit={process.returncode} within={limit:g} "
      f"elapsed={elapsed:.1f}")
