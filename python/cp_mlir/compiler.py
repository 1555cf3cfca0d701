"""Schemes, lowering pipelines and ahead-of-time compilation."""

import os
import subprocess
import tempfile
from dataclasses import dataclass, field
from typing import List, Optional, Tuple

from . import _config
from ._errors import MLIRError
from .ir import Module, default_context
from .layer import AttentionLayer


def _pipeline_options(options):
    parts = []
    for key, value in options.items():
        if value is None:
            continue
        if isinstance(value, bool):
            value = "true" if value else "false"
        parts.append(f"{key.replace('_', '-')}={value}")
    return " ".join(parts)


def apply_scheme(module, scheme, canonicalize=True, machine=None):
    """Runs cp-apply-scheme{scheme=...} (then canonicalize) on ``module`` in
    place and returns it. A scheme whose constraints fail raises MLIRError
    naming the op, the scheme and the violated rule. ``scheme='auto'`` is
    resolved by cp-choose-scheme with the cost model of ``machine``: a
    preset ('h200-nvlink', the pass's default, 'multinode-ib' or
    'host-mpi') or the path of a machine profile that cp-calibrate measured
    on the ranks the program will run on."""
    text = _pipeline_options(dict(scheme=scheme, machine=machine))
    pipeline = f"cp-apply-scheme{{{text}}}"
    if canonicalize:
        pipeline += ",canonicalize"
    module.run_pipeline(pipeline)
    return module


def lower(module, target="cpu", scheme=None, **options):
    """Runs cp-lower-to-cpu or cp-lower-to-nvvm on ``module`` in place
    (down to the LLVM dialect) and returns it. ``options`` are the
    pipeline's, with '_' for '-' (tile_q=64, threads=False, chip='sm_80')."""
    if target not in ("cpu", "nvvm"):
        raise ValueError(f"cp_mlir: target must be 'cpu' or 'nvvm', got '{target}'")
    text = _pipeline_options(dict(scheme=scheme, **options))
    module.run_pipeline(f"cp-lower-to-{target}{{{text}}}")
    return module


@dataclass
class CompiledProgram:
    """A shared object exporting ``_mlir_ciface_<function>``, compiled for
    MPI ranks by cp-compile, with the function's local signature."""

    path: str
    function: str
    inputs: List[Tuple[tuple, str]]
    results: List[Tuple[tuple, str]]
    argument_names: List[str]
    layer: Optional[AttentionLayer] = None
    _workdir: Optional[tempfile.TemporaryDirectory] = field(default=None, repr=False)

    def run_cpu(self, P, inputs, **kwargs):
        from .runner import run_cpu
        return run_cpu(self, P, inputs, **kwargs)


def _as_module(source, context):
    if isinstance(source, AttentionLayer):
        return source.build(context), source
    if isinstance(source, Module):
        return source.clone(), None
    if isinstance(source, str):
        return (context or default_context()).parse(source), None
    raise TypeError("cp_mlir: compile_cpu takes an AttentionLayer, a Module or "
                    f"MLIR text, got {type(source).__name__}")


def compile_cpu(source, scheme=None, output=None, function=None, options=None,
                context=None, machine="host-mpi", opt_level=3):
    """Compiles an AttentionLayer, a Module or MLIR text for CPU ranks.

    The scheme is applied here, in process, so that a scheme that cannot
    apply raises MLIRError with the compiler's diagnostics; cp-compile then
    lowers (cp-lower-to-cpu), optimizes and links against libcp_runtime.
    ``scheme='auto'`` is resolved on ``machine``, by default the preset
    that cp-lower-to-cpu uses ('host-mpi'), so that it chooses as
    ``AttentionLayer(scheme='auto')`` does; a machine profile's path
    (cp-calibrate) makes it choose by measured figures instead. ``options`` are more
    cp-lower-to-cpu options (dict). ``opt_level`` (0 to 3) is LLVM's, as
    ``cp-compile -O``: 0 skips ``opt`` and compiles fastest, for programs
    run once. Returns a CompiledProgram; without
    ``output`` the .so lives in a temporary directory as long as the
    program object.
    """
    module, layer = _as_module(source, context)
    if scheme:
        apply_scheme(module, scheme, machine=machine)
    if function is None:
        function = layer.name if layer else "attention"
    inputs, results = module.signature(function)

    workdir = None
    if output is None:
        workdir = tempfile.TemporaryDirectory(prefix="cp_mlir_")
        output = os.path.join(workdir.name, f"{function}.so")
    source_path = output + ".mlir"
    with open(source_path, "w") as f:
        f.write(module.print())
    if opt_level not in (0, 1, 2, 3):
        raise ValueError(f"cp_mlir: opt_level must be 0, 1, 2 or 3, got {opt_level!r}")
    command = [_config.tool("cp-compile"), source_path, "-o", output,
               f"-O{opt_level}"]
    if options:
        command.append("--pipeline-options=" + _pipeline_options(options))
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        lines = [l for l in done.stderr.splitlines() if l.strip()]
        raise MLIRError(f"cp_mlir: cp-compile failed (exit {done.returncode})", lines)
    names = layer.argument_names if layer else [f"arg{i}" for i in range(len(inputs))]
    return CompiledProgram(output, function, list(inputs), list(results), names,
                           layer, workdir)
