# RUN: %pytest %s
"""compile_cpu + run_cpu: each scheme on P MPI ranks against a plain float64
numpy attention (reference.py). Tolerance: max abs error 1e-5 for f32 and
2e-3 for f16 (inputs and output rounded to f16, f32 accumulation)."""

import os
import sys

import numpy as np
import pytest

import cp_mlir

sys.path.insert(0, os.path.dirname(__file__))
import reference  # noqa: E402


def inputs(layer, seed=0):
    rng = np.random.default_rng(seed)
    shapes = layer.global_shapes()
    arrays = {name: rng.uniform(-1, 1, shapes[name]) for name in ("q", "k", "v")}
    if layer.explicit_mask == "bool":
        arrays["mask"] = rng.uniform(size=shapes["mask"]) < 0.7
        arrays["mask"][5] = False  # a row that sees nothing gives 0
    return arrays


def allowed(layer, arrays):
    s = layer.S
    q, k = np.arange(s)[:, None], np.arange(s)[None, :]
    kind, window = cp_mlir.layer.split_parameter(layer.mask)
    mask = np.ones((s, s), dtype=bool)
    if kind in ("causal", "sliding_window"):
        mask &= k <= q
    if kind == "sliding_window":
        mask &= q - window < k
    if "mask" in arrays:
        mask &= arrays["mask"]
    return mask


@pytest.mark.parametrize("scheme,P,kw", [
    ("allgather", 2, dict(H=4, Hkv=2, mask="causal")),
    ("ulysses", 4, dict(H=8, Hkv=4, mask="sliding_window(9)")),
    ("hybrid(2)", 4, dict(H=4, Hkv=2, mask="causal", explicit_mask="bool")),
    ("head_tail", 3, dict(H=4, Hkv=1, mask="causal")),
    ("auto", 4, dict(H=8, Hkv=4, mask="causal")),
])
def test_scheme_matches_numpy(scheme, P, kw):
    layer = cp_mlir.AttentionLayer(S=12 * P, D=8, P=P, **kw)
    program = cp_mlir.compile_cpu(layer, scheme=scheme)
    arrays = inputs(layer)
    out = cp_mlir.run_cpu(program, P, arrays)
    expected = reference.attention(arrays["q"], arrays["k"], arrays["v"],
                                   allowed(layer, arrays))
    assert out.shape == expected.shape == layer.global_shapes()["o"]
    assert out.dtype == np.float32
    assert np.max(np.abs(out - expected)) <= 1e-5


def test_f16_storage():
    layer = cp_mlir.AttentionLayer(H=4, Hkv=2, S=32, D=16, P=2, mask="causal",
                                   dtype="f16")
    program = cp_mlir.compile_cpu(layer, scheme="allgather")
    arrays = {n: a.astype(np.float16) for n, a in inputs(layer, seed=1).items()}
    out = program.run_cpu(2, arrays)
    expected = reference.attention(arrays["q"], arrays["k"], arrays["v"],
                                   reference.causal(32))
    assert out.dtype == np.float16
    assert np.max(np.abs(out.astype(np.float64) - expected)) <= 2e-3


def test_input_errors_name_the_problem():
    layer = cp_mlir.AttentionLayer(H=2, S=16, D=4, P=2)
    program = cp_mlir.compile_cpu(layer, scheme="allgather")
    arrays = inputs(layer)
    with pytest.raises(ValueError, match=r"input 'k' has shape \(1, 2, 15, 4\)"):
        program.run_cpu(2, dict(arrays, k=arrays["k"][:, :, :15]))
    with pytest.raises(KeyError, match="missing inputs"):
        program.run_cpu(2, {"q": arrays["q"]})
    # Nothing is cast silently when it would lose information.
    with pytest.raises(TypeError, match=r"input 'q' has dtype complex64, but "
                       r"the program takes f32: converting it would lose "
                       r"information \(the imaginary part\)"):
        program.run_cpu(2, dict(arrays, q=arrays["q"].astype(np.complex64)))
    with pytest.raises(TypeError, match=r"input 'v' has dtype int64, but the "
                       r"program takes f32"):
        program.run_cpu(2, dict(arrays, v=np.ones(arrays["v"].shape, np.int64)))


def test_wrong_rank_count_fails_with_the_rank_named():
    layer = cp_mlir.AttentionLayer(H=2, S=16, D=4, P=2)
    program = cp_mlir.compile_cpu(layer, scheme="allgather")
    arrays = inputs(layer)
    # Shards for 2 ranks, launched on 4: every rank reports it and exits 1.
    from cp_mlir import runner
    with pytest.raises(cp_mlir.RunError, match=r"rank \d: started with 4 MPI ranks, expected 2"):
        runner.run_cpu(program, 2, arrays, launcher=os.path.join(
            os.path.dirname(__file__), "Inputs", "mpirun-4"))


@pytest.mark.parametrize("scheme,P", [("ring", 3), ("zigzag", 2), ("zigzag", 4)])
def test_ring_schemes_match_numpy(scheme, P):
    layer = cp_mlir.AttentionLayer(H=4, Hkv=2, S=16 * P, D=8, P=P, mask="causal")
    arrays = inputs(layer, seed=3)
    out = cp_mlir.run_cpu(cp_mlir.compile_cpu(layer, scheme=scheme), P, arrays)
    expected = reference.attention(arrays["q"], arrays["k"], arrays["v"],
                                   reference.causal(16 * P))
    assert np.max(np.abs(out - expected)) <= 1e-5


def test_zigzag_layout_keeps_natural_order():
    # The program's shards are zigzag chunks; run_cpu permutes inputs with
    # zigzag_order and puts the output back in token order.
    layer = cp_mlir.AttentionLayer(H=4, S=32, D=8, P=2, mask="sliding_window(5)",
                                   layout="zigzag")
    assert cp_mlir.zigzag_order(8, 2) == [0, 1, 6, 7, 2, 3, 4, 5]
    assert "layout = zigzag" in str(layer.build())
    arrays = inputs(layer, seed=4)
    out = cp_mlir.run_cpu(cp_mlir.compile_cpu(layer, scheme="zigzag"), 2, arrays)
    q, k = np.arange(32)[:, None], np.arange(32)[None, :]
    allowed = (k <= q) & (q - 5 < k)
    expected = reference.attention(arrays["q"], arrays["k"], arrays["v"], allowed)
    assert np.max(np.abs(out - expected)) <= 1e-5


def test_opt_level_is_checked():
    layer = cp_mlir.AttentionLayer(S=8, D=4, P=2, H=2, Hkv=2)
    with pytest.raises(ValueError, match="opt_level must be 0, 1, 2 or 3, got 4"):
        cp_mlir.compile_cpu(layer, scheme="allgather", opt_level=4)
