"""One MPI rank of run_cpu: load the shared object, call the function on
this rank's shards, save the results. Run as `python -m cp_mlir._rank JOB`
under mpirun; not an API."""

import ctypes
import json
import os
import sys

import numpy as np

from .runner import _numpy_dtype


def _descriptor(array):
    """A pointer to MLIR's ranked memref descriptor for a C-contiguous array:
    {allocated, aligned, offset, sizes[rank], strides[rank]}."""
    rank = array.ndim
    fields = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p),
              ("offset", ctypes.c_int64)]
    if rank:
        fields += [("sizes", ctypes.c_int64 * rank), ("strides", ctypes.c_int64 * rank)]
    Descriptor = type(f"MemRef{rank}D", (ctypes.Structure,), {"_fields_": fields})
    d = Descriptor()
    d.allocated = d.aligned = array.ctypes.data
    d.offset = 0
    for i in range(rank):
        d.sizes[i] = array.shape[i]
        d.strides[i] = array.strides[i] // array.itemsize
    return d


def main(job):
    with open(os.path.join(job, "job.json")) as f:
        spec = json.load(f)
    library = ctypes.CDLL(spec["library"], mode=ctypes.RTLD_GLOBAL)
    library.cp_rt_world_rank.restype = ctypes.c_int
    library.cp_rt_world_size.restype = ctypes.c_int
    rank, size = library.cp_rt_world_rank(), library.cp_rt_world_size()
    if size != spec["ranks"]:
        sys.exit(f"cp_mlir: rank {rank}: started with {size} MPI ranks, "
                 f"expected {spec['ranks']}")

    keep, pointers = [], []
    for i, arg in enumerate(spec["arguments"]):
        array = np.load(os.path.join(job, f"in{i}.npy"))
        dim = arg["shard_dim"]
        if dim is not None:
            block = arg["shape"][dim]
            array = np.take(array, range(rank * block, (rank + 1) * block), axis=dim)
        array = np.ascontiguousarray(array)
        keep.append(array)
        pointers.append(_descriptor(array))
    outputs = []
    for result in spec["results"]:
        out = np.zeros(result["shape"], dtype=_numpy_dtype(result["dtype"]))
        outputs.append(out)
        pointers.append(_descriptor(out))

    entry = getattr(library, spec["symbol"])
    entry.restype = None
    entry(*[ctypes.byref(p) for p in pointers])
    for j, out in enumerate(outputs):
        np.save(os.path.join(job, f"out{j}_rank{rank}.npy"), out)


if __name__ == "__main__":
    main(sys.argv[1])
