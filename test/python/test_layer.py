# RUN: %pytest %s
"""The attention-layer builder: shapes in, verified cp IR out."""

import pytest

import cp_mlir


def test_builds_local_shard_types():
    layer = cp_mlir.AttentionLayer(B=2, H=8, Hkv=2, S=128, D=64, Dv=32, P=4,
                                   mask="sliding_window(16)", scheme="hybrid(2)",
                                   dtype="bf16", explicit_mask="bias", name="attn")
    text = str(layer.build())
    assert "shard.grid @cp(shape = 4)" in text
    assert ("func.func @attn(%arg0: tensor<2x8x32x64xbf16>, %arg1: tensor<2x2x32x64xbf16>, "
            "%arg2: tensor<2x2x32x32xbf16>, %arg3: tensor<128x128xbf16>) -> tensor<2x8x32x32xbf16>") in text
    assert "mask = sliding_window(16) scheme = hybrid(2)" in text
    assert layer.argument_names == ["q", "k", "v", "mask"]
    assert layer.global_shapes()["o"] == (2, 8, 128, 32)


@pytest.mark.parametrize("kw,message", [
    (dict(S=100, P=3), "S = 100 is not divisible by the CP group size P = 3; pad S to a multiple of 3"),
    (dict(H=6, Hkv=4), "H = 6 query heads are not a multiple of Hkv = 4"),
    (dict(D=0), "D must be positive, got 0"),
    (dict(scheme="head_tail", S=36, P=4), "head_tail splits each local shard in two halves and needs an even local length L, got L = 9"),
])
def test_bad_shapes_are_reported(kw, message):
    shape = dict(H=8, Hkv=2, S=64, D=16, P=4)
    shape.update(kw)
    with pytest.raises(cp_mlir.MLIRError) as info:
        cp_mlir.AttentionLayer(**shape).build()
    assert message in info.value.diagnostics[0]


def test_bad_names_are_value_errors():
    with pytest.raises(ValueError, match="element type must be f32, f16 or bf16"):
        cp_mlir.AttentionLayer(H=2, S=8, D=4, P=2, dtype="f64").build()
    with pytest.raises(ValueError, match="unknown mask 'diagonal'"):
        cp_mlir.AttentionLayer(H=2, S=8, D=4, P=2, mask="diagonal").build()
