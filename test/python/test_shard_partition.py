# RUN: %pytest %s
"""cp's attention inside upstream's sharding, end to end: a block written
on the whole sequence (causal cp.local_attention, plus a residual
linalg.add of the queries) whose Q, K and V are annotated as split along
the sequence over a 1-D shard.grid of P processes. Stock
sharding-propagation and shard-partition (cp-opt, with cp's
ShardingInterface model of cp.local_attention) make the per-process
function: the attention becomes cp.attention on the shards and the add
stays local. Compiled under allgather, ulysses and ring, it runs on 2 and
4 MPI ranks and equals plain float64 attention plus the residual
(reference.py, no cp-mlir code) within 1e-4 (f32). A document-masked
variant keeps its segment ids whole on every rank. The transformer block
of examples/transformer-block-sharded.mlir (embedding, norm, attention,
MLP) goes the same way and equals both the unannotated block on one
process and float64 numpy."""

import os
import re
import subprocess

import numpy as np
import pytest

import cp_mlir
from cp_mlir import _config

import reference

B, H, HKV, S, D = 1, 8, 4, 64, 16

BLOCK = """
shard.grid @seq(shape = {P})
#id = affine_map<(b, h, s, d) -> (b, h, s, d)>
func.func @block(%q: tensor<{q}>, %k: tensor<{kv}>, %v: tensor<{kv}>{seg_arg}) -> tensor<{q}> {{
  %s = shard.sharding @seq split_axes = [[], [], [0]] : !shard.sharding
  %q1 = shard.shard %q to %s : tensor<{q}>
  %k1 = shard.shard %k to %s : tensor<{kv}>
  %v1 = shard.shard %v to %s : tensor<{kv}>
  %c0 = arith.constant 0 : index
  %o = cp.local_attention %q1, %k1, %v1 offsets(%c0, %c0){mods} mask = causal
{regions}      : tensor<{q}>, tensor<{kv}>, tensor<{kv}> -> tensor<{q}>
  %e = tensor.empty() : tensor<{q}>
  %r = linalg.add ins(%o, %q1 : tensor<{q}>, tensor<{q}>) outs(%e : tensor<{q}>) -> tensor<{q}>
  return %r : tensor<{q}>
}}
"""

DOCUMENT = """      mask_mod {{
      ^bb0(%b: index, %h: index, %qi: index, %ki: index, %t: tensor<{S}xi32>):
        %a = tensor.extract %t[%qi] : tensor<{S}xi32>
        %c = tensor.extract %t[%ki] : tensor<{S}xi32>
        %same = arith.cmpi eq, %a, %c : i32
        cp.yield %same : i1
      }}
"""


def block_text(P, document):
    q = f"{B}x{H}x{S}x{D}xf32"
    kv = f"{B}x{HKV}x{S}x{D}xf32"
    seg = f"tensor<{S}xi32>"
    return BLOCK.format(
        P=P, q=q, kv=kv,
        seg_arg=f", %seg: {seg}" if document else "",
        mods=f" mod_operands(%seg : {seg})" if document else "",
        regions=DOCUMENT.format(S=S) if document else "")


