"""run_cpu: a compiled program on P MPI ranks, numpy in and out."""

import json
import os
import subprocess
import sys
import tempfile

import numpy as np

from . import _config
from ._errors import RunError

# Element types a rank can hand to compiled code, as numpy dtypes.
_DTYPES = {"f32": np.float32, "f16": np.float16, "i1": np.bool_,
           "f64": np.float64, "i32": np.int32, "i64": np.int64}


def _numpy_dtype(element):
    if element not in _DTYPES:
        raise TypeError(f"cp_mlir: run_cpu cannot pass {element} tensors "
                        "(numpy has no such dtype); use f32 or f16")
    return _DTYPES[element]


# The numpy kinds each element type takes without losing information: float
# programs take real floats (an int array passed for q, k or v is a mistake
# to report, not to cast), i1 programs booleans, integer programs integers.
_ACCEPTED_KINDS = {"f32": "f", "f16": "f", "f64": "f", "i1": "b",
                   "i32": "iub", "i64": "iub"}


def _checked_input(array, element, name):
    """``array`` as the contiguous numpy array the program's ``element``
    argument takes; TypeError when converting it would lose information
    (complex values, or integers or booleans where the program wants
    floats)."""
    array = np.asarray(array)
    dtype = _numpy_dtype(element)
    if array.dtype.kind not in _ACCEPTED_KINDS[element]:
        lost = ("the imaginary part" if array.dtype.kind == "c"
                else f"{array.dtype} values are not {element} values")
        raise TypeError(
            f"cp_mlir: input '{name}' has dtype {array.dtype}, but the program "
            f"takes {element}: converting it would lose information ({lost}); "
            f"convert it first if that is intended, e.g. "
            f"array.astype(np.{np.dtype(dtype).name})")
    return np.ascontiguousarray(array, dtype=dtype)


def _shard_dim(global_shape, local_shape, P, what):
    """The dim along which a global array is split contiguously into P
    local shards, or None when every rank gets the whole array."""
    global_shape, local_shape = tuple(global_shape), tuple(local_shape)
    if global_shape == local_shape:
        return None
    if len(global_shape) == len(local_shape):
        differing = [d for d in range(len(local_shape))
                     if global_shape[d] != local_shape[d]]
        if len(differing) == 1 and global_shape[differing[0]] == P * local_shape[differing[0]]:
            return differing[0]
    raise ValueError(
        f"cp_mlir: {what} has shape {global_shape}, but each of the {P} ranks "
        f"takes {local_shape}: give either that shape (replicated) or the "
        "global one, P times larger along the sequence dim")


def run_cpu(program, P, inputs, timeout=600, threads=1, launcher=None):
    """Runs ``program`` (a CompiledProgram) on P MPI ranks.

    ``inputs`` are the global arrays, in argument order or by name (q, k, v,
    mask for an AttentionLayer). An array whose shape is P times the
    function's argument along one dim is split contiguously along it (rank
    r gets block r); one with the argument's own shape goes to every rank.
    Each result is the concatenation of the ranks' results along the dim
    the first sharded input was split on (the sequence dim, BHSD). For an
    AttentionLayer in the zigzag layout, inputs and outputs stay in natural
    token order: the split follows zigzag_order. Returns one numpy array, or
    a tuple for several results. ``threads`` is OMP_NUM_THREADS per rank.
    """
    if isinstance(inputs, dict):
        unknown = set(inputs) - set(program.argument_names)
        if unknown:
            raise KeyError(f"cp_mlir: unknown inputs {sorted(unknown)}; the program "
                           f"takes {program.argument_names}")
        missing = [n for n in program.argument_names if n not in inputs]
        if missing:
            raise KeyError(f"cp_mlir: missing inputs {missing}")
        inputs = [inputs[n] for n in program.argument_names]
    inputs = list(inputs)
    if len(inputs) != len(program.inputs):
        raise ValueError(f"cp_mlir: {program.function} takes {len(program.inputs)} "
                         f"inputs, got {len(inputs)}")

    order = None
    if program.layer is not None and program.layer.layout == "zigzag":
        from .layer import zigzag_order
        order = np.asarray(zigzag_order(program.layer.S, P))

    with tempfile.TemporaryDirectory(prefix="cp_mlir_run_") as job:
        arguments, seq_dim = [], None
        for i, (array, (shape, element), name) in enumerate(
                zip(inputs, program.inputs, program.argument_names)):
            array = _checked_input(array, element, name)
            dim = _shard_dim(array.shape, shape, P, f"input '{name}'")
            if seq_dim is None:
                seq_dim = dim
            if order is not None and dim is not None:
                array = np.ascontiguousarray(np.take(array, order, axis=dim))
            np.save(os.path.join(job, f"in{i}.npy"), array)
            arguments.append({"shard_dim": dim, "shape": list(shape),
                              "dtype": element})
        results = [{"shape": list(shape), "dtype": element}
                   for shape, element in program.results]
        for r in results:
            _numpy_dtype(r["dtype"])
        with open(os.path.join(job, "job.json"), "w") as f:
            json.dump({"library": os.path.abspath(program.path),
                       "symbol": "_mlir_ciface_" + program.function,
                       "ranks": P, "arguments": arguments,
                       "results": results}, f)

        env = dict(os.environ)
        package_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        env["PYTHONPATH"] = os.pathsep.join(
            [package_parent] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
        env["OMP_NUM_THREADS"] = str(threads)
        command = [launcher or _config.mpirun(), "-np", str(P),
                   sys.executable, "-m", "cp_mlir._rank", job]
        try:
            done = subprocess.run(command, capture_output=True, text=True,
                                  env=env, timeout=timeout)
        except subprocess.TimeoutExpired as e:
            raise RunError(f"cp_mlir: {P} ranks of {program.function} did not finish "
                           f"within {timeout} s") from e
        if done.returncode != 0:
            report = "\n".join(l for l in (done.stderr + done.stdout).splitlines()
                               if l.strip())
            raise RunError(f"cp_mlir: {program.function} failed on {P} ranks "
                           f"(launcher exit {done.returncode}):\n{report}")
        outputs = []
        for j in range(len(results)):
            shards = [np.load(os.path.join(job, f"out{j}_rank{r}.npy")) for r in range(P)]
            out = np.concatenate(shards, axis=seq_dim if seq_dim is not None else 0)
            if order is not None and seq_dim is not None:
                out = np.take(out, np.argsort(order), axis=seq_dim)
            outputs.append(out)
    return outputs[0] if len(outputs) == 1 else tuple(outputs)
