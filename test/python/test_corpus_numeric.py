# RUN: %pytest %s
"""Corpus functions (test/Raising/Corpus) end to end: the function as
written, compiled by cp-compile through a plain linalg CPU pipeline (TOSA
lowered first by stock mlir-opt's tosa-to-linalg passes) and run on one
process over the global sequence, against the same function at the local
length raised by cp-raise-attention and run under allgather, ulysses and
ring on P MPI ranks, inputs and outputs split along the sequence.

One function per form: torch-mlir's keepdim softmax with a rank-reduced max
(class 1), rocMLIR's TOSA attention with collapse_shape between 4-D and 3-D
(class 2), IREE's f16 keepdim attention with an identity add and a -65504
max init (classes 1 and 3), a torch-mlir BERT layer whose projections
stay (classes 1 and 2), and rocMLIR's f16 causal decode (class 4, with its
mask from iota constants selected to -inf: class 3), whose queries every
rank holds while the K/V cache is split. The sequence length is the corpus file's, except
for IREE's (4096, replaced by 256 so that one f16 process runs it in
seconds). Tolerance: max |err| 1e-4 for f32. For f16 the unraised
function accumulates scores, row sums and P V in f16 (about sqrt(256) f16
roundings of 2^-11 each: measured 1.4e-2 from exact), cp.attention in f32,
so the two are compared at 3e-2, and the raised one is also held to 2e-3
of plain float64 attention of the same f16 inputs (its f16 output rounding,
2^-11 of |o| <= 1, with room for the f32 accumulation)."""

import os
import re
import subprocess

import numpy as np
import pytest

import cp_mlir
from cp_mlir import _config

CORPUS = os.path.join(os.path.dirname(__file__), "..", "Raising", "Corpus")
# TOSA lowered by stock passes, and elementwise arith/math ops on whole
# tensors (buddy's math.exp) turned into linalg.generic.
TOSA_TO_LINALG = ("builtin.module(func.func(tosa-to-linalg-named,tosa-to-linalg,"
                  "tosa-to-arith,tosa-to-tensor,convert-elementwise-to-linalg))")


def with_length(text, old, new):
    """The function with sequence length `old` replaced by `new` in every
    shape (numbers delimited by non-digits)."""
    return re.sub(r"(?<![0-9.])%d(?![0-9])" % old, str(new), text)


def compile_text(text, tmp_path, name, function, scheme=None):
    """cp-compile of `text` (after tosa-to-linalg when it holds tosa ops)."""
    path = tmp_path / f"{name}.mlir"
    path.write_text(text)
    if "tosa." in text:
        # Stock mlir-opt for the function as written; a raised one that
        # keeps tosa ops around its cp.attention needs cp-opt's parser.
        tool = _config.tool("cp-opt") if "cp.attention" in text else "mlir-opt"
        lowered = tmp_path / f"{name}.linalg.mlir"
        subprocess.run([tool, str(path), f"--pass-pipeline={TOSA_TO_LINALG}",
                        "-o", str(lowered)], check=True)
        path = lowered
    return cp_mlir.compile_cpu(path.read_text(), scheme=scheme, function=function,
                               output=str(tmp_path / f"{name}.so"), opt_level=0)


