# RUN: %pytest %s
"""AttentionLayer(training=True): cp.attention (with its lse) chained into
cp.attention_grad, compiled by compile_cpu and run by run_cpu on P MPI
ranks; o, dq, dk, dv against plain float64 numpy (reference.attention and
reference.attention_grad, the latter checked here by central finite
differences). Tolerance: max abs error 1e-5 for o, 1e-4 for the f32
gradients (sums over up to S rows of products of O(1) values)."""

import os
import sys

import numpy as np
import pytest

import cp_mlir

sys.path.insert(0, os.path.dirname(__file__))
import reference  # noqa: E402


def test_reference_gradient_matches_finite_differences():
    rng = np.random.default_rng(7)
    q, k, v = (rng.uniform(-1, 1, (1, 4, 6, 3)) for _ in range(3))
    k, v = k[:, :2], v[:, :2]  # GQA: two heads per group
    do = rng.uniform(-1, 1, (1, 4, 6, 3))
    allowed = reference.causal(6)
    analytic = reference.attention_grad(q, k, v, do, allowed)

    def loss(q, k, v):
        return float(np.sum(reference.attention(q, k, v, allowed) * do))

    eps = 1e-6
    for which, x in enumerate((q, k, v)):
        numeric = np.zeros_like(x)
        for index in np.ndindex(x.shape):
            args = [q, k, v]
            for sign in (1, -1):
                moved = x.copy()
                moved[index] += sign * eps
                args[which] = moved
                numeric[index] += sign * loss(*args) / (2 * eps)
        assert np.max(np.abs(numeric - analytic[which])) <= 1e-7


def allowed_mask(mask, s):
    q, k = np.arange(s)[:, None], np.arange(s)[None, :]
    kind, window = cp_mlir.layer.split_parameter(mask)
    allowed = np.ones((s, s), dtype=bool)
    if kind in ("causal", "sliding_window"):
        allowed &= k <= q
    if kind == "sliding_window":
        allowed &= q - window < k
    return allowed


@pytest.mark.parametrize("scheme,P,kw", [
    ("allgather", 2, dict(H=4, Hkv=2, mask="causal")),
    ("ulysses", 4, dict(H=8, Hkv=4, mask="sliding_window(9)")),
    ("hybrid(2)", 4, dict(H=4, Hkv=2, mask="causal")),
    ("head_tail", 3, dict(H=4, Hkv=1, mask="causal")),
    ("ring", 3, dict(H=4, Hkv=2, mask="causal", Dv=4)),
    ("zigzag", 4, dict(H=4, Hkv=2, mask="causal")),
    ("auto", 2, dict(H=4, Hkv=4, mask="none")),
    ("compile_cpu:auto", 4, dict(H=8, Hkv=4, mask="causal")),
])
def test_training_step_matches_numpy(scheme, P, kw):
    # "compile_cpu:auto": the layer carries no scheme, compile_cpu gets auto.
    passed = scheme.startswith("compile_cpu:")
    layer = cp_mlir.AttentionLayer(S=16 * P, D=8, P=P,
                                   scheme=None if passed else scheme,
                                   training=True, **kw)
    assert layer.argument_names == ["q", "k", "v", "do"]
    shapes = layer.global_shapes()
    rng = np.random.default_rng(11)
    arrays = {n: rng.uniform(-1, 1, shapes[n]) for n in ("q", "k", "v", "do")}
    program = cp_mlir.compile_cpu(
        layer, scheme=scheme.split(":")[1] if passed else None, opt_level=0)
    o, dq, dk, dv = cp_mlir.run_cpu(program, P, arrays)
    allowed = allowed_mask(layer.mask, layer.S)
    expected_o = reference.attention(arrays["q"], arrays["k"], arrays["v"], allowed)
    expected = reference.attention_grad(arrays["q"], arrays["k"], arrays["v"],
                                        arrays["do"], allowed)
    assert np.max(np.abs(o - expected_o)) <= 1e-5
    for name, got, want in zip(("dq", "dk", "dv"), (dq, dk, dv), expected):
        assert got.shape == want.shape == shapes[name]
        assert got.dtype == np.float32
        assert np.max(np.abs(got - want)) <= 1e-4, name


def test_training_layer_ir_pairs_forward_and_backward():
    text = str(cp_mlir.AttentionLayer(H=4, S=32, D=8, P=2, mask="causal",
                                      scheme="ring", training=True).build())
    assert "%result, %lse = cp.attention %arg0, %arg1, %arg2" in text
    assert ("cp.attention_grad %arg0, %arg1, %arg2, %result, %lse, %arg3"
            in text)
    assert text.count("scheme = ring") == 2
    assert "return %result, %grad_query, %grad_key, %grad_value" in text
