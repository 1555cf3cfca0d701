"""cp_mlir: context-parallel attention from Python.

A thin layer over the cp C API (libCPMLIRCAPI.so)::

    import cp_mlir
    layer = cp_mlir.AttentionLayer(H=8, Hkv=2, S=256, D=64, P=4, mask="causal")
    module = layer.build()                       # cp.attention, no MLIR typed
    cp_mlir.apply_scheme(module, "ulysses")      # collectives + local attention
    program = cp_mlir.compile_cpu(layer, scheme="head_tail")
    out = cp_mlir.run_cpu(program, 4, {"q": q, "k": k, "v": v})

See docs/Embedding.md.
"""

from ._errors import MLIRError, RunError
from .ir import Attribute, Context, Module, default_context
from .layer import AttentionLayer, zigzag_order
from .compiler import CompiledProgram, apply_scheme, compile_cpu, lower
from .runner import run_cpu

__all__ = [
    "Attribute",
    "AttentionLayer",
    "CompiledProgram",
    "Context",
    "MLIRError",
    "Module",
    "RunError",
    "apply_scheme",
    "compile_cpu",
    "default_context",
    "lower",
    "run_cpu",
    "zigzag_order",
]