def raised(text, P, function):
    """cp-raise-attention on the local function; it must raise."""
    done = subprocess.run(
        [_config.tool("cp-opt"), "-",
         f"--cp-raise-attention=grid-size={P} require-in={function}"],
        input=text, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "cp.attention" in done.stdout
    return done.stdout


CASES = [
    # file, function, global length, global length used, P, tolerance
    ("torchmlir-style-attention-block-f32-transpose-expand.mlir",
     "attention_block", 128, 128, 4, 1e-4),
    ("rocmlir-tosa-attention-collapse-4d-3d.mlir",
     "self_attention_with_reshapes", 384, 384, 4, 1e-4),
    ("iree-attention-block-f16-keepdim.mlir", "attention_block", 4096, 256, 2, 3e-2),
    ("torchmlir-bert-mha-keepdim-argmax-4d.mlir", "forward", 384, 384, 2, 1e-4),
]


@pytest.mark.parametrize("name,function,length,S,P,tolerance", CASES,
                         ids=[c[0].split("-")[0] + "-" + c[1] for c in CASES])
def test_raised_equals_unraised(tmp_path, name, function, length, S, P, tolerance):
    source = open(os.path.join(CORPUS, name)).read()
    whole = with_length(source, length, S)
    local = with_length(source, length, S // P)
    reference = compile_text(whole, tmp_path, "whole", function)
    rng = np.random.default_rng(5)
    dtypes = {"f32": np.float32, "f16": np.float16}
    inputs = [rng.uniform(-1, 1, shape).astype(dtypes[element])
              for shape, element in reference.inputs]
    expected = cp_mlir.run_cpu(reference, 1, inputs)

    text = raised(local, P, function)
    for scheme in ("allgather", "ulysses", "ring"):
        program = compile_text(text, tmp_path, scheme, function, scheme=scheme)
        got = cp_mlir.run_cpu(program, P, inputs)
        assert got.shape == expected.shape
        error = np.max(np.abs(got.astype(np.float64) - expected.astype(np.float64)))
        assert error <= tolerance, f"{scheme}: max |err| {error:.3e}"
        if got.dtype == np.float16:
            exact = exact_attention(*inputs)
            assert np.max(np.abs(got - exact)) <= 2e-3, scheme


def exact_attention(q, k, v):
    """softmax(Q K^T) V in float64 over [N, L, D] (IREE's function has
    scale 1.0 and no mask)."""
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    s = np.einsum("nid,njd->nij", q, k)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    return np.einsum("nij,njd->nid", p / p.sum(axis=-1, keepdims=True), v)


def test_unraised_on_shards_differs(tmp_path):
    """The negative control: the local function compiled as written and run
    on each shard attends only within the shard; it misses the reference by
    far more than the tolerance, so the comparison above can fail."""
    name, function, length, S, P, tolerance = CASES[0]
    source = open(os.path.join(CORPUS, name)).read()
    reference = compile_text(with_length(source, length, S), tmp_path, "whole",
                             function)
    rng = np.random.default_rng(5)
    inputs = [rng.uniform(-1, 1, shape).astype(np.float32)
              for shape, _ in reference.inputs]
    expected = cp_mlir.run_cpu(reference, 1, inputs)
    local = compile_text(with_length(source, length, S // P), tmp_path, "local",
                         function)
    got = cp_mlir.run_cpu(local, P, inputs)
    assert np.max(np.abs(got - expected)) > 100 * tolerance


def check_decode_schemes(text, tmp_path, function, P, packed, k, v, rest,
                         expected, exact):
    """The raised decode `text` under allgather, ulysses and ring on P
    ranks: every rank returns the whole output, each copy within 3e-2 of
    the unraised function (f16 accumulation in the original, as for
    IREE's) and 2e-3 of float64 attention. Rank r's K and V arguments are
    its [1, H, S/P, D] block of the cache, flattened (the runner splits
    flat arrays into P contiguous blocks); `packed` and `rest` go to every
    rank."""
    def by_rank(x):
        return np.concatenate([b.reshape(-1) for b in np.split(x, P, axis=2)])

    for scheme in ("allgather", "ulysses", "ring"):
        program = compile_text(text, tmp_path, scheme, function, scheme=scheme)
        got = cp_mlir.run_cpu(program, P, [packed, by_rank(k), by_rank(v), *rest])
        for rank, copy in enumerate(np.split(got, P)):
            error = np.max(np.abs(copy.astype(np.float64) - expected))
            assert error <= 3e-2, f"{scheme} rank {rank}: max |err| {error:.3e}"
            assert np.max(np.abs(copy - exact)) <= 2e-3, f"{scheme} rank {rank}"


DECODE = "rocmlir-tosa-causal-iota-select-f16.mlir"


def decode_text(source, keys):
    """rocMLIR's causal decode function with `keys` keys (64 in the file):
    the K/V sizes and every 0..63 iota constant rewritten for that length."""
    text = source.replace("262144", str(32 * keys * 128))
    text = re.sub(r"\[0, 1, 2, [0-9, ]*, 63\]",
                  "[" + ", ".join(str(i) for i in range(keys)) + "]", text)
    return with_length(text, 64, keys)


def exact_decode(packed, k, v):
    """The function's attention in float64: Q = heads 0..31 of the packed
    QKV's 2 rows, K and V [32, 64, 128], scale the file's f16 constant,
    query row i sees keys 0..i; the output as the function returns it."""
    q = packed.astype(np.float64).reshape(2, 96, 128).transpose(1, 0, 2)[:32]
    k = k.astype(np.float64).reshape(32, -1, 128)
    v = v.astype(np.float64).reshape(32, -1, 128)
    s = np.einsum("hid,hjd->hij", q, k) * float(np.float16(8.837890e-02))
    allowed = np.arange(k.shape[1])[None, :] <= np.arange(2)[:, None]
    s = np.where(allowed, s, -np.inf)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    o = np.einsum("hij,hjd->hid", p / p.sum(axis=-1, keepdims=True), v)
    return o.transpose(1, 0, 2).reshape(-1)


def test_decode_raised_equals_unraised(tmp_path):
    """Class 4, a decode: rocMLIR's f16 causal attention of 2 queries
    (sliced from a packed QKV) against 64 keys, raised with queries =
    replicated from the local function of 32 keys and run on 2 ranks (each
    holding its half of the K/V cache, the same queries) under allgather,
    ulysses and ring. Every rank must return the whole output; each copy is
    held to the unraised function on one process (3e-2: f16 accumulation
    in the original, as for IREE's) and to float64 attention (2e-3)."""
    P, S = 2, 64
    source = open(os.path.join(CORPUS, DECODE)).read()
    function = "mlir_nokvcache_causal_attention"
    reference = compile_text(source, tmp_path, "whole", function)
    rng = np.random.default_rng(11)
    packed = rng.uniform(-1, 1, 24576).astype(np.float16)
    k = rng.uniform(-1, 1, (1, 32, S, 128)).astype(np.float16)
    v = rng.uniform(-1, 1, (1, 32, S, 128)).astype(np.float16)
    expected = cp_mlir.run_cpu(reference, 1, [packed, k.reshape(-1), v.reshape(-1)])
    exact = exact_decode(packed, k, v)
    assert np.max(np.abs(expected - exact)) <= 3e-2

    text = raised(decode_text(source, S // P), P, function)
    assert "queries = replicated" in text and "mask = causal" in text
    check_decode_schemes(text, tmp_path, function, P, packed, k, v, [],
                         expected, exact)


KVCACHE = "rocmlir-tosa-decode-kvcache-seqlen-mask-f16.mlir"


def kvcache_text(source, keys):
    """rocMLIR's KV-cache decode with `keys` cache entries (1024 in the
    file): the K/V sizes and the 0..1023 iota constants (little-endian i32
    hex) rewritten for that length."""
    iota = '"0x' + "".join(i.to_bytes(4, "little").hex().upper()
                           for i in range(keys)) + '"'
    text = re.sub(r'"0x[0-9A-F]{8192}"', iota, source)
    text = text.replace("4194304", str(32 * keys * 128))
    return with_length(text, 1024, keys)


def test_kvcache_decode_raised_equals_unraised(tmp_path):
    """A decode whose mask reads data: rocMLIR's f16 KV-cache attention of
    one query per head against 1024 cache entries, masked beyond each
    head's currentSeqLen, raised with the lengths as a mod operand of its
    mask_mod and run on 2 ranks (each holding half of the cache) under
    allgather, ulysses (the mask_mod must read the global head) and ring.
    The lengths put some heads' last key in rank 0's half, so rank 1 sees
    nothing for them. Tolerances as for the causal decode."""
    P, S = 2, 1024
    source = open(os.path.join(CORPUS, KVCACHE)).read()
    function = "mlir_attention"
    reference = compile_text(source, tmp_path, "whole", function)
    rng = np.random.default_rng(13)
    packed = rng.uniform(-1, 1, 12288).astype(np.float16)
    k = rng.uniform(-1, 1, (1, 32, S, 128)).astype(np.float16)
    v = rng.uniform(-1, 1, (1, 32, S, 128)).astype(np.float16)
    lengths = rng.integers(1, S + 1, 32).astype(np.int32)
    lengths[:4] = [1, 300, 512, 513]
    expected = cp_mlir.run_cpu(reference, 1,
                               [packed, k.reshape(-1), v.reshape(-1), lengths])

    q = packed.astype(np.float64).reshape(96, 128)[:32]
    s = np.einsum("hd,hjd->hj", q, k[0].astype(np.float64))
    s = s * float(np.float16(8.837890e-02))
    s = np.where(np.arange(S)[None, :] < lengths[:, None], s, -np.inf)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    exact = np.einsum("hj,hjd->hd", p / p.sum(axis=-1, keepdims=True),
                      v[0].astype(np.float64)).reshape(-1)
    assert np.max(np.abs(expected - exact)) <= 3e-2

    text = raised(kvcache_text(source, S // P), P, function)
    assert "queries = replicated" in text and "mod_operands" in text
    check_decode_schemes(text, tmp_path, function, P, packed, k, v, [lengths],
                         expected, exact)


ONE_PROCESS = [
    # file, function
    ("rocmlir-tosa-gqa-lse-output.mlir", "mlir_lse_attention"),
    ("rocmlir-tosa-gqa-broadcast-add-zeros.mlir", "self_attention_gqa_scale_bias"),
    ("rocmlir-tosa-attention-4d-transpose-tensor-scale.mlir",
     "self_attention_with_4d_scale"),
    ("buddy-gqa-decode-lse-softmax-bmm-transposeb.mlir", "kernel"),
]


@pytest.mark.parametrize("name,function", ONE_PROCESS,
                         ids=[c[1] for c in ONE_PROCESS])
def test_raised_on_one_process(tmp_path, name, function):
    """Functions whose raised form reads a tensor at every query and key
    (a runtime scale tensor as a score_mod mod operand, a bias or mask as
    explicit_mask), which only a group of one process can take, or that
    return the log-sum-exp (cp.attention's lse result) besides the output,
    and buddy's decode with its log-sum-exp softmax:
    raised with grid-size=1 and compiled through cp-apply-scheme, against
    the function as written. Every result within 1e-4 (f32)."""
    source = open(os.path.join(CORPUS, name)).read()
    reference = compile_text(source, tmp_path, "whole", function)
    rng = np.random.default_rng(17)
    inputs = [rng.uniform(-1, 1, shape).astype(np.float32)
              for shape, _ in reference.inputs]
    expected = cp_mlir.run_cpu(reference, 1, inputs)
    text = raised(source, 1, function)
    program = compile_text(text, tmp_path, "raised", function, scheme="allgather")
    got = cp_mlir.run_cpu(program, 1, inputs)
    expected = expected if isinstance(expected, tuple) else (expected,)
    got = got if isinstance(got, tuple) else (got,)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert np.max(np.abs(g - e)) <= 1e-4