def partitioned(text):
    done = subprocess.run(
        [_config.tool("cp-opt"), "-", "--pass-pipeline=builtin.module("
         "func.func(sharding-propagation,shard-partition),canonicalize)"],
        input=text, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("P", [2, 4])
@pytest.mark.parametrize("document", [False, True], ids=["causal", "document"])
def test_partitioned_block_equals_reference(tmp_path, P, document):
    text = partitioned(block_text(P, document))
    # The attention is cp's, on the local shards; nothing gathers Q, K, V.
    assert "cp.attention" in text and "shard.all_gather" not in text
    assert f"tensor<{B}x{H}x{S // P}x{D}xf32>" in text

    rng = np.random.default_rng(3)
    q = rng.uniform(-1, 1, (B, H, S, D)).astype(np.float32)
    k = rng.uniform(-1, 1, (B, HKV, S, D)).astype(np.float32)
    v = rng.uniform(-1, 1, (B, HKV, S, D)).astype(np.float32)
    allowed = reference.causal(S)
    inputs = [q, k, v]
    if document:
        seg = np.repeat(np.arange(5), [9, 20, 3, 17, 15]).astype(np.int32)
        assert seg.shape == (S,)
        allowed = allowed & (seg[:, None] == seg[None, :])
        inputs.append(seg)
    expected = reference.attention(q, k, v, allowed=allowed) + q

    for scheme in ("allgather", "ulysses", "ring"):
        program = cp_mlir.compile_cpu(text, scheme=scheme, function="block",
                                      output=str(tmp_path / f"{scheme}.so"),
                                      opt_level=0)
        got = cp_mlir.run_cpu(program, P, inputs)
        error = np.max(np.abs(got.astype(np.float64) - expected))
        assert error <= 1e-4, f"{scheme} on {P} ranks: max |err| {error:.3e}"


def test_without_annotations_nothing_is_split():
    """The negative control of the partitioning: the same block with no
    sharding annotation keeps its whole-sequence attention (no cp.attention
    appears); the test above therefore checks the annotations' effect."""
    text = block_text(2, False)
    bare = "\n".join(l for l in text.splitlines()
                     if "shard.sharding" not in l and "shard.shard " not in l)
    bare = bare.replace("%q1", "%q").replace("%k1", "%k").replace("%v1", "%v")
    out = partitioned(bare)
    assert "cp.local_attention" in out and "cp.attention" not in out


EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples",
                       "transformer-block-sharded.mlir")


def unsharded(text):
    """The block without its sharding annotations: each `%a = shard.shard
    %b to ...` dropped and %a read as %b, the shard.sharding ops dropped."""
    renames, lines = {}, []
    for line in text.splitlines():
        m = re.match(r"\s*(%\w+) = shard\.shard (%\w+) to ", line)
        if m:
            renames[m.group(1)] = m.group(2)
            continue
        if "shard.sharding" in line:
            continue
        lines.append(line)
    out = "\n".join(lines)
    for new, old in renames.items():
        out = re.sub(re.escape(new) + r"\b", old, out)
    return out


def block_reference(ids, table, gain, wq, wk, wv, wo, w1, w2):
    """The example's block in float64 numpy."""
    x = table.astype(np.float64)[ids]                       # [1, S, E]
    n = x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + 1e-5) * gain
    q = np.einsum("bse,hed->bhsd", n, wq)
    k = np.einsum("bse,hed->bhsd", n, wk)
    v = np.einsum("bse,hed->bhsd", n, wv)
    o = reference.attention(q, k, v, allowed=reference.causal(ids.shape[1]))
    h = x + np.einsum("bhsd,hde->bse", o, wo)
    return h + np.maximum(h @ w1, 0.0) @ w2


@pytest.mark.parametrize("P", [2, 4])
def test_transformer_block(tmp_path, P):
    """examples/transformer-block-sharded.mlir from upstream annotations to
    P ranks: partitioned by the stock passes (only the attention talks),
    compiled under allgather and ring (and ulysses where P divides the 2
    K/V heads), equal within 1e-4 to the unsharded block on one process
    and to float64 numpy."""
    source = open(EXAMPLE).read().replace("GRID", str(P))
    text = partitioned(source)
    assert text.count("cp.attention") == 1 and "shard.all_gather" not in text
    assert f"tensor<1x{64 // P}xi32>" in text

    rng = np.random.default_rng(7)
    ids = rng.integers(0, 50, (1, 64)).astype(np.int32)
    weights = [rng.uniform(-0.5, 0.5, shape).astype(np.float32) for shape in
               [(50, 16), (16,), (4, 16, 8), (2, 16, 8), (2, 16, 8),
                (4, 8, 16), (16, 32), (32, 16)]]
    inputs = [ids] + weights
    exact = block_reference(*inputs)
    whole = cp_mlir.compile_cpu(unsharded(source), function="block",
                                output=str(tmp_path / "whole.so"), opt_level=0)
    one = cp_mlir.run_cpu(whole, 1, inputs)
    assert np.max(np.abs(one - exact)) <= 1e-4

    schemes = ["allgather", "ring"] + (["ulysses"] if 2 % P == 0 else [])
    for scheme in schemes:
        program = cp_mlir.compile_cpu(text, scheme=scheme, function="block",
                                      output=str(tmp_path / f"{scheme}.so"),
                                      opt_level=0)
        got = cp_mlir.run_cpu(program, P, inputs)
        assert got.shape == one.shape
        for name, want in (("one process", one), ("numpy", exact)):
            error = np.max(np.abs(got.astype(np.float64) - want))
            assert error <= 1e-4, f"{scheme} on {P} ranks vs {name}: {error:.3e}"


