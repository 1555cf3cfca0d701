# RUN: %pytest %s
"""Attention sinks of -inf (heads without a sink, mixed with heads that
have one) under a sliding window of 3, where rows see few keys: every
scheme's output equals float64 numpy attention with the sink column
(reference.py)
(exp(-inf) = 0 for those heads) at 1e-5, and no NaN appears, on 2 ranks."""

import numpy as np
import pytest

import cp_mlir
import reference

B, H, HKV, L, D, P = 1, 4, 2, 8, 16, 2
S = P * L


def program(scheme):
    q = f"tensor<{B}x{H}x{L}x{D}xf32>"
    kv = f"tensor<{B}x{HKV}x{L}x{D}xf32>"
    s = f"tensor<{H}xf32>"
    return f"""
shard.grid @cp(shape = {P})
func.func @f(%q: {q}, %k: {kv}, %v: {kv}, %s: {s}) -> {q} {{
  %o = cp.attention %q, %k, %v sinks(%s : {s}) on @cp grid_axes = [0]
      mask = sliding_window(3) scheme = {scheme}
      : {q}, {kv}, {kv} -> {q}
  return %o : {q}
}}
"""


@pytest.mark.parametrize("scheme", ["allgather", "ulysses", "head_tail", "ring"])
def test_heads_without_sinks(tmp_path, scheme):
    rng = np.random.default_rng(1)
    q = rng.uniform(-1, 1, (B, H, S, D)).astype(np.float32)
    k = rng.uniform(-1, 1, (B, HKV, S, D)).astype(np.float32)
    v = rng.uniform(-1, 1, (B, HKV, S, D)).astype(np.float32)
    sinks = np.array([-np.inf, 0.5, -np.inf, 2.0], np.float32)
    compiled = cp_mlir.compile_cpu(program(scheme), function="f",
                                   output=str(tmp_path / "f.so"), opt_level=0)
    out = compiled.run_cpu(P, [q, k, v, sinks])
    i, j = np.arange(S)[:, None], np.arange(S)[None, :]
    want = reference.attention(q, k, v, allowed=(j <= i) & (i - 3 < j),
                               sinks=sinks)
    assert not np.isnan(out).any()
    assert np.max(np.abs(out - want)) <= 1e-5
