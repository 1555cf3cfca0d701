# RUN: %pytest %s
"""Contexts, parsing, printing, verification and cp attributes."""

import pytest

import cp_mlir

LAYER = """
shard.grid @cp(shape = 4)
func.func @attention(%q: tensor<1x8x16x32xf32>, %k: tensor<1x2x16x32xf32>,
                     %v: tensor<1x2x16x32xf32>) -> tensor<1x8x16x32xf32> {
  %o = cp.attention %q, %k, %v on @cp grid_axes = [0] mask = causal
      : tensor<1x8x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32>
      -> tensor<1x8x16x32xf32>
  return %o : tensor<1x8x16x32xf32>
}
"""


def test_parse_print_round_trip():
    ctx = cp_mlir.Context()
    module = ctx.parse(LAYER, "layer.mlir")
    text = str(module)
    assert "cp.attention %arg0, %arg1, %arg2 on @cp grid_axes = [0] mask = causal" in text
    again = ctx.parse(text)
    assert str(again) == text
    generic = module.print(generic=True)
    assert '"cp.attention"' in generic and "#cp.mask<causal>" in generic
    assert str(ctx.parse(generic)) == text
    module.verify()


MOD_REGIONS = """
shard.grid @cp(shape = 2)
func.func @f(%q: tensor<1x4x8x8xf32>, %k: tensor<1x4x8x8xf32>, %v: tensor<1x4x8x8xf32>,
             %seg: tensor<16xi32>) -> tensor<1x4x8x8xf32> {
  %o = cp.attention %q, %k, %v mod_operands(%seg : tensor<16xi32>) on @cp grid_axes = [0]
      mask_mod {
      ^bb0(%b: index, %h: index, %qi: index, %ki: index, %s: tensor<16xi32>):
        %a = tensor.extract %s[%qi] : tensor<16xi32>
        %c = tensor.extract %s[%ki] : tensor<16xi32>
        %same = arith.cmpi eq, %a, %c : i32
        cp.yield %same : i1
      } score_mod {
      ^bb0(%x: f32, %b: index, %h: index, %qi: index, %ki: index, %s: tensor<16xi32>):
        %t = math.tanh %x : f32
        cp.yield %t : f32
      } : tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32> -> tensor<1x4x8x8xf32>
  return %o : tensor<1x4x8x8xf32>
}
"""


def test_mod_regions_parse_and_verify():
    """Regions ending in cp.yield verify in the Python process too: the
    cp libraries and libMLIR.so agree on cp.yield being a terminator (the
    upstream C API lives in a library of its own, lib/CAPI/CMakeLists.txt),
    and a scheme applies to them."""
    ctx = cp_mlir.Context()
    module = ctx.parse(MOD_REGIONS)
    module.verify()
    assert "mask_mod" in str(module) and "score_mod" in str(module)
    cp_mlir.apply_scheme(module, "ring")
    assert "cp.local_attention" in str(module)


def test_parse_error_carries_location_and_message():
    ctx = cp_mlir.Context()
    with pytest.raises(cp_mlir.MLIRError) as info:
        ctx.parse("func.func @f( {", "bad.mlir")
    assert info.value.diagnostics == ["bad.mlir:1:14: error: expected non-function type"]
    assert "cannot parse bad.mlir" in str(info.value)


def test_verifier_error_names_the_rule_and_numbers():
    bad = LAYER.replace("tensor<1x2x16x32xf32>", "tensor<1x3x16x32xf32>")
    with pytest.raises(cp_mlir.MLIRError) as info:
        cp_mlir.Context().parse(bad, "gqa.mlir")
    (diagnostic,) = info.value.diagnostics
    assert diagnostic == ("gqa.mlir:5:8: error: 'cp.attention' op expects query "
                          "heads H (8) to be a multiple of key/value heads Hkv (3) "
                          "for grouped-query attention")


def test_scheme_and_mask_attributes():
    ctx = cp_mlir.Context()
    hybrid = ctx.scheme("hybrid", 2)
    assert str(hybrid) == "#cp.scheme<hybrid(2)>"
    assert (hybrid.kind, hybrid.parameter) == ("hybrid", 2)
    window = ctx.mask("sliding_window", 64)
    assert str(window) == "#cp.mask<sliding_window(64)>"
    assert (window.kind, window.parameter) == ("sliding_window", 64)
    assert str(ctx.scheme("auto")) == "#cp.scheme<auto>"
    with pytest.raises(cp_mlir.MLIRError) as info:
        ctx.scheme("hybrid", 1)
    assert "u >= 2, got u = 1" in info.value.diagnostics[0]
    with pytest.raises(ValueError, match="unknown scheme 'ringo'"):
        ctx.scheme("ringo")


def test_clone_is_independent_and_signature_reads_types():
    ctx = cp_mlir.Context()
    module = ctx.parse(LAYER)
    copy = module.clone()
    cp_mlir.apply_scheme(copy, "allgather")
    assert "cp.attention" in str(module) and "cp.attention" not in str(copy)
    inputs, results = module.signature("attention")
    assert inputs == [((1, 8, 16, 32), "f32"), ((1, 2, 16, 32), "f32"),
                      ((1, 2, 16, 32), "f32")]
    assert results == [((1, 8, 16, 32), "f32")]
    with pytest.raises(KeyError):
        module.signature("nope")