GRAD = """
shard.grid @seq(shape = {P})
func.func @backward(%q: tensor<{q}>, %k: tensor<{kv}>, %v: tensor<{kv}>,
                    %o: tensor<{q}>, %lse: tensor<{lse}>, %do: tensor<{q}>)
    -> (tensor<{q}>, tensor<{kv}>, tensor<{kv}>) {{
  %s = shard.sharding @seq split_axes = [[], [], [0]] : !shard.sharding
  %q1 = shard.shard %q to %s : tensor<{q}>
  %k1 = shard.shard %k to %s : tensor<{kv}>
  %v1 = shard.shard %v to %s : tensor<{kv}>
  %o1 = shard.shard %o to %s : tensor<{q}>
  %lse1 = shard.shard %lse to %s : tensor<{lse}>
  %do1 = shard.shard %do to %s : tensor<{q}>
  %c0 = arith.constant 0 : index
  %dq, %dk, %dv = cp.local_attention_grad %q1, %k1, %v1, %o1, %lse1, %do1 offsets(%c0, %c0) mask = causal
      : tensor<{q}>, tensor<{kv}>, tensor<{kv}>, tensor<{q}>, tensor<{lse}>, tensor<{q}>
      -> tensor<{q}>, tensor<{kv}>, tensor<{kv}>
  return %dq, %dk, %dv : tensor<{q}>, tensor<{kv}>, tensor<{kv}>
}}
"""


def log_sum_exp(q, k, allowed):
    """The float64 log-sum-exp of each row of the scaled, masked scores."""
    q, k = (np.asarray(x, dtype=np.float64) for x in (q, k))
    k = np.repeat(k, q.shape[1] // k.shape[1], axis=1)
    scores = np.einsum("bhqd,bhkd->bhqk", q, k) / np.sqrt(q.shape[-1])
    scores = np.where(allowed, scores, -np.inf)
    top = scores.max(axis=-1, keepdims=True)
    return (top + np.log(np.exp(scores - top).sum(axis=-1, keepdims=True)))[..., 0]


@pytest.mark.parametrize("P", [2, 4])
def test_partitioned_backward(tmp_path, P):
    """cp.local_attention_grad on the whole sequence, its six inputs
    annotated as sequence-split: shard-partition makes cp.attention_grad on
    the shards (the sharding model of the backward), which every scheme's
    backward then computes; dq, dk, dv equal float64 numpy's within 1e-4."""
    text = partitioned(GRAD.format(P=P, q=f"{B}x{H}x{S}x{D}xf32",
                                   kv=f"{B}x{HKV}x{S}x{D}xf32",
                                   lse=f"{B}x{H}x{S}xf32"))
    assert "cp.attention_grad" in text and "shard.all_gather" not in text
    assert f"tensor<{B}x{HKV}x{S // P}x{D}xf32>" in text

    rng = np.random.default_rng(5)
    q = rng.uniform(-1, 1, (B, H, S, D)).astype(np.float32)
    k = rng.uniform(-1, 1, (B, HKV, S, D)).astype(np.float32)
    v = rng.uniform(-1, 1, (B, HKV, S, D)).astype(np.float32)
    do = rng.uniform(-1, 1, (B, H, S, D)).astype(np.float32)
    allowed = reference.causal(S)
    o = reference.attention(q, k, v, allowed=allowed).astype(np.float32)
    lse = log_sum_exp(q, k, allowed).astype(np.float32)
    expected = reference.attention_grad(q, k, v, do, allowed=allowed)

    for scheme in ("allgather", "ulysses", "ring"):
        program = cp_mlir.compile_cpu(text, scheme=scheme, function="backward",
                                      output=str(tmp_path / f"{scheme}.so"),
                                      opt_level=0)
        got = cp_mlir.run_cpu(program, P, [q, k, v, o, lse, do])
        for name, x, want in zip(("dq", "dk", "dv"), got, expected):
            error = np.max(np.abs(x.astype(np.float64) - want))
            assert error <= 1e-4, \
                f"{scheme} on {P} ranks: {name} max |err| {error:.3e}"
