# RUN: %pytest %s
"""cp.attention with queries = replicated (a decode step against a KV cache
sharded on the sequence) under allgather, ulysses and ring on 2 and 4 CPU
ranks, against plain float64 attention of the same inputs (reference.py):
every rank must return the whole [B, H, Lq, Dv] output and its lse. Masks:
none, causal (query row i sees keys 0..i) and an i1 [1, 1, Lq, S] tensor
with one row fully masked (output 0, lse -inf). Tolerance 1e-5 (f32)."""

import numpy as np
import pytest

import cp_mlir
import reference

B, H, HKV, LQ, D = 1, 8, 4, 3, 16


def program(P, L, mask, scheme):
    S = P * L
    q = f"tensor<{B}x{H}x{LQ}x{D}xf32>"
    kv = f"tensor<{B}x{HKV}x{L}x{D}xf32>"
    lse = f"tensor<{B}x{H}x{LQ}xf32>"
    m = f"tensor<1x1x{LQ}x{S}xi1>"
    args = f"%q: {q}, %k: {kv}, %v: {kv}" + (f", %m: {m}" if mask == "tensor" else "")
    operands = "%q, %k, %v" + (" explicit_mask %m" if mask == "tensor" else "")
    kind = " mask = causal" if mask == "causal" else ""
    types = f"{q}, {kv}, {kv}" + (f", {m}" if mask == "tensor" else "")
    return f"""
shard.grid @cp(shape = {P})
func.func @decode({args}) -> ({q}, {lse}) {{
  %o, %lse = cp.attention {operands} on @cp grid_axes = [0]{kind}
      queries = replicated scheme = {scheme}
      : {types} -> {q}, {lse}
  return %o, %lse : {q}, {lse}
}}
"""


def expected(q, k, v, allowed):
    groups = H // HKV
    qd, kd = q.astype(np.float64), np.repeat(k, groups, axis=1).astype(np.float64)
    scores = np.einsum("bhqd,bhkd->bhqk", qd, kd) / np.sqrt(D)
    scores = np.where(allowed, scores, -np.inf)
    top = np.max(scores, axis=-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        lse = np.log(np.exp(scores - top).sum(axis=-1)) + top[..., 0]
    return reference.attention(q, k, v, allowed=allowed), lse


def decode_inputs(rng, S):
    """Random replicated queries [B, H, Lq, D] and a K/V cache of S keys."""
    q = rng.uniform(-1, 1, (B, H, LQ, D)).astype(np.float32)
    k = rng.uniform(-1, 1, (B, HKV, S, D)).astype(np.float32)
    v = rng.uniform(-1, 1, (B, HKV, S, D)).astype(np.float32)
    return q, k, v


@pytest.mark.parametrize("P", [2, 4])
@pytest.mark.parametrize("mask", ["none", "causal", "tensor"])
@pytest.mark.parametrize("scheme", ["allgather", "ulysses", "ring"])
def test_replicated_queries(tmp_path, scheme, mask, P):
    L = 8
    S = P * L
    rng = np.random.default_rng(7)
    q, k, v = decode_inputs(rng, S)
    allowed = np.ones((LQ, S), dtype=bool)
    inputs = [q, k, v]
    if mask == "causal":
        allowed = np.arange(S)[None, :] <= np.arange(LQ)[:, None]
    elif mask == "tensor":
        allowed = rng.uniform(0, 1, (LQ, S)) < 0.6
        allowed[1, :] = False
        inputs.append(allowed.reshape(1, 1, LQ, S))
    compiled = cp_mlir.compile_cpu(program(P, L, mask, scheme), function="decode",
                                   output=str(tmp_path / "decode.so"),
                                   opt_level=0)
    out, lse = compiled.run_cpu(P, inputs)
    want_out, want_lse = expected(q, k, v, allowed)
    # Every rank returns the whole output: the runner stacks the P copies
    # along the sequence dim of K/V.
    for rank, (o, l) in enumerate(zip(np.split(out, P, axis=2),
                                      np.split(lse, P, axis=2))):
        assert np.max(np.abs(o - want_out)) <= 1e-5, f"rank {rank} output"
        finite = np.isfinite(want_lse)
        assert np.array_equal(np.isfinite(l), finite), f"rank {rank} lse -inf rows"
        assert np.max(np.abs(l[finite] - want_lse[finite])) <= 1e-5, f"rank {rank} lse"


def test_replicated_queries_reject_zigzag(tmp_path):
    with pytest.raises(cp_mlir.MLIRError, match="queries = replicated"):
        cp_mlir.compile_cpu(program(2, 8, "none", "zigzag"), function="decode",
                            output=str(tmp_path / "z.so"))


def sinks_program(P, L, scheme):
    S = P * L
    q = f"tensor<{B}x{H}x{LQ}x{D}xf32>"
    kv = f"tensor<{B}x{HKV}x{L}x{D}xf32>"
    s = f"tensor<{H}xf32>"
    return f"""
shard.grid @cp(shape = {P})
func.func @decode(%q: {q}, %k: {kv}, %v: {kv}, %s: {s}) -> {q} {{
  %o = cp.attention %q, %k, %v sinks(%s : {s}) on @cp grid_axes = [0]
      mask = causal queries = replicated scheme = {scheme}
      : {q}, {kv}, {kv} -> {q}
  return %o : {q}
}}
"""


@pytest.mark.parametrize("P", [2, 4])
@pytest.mark.parametrize("scheme", ["allgather", "ulysses", "ring"])
def test_replicated_queries_with_sinks(tmp_path, scheme, P):
    """Attention sinks on a decode step: the sink's logit joins each row's
    denominator once, whichever rank's block the row's keys are on (ring
    merges P partials; ulysses slices the sinks with its heads). The
    reference (reference.py) appends the sink as one more score column and
    drops its weight, in float64."""
    L = 8
    S = P * L
    q, k, v = decode_inputs(np.random.default_rng(11), S)
    sinks = np.linspace(-1.0, 3.0, H).astype(np.float32)
    compiled = cp_mlir.compile_cpu(sinks_program(P, L, scheme),
                                   function="decode",
                                   output=str(tmp_path / "decode.so"),
                                   opt_level=0)
    out = compiled.run_cpu(P, [q, k, v, sinks])
    allowed = np.arange(S)[None, :] <= np.arange(LQ)[:, None]
    want = reference.attention(q, k, v, allowed=allowed, sinks=sinks)
    for rank, o in enumerate(np.split(out, P, axis=2)):
        assert np.max(np.abs(o - want)) <= 1e-5, f"rank {rank} output"
