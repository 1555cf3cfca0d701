"""Where the package finds cp-mlir's tools.

The package sits in <root>/python_packages/cp_mlir, both in a build tree
and in an install tree, with the tools in <root>/bin. CP_MLIR_TOOLS_DIR
overrides that; MPIRUN names the MPI launcher (default: mpirun on PATH).
"""

import os
import shutil

_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def tools_dir():
    return os.environ.get("CP_MLIR_TOOLS_DIR", os.path.join(_root, "bin"))


def tool(name):
    path = os.path.join(tools_dir(), name)
    if not os.access(path, os.X_OK):
        raise FileNotFoundError(
            f"cp_mlir: {name} not found in {tools_dir()}; set CP_MLIR_TOOLS_DIR "
            "to the bin directory of a cp-mlir build or install")
    return path


def mpirun():
    launcher = os.environ.get("MPIRUN") or shutil.which("mpirun") or shutil.which("mpiexec")
    if not launcher:
        raise FileNotFoundError(
            "cp_mlir: no MPI launcher (mpirun) on PATH; install MPICH "
            "(apt-get install mpich) or set MPIRUN")
    return launcher
