# RUN: %pytest %s
"""Attention sinks as PyTorch reference code writes them (gpt-oss:
`softmax(cat([scores, sinks], -1))[..., :-1] @ V`), in the linalg
torch-mlir gives it (causal, test/Raising/Sinks/torch-gpt-oss-sinks.mlir)
and in tosa (no mask, tosa-sinks.mlir), end to end: the function as
written, compiled through the plain linalg CPU pipeline (tosa lowered
first by stock mlir-opt) and run on one process over the whole sequence
(S = 64), against the same function at the local length raised by
cp-raise-attention (the sinks become cp.attention's sinks operand) and run
under allgather, ulysses, ring and head_tail on 4 MPI ranks, and both
against float64 numpy attention with a sink column (reference.py).
Tolerance 1e-5 (f32)."""

import os
import re
import subprocess

import numpy as np
import pytest

import cp_mlir
import reference
from cp_mlir import _config

SINKS = os.path.join(os.path.dirname(__file__), "..", "Raising", "Sinks")
H, S, D, P = 4, 64, 16, 4
TOSA_TO_LINALG = ("builtin.module(func.func(tosa-to-linalg-named,tosa-to-linalg,"
                  "tosa-to-arith,tosa-to-tensor))")


def at_length(text, length):
    """The function with S keys (64 in the file) and the S + 1 columns of
    the scores with the sink's."""
    text = re.sub(r"(?<![0-9.])64(?![0-9])", str(length), text)
    return re.sub(r"(?<![0-9.])65(?![0-9])", str(length + 1), text)


def expected(q, k, v, sinks, causal=True):
    """reference.py's attention with the sink column, of the [H, S, D]
    arrays as one batch; the functions' scale is 0.25."""
    allowed = reference.causal(S) if causal else None
    return reference.attention(q[None], k[None], v[None], allowed=allowed,
                               scale=0.25, sinks=sinks)[0]


def compile_text(text, tmp_path, name, scheme=None):
    if "tosa." in text:
        # Stock mlir-opt for the function as written; cp-opt for a raised
        # one that keeps tosa ops around its cp.attention.
        tool = _config.tool("cp-opt") if "cp.attention" in text else "mlir-opt"
        text = subprocess.run([tool, "-", f"--pass-pipeline={TOSA_TO_LINALG}"],
                              input=text, capture_output=True, text=True,
                              check=True).stdout
    return cp_mlir.compile_cpu(text, scheme=scheme, function="sdpa",
                               output=str(tmp_path / f"{name}.so"),
                               opt_level=0)


@pytest.mark.parametrize("name,causal", [("torch-gpt-oss-sinks.mlir", True),
                                         ("tosa-sinks.mlir", False)])
def test_raised_sinks_equal_unraised(tmp_path, name, causal):
    source = open(os.path.join(SINKS, name)).read()
    rng = np.random.default_rng(3)
    q, k, v = (rng.uniform(-1, 1, (H, S, D)).astype(np.float32)
               for _ in range(3))
    sinks = np.array([-1.0, 0.5, 2.0, 4.0], dtype=np.float32)
    want = expected(q, k, v, sinks, causal)

    whole = compile_text(at_length(source, S), tmp_path, "whole")
    unraised = cp_mlir.run_cpu(whole, 1, [q, k, v, sinks])
    assert np.max(np.abs(unraised - want)) <= 1e-5

    done = subprocess.run(
        [_config.tool("cp-opt"), "-",
         f"--cp-raise-attention=grid-size={P} require-in=sdpa"],
        input=at_length(source, S // P), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "sinks(" in done.stdout
    for scheme in ("allgather", "ulysses", "ring", "head_tail"):
        program = compile_text(done.stdout, tmp_path, scheme, scheme=scheme)
        got = cp_mlir.run_cpu(program, P, [q, k, v, sinks])
        error = np.max(np.abs(got.astype(np.float64) - want))
        assert error <= 1e-5, f"{scheme}: max |err| {error:.3e}"
        assert np.max(np.abs(got - unraised)) <= 1e-5, scheme


def test_sinks_matter():
    """The negative control: the reference without its sink column differs
    from the one with it by far more than the tolerance."""
    rng = np.random.default_rng(3)
    q, k, v = (rng.uniform(-1, 1, (H, S, D)).astype(np.float32)
               for _ in range(3))
    with_sinks = expected(q, k, v, np.array([-1.0, 0.5, 2.0, 4.0], np.float32))
    nearly_none = expected(q, k, v, np.full(H, -80.0, np.float32))
    assert np.max(np.abs(with_sinks - nearly_none)) > 1e-2
