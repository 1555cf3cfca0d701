# RUN: %pytest %s
"""apply_scheme and lower, run in process through the C API."""

import os

import pytest

import cp_mlir

# Machine profiles cp-calibrate measured on 4 ranks of this machine kind,
# and the same with every collective but all_gather and reduce_scatter
# 100x slower (test/Transforms/choose-scheme-profile.mlir).
INPUTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                      "Transforms", "Inputs")
PROFILE = os.path.join(INPUTS, "host-p4.profile")
SLOW_ALL_TO_ALL = os.path.join(INPUTS, "slow-all-to-all-p4.profile")


def layer(**kw):
    shape = dict(H=8, Hkv=4, S=64, D=16, P=4, mask="causal")
    shape.update(kw)
    return cp_mlir.AttentionLayer(**shape).build()


@pytest.mark.parametrize("scheme,collective,count", [
    ("allgather", "cp.all_gather", 2),
    ("ulysses", "cp.all_to_all", 4),
    ("hybrid(2)", "cp.all_to_all", 4),
    ("head_tail", "cp.exchange", 2),
])
def test_apply_scheme(scheme, collective, count):
    module = cp_mlir.apply_scheme(layer(), scheme)
    text = str(module)
    assert "cp.attention" not in text
    assert text.count(collective + " ") == count
    assert f"cp.scheme = #cp.scheme<{scheme}>" in text
    assert "cp.local_attention" in text and "mask = causal" in text


def test_unapplicable_scheme_is_an_error_naming_the_rule():
    with pytest.raises(cp_mlir.MLIRError) as info:
        cp_mlir.apply_scheme(layer(Hkv=2), "ulysses")
    (diagnostic,) = info.value.diagnostics
    assert "cannot use scheme #cp.scheme<ulysses>" in diagnostic
    assert "Hkv (2) divisible by the CP group size (4)" in diagnostic


def test_lower_to_cpu_reaches_llvm_with_runtime_calls():
    module = cp_mlir.lower(layer(), target="cpu", scheme="allgather", threads=False)
    text = str(module)
    assert "llvm.func @attention" in text
    assert "llvm.call @cp_rt_all_gather_f32" in text
    assert "cp." not in text.replace("cp_rt", "")


def test_lower_to_nvvm_makes_kernels_and_nccl_calls():
    module = cp_mlir.lower(layer(), target="nvvm", scheme="head_tail", format="isa")
    text = str(module)
    assert "gpu.binary" in text
    assert "cp_rt_gpu_exchange_mirror" in text


def test_bad_pipeline_and_bad_target():
    with pytest.raises(cp_mlir.MLIRError) as info:
        layer().run_pipeline("no-such-pass")
    assert "'no-such-pass' does not refer to a registered pass" in info.value.diagnostics[0]
    with pytest.raises(ValueError, match="target must be 'cpu' or 'nvvm'"):
        cp_mlir.lower(layer(), target="tpu")


@pytest.mark.parametrize("machine,chosen", [
    (None, "hybrid(2)"),
    ("h200-nvlink", "hybrid(2)"),
    ("host-mpi", "ulysses"),
])
def test_apply_scheme_resolves_auto(machine, chosen):
    # apply_scheme runs cp-choose-scheme for `auto` on the given machine;
    # at this shape the machine decides the scheme.
    module = cp_mlir.apply_scheme(layer(Hkv=8, S=256, D=32), "auto",
                                  machine=machine)
    text = str(module)
    assert "cp.attention " not in text
    assert f"cp.scheme = #cp.scheme<{chosen}>" in text


def test_apply_scheme_auto_on_an_unknown_machine_is_an_error():
    with pytest.raises(cp_mlir.MLIRError) as info:
        cp_mlir.apply_scheme(layer(), "auto", machine="laptop")
    assert any("unknown machine 'laptop'" in d for d in info.value.diagnostics)


def test_apply_scheme_auto_with_a_machine_profile():
    # A profile's path goes where a preset's name does; the choice follows
    # the measured figures and cp.cost names the file.
    module = cp_mlir.apply_scheme(layer(S=1024), "auto", machine=SLOW_ALL_TO_ALL)
    assert "cp.scheme = #cp.scheme<allgather>" in str(module)
    module = cp_mlir.AttentionLayer(H=8, Hkv=4, S=1024, D=16, P=4,
                                    mask="causal").build()
    module.run_pipeline(f"cp-choose-scheme{{scheme=auto machine={PROFILE}}}")
    assert f'profile = "{PROFILE}"' in str(module)


def test_compile_cpu_with_a_profile_of_another_group_size_is_an_error():
    # Measured on 4 ranks, the layer runs on 2: an error before compiling,
    # never a silent fallback to the built-in constants.
    with pytest.raises(cp_mlir.MLIRError) as info:
        cp_mlir.compile_cpu(cp_mlir.AttentionLayer(H=4, Hkv=2, S=64, D=16, P=2),
                            scheme="auto", machine=PROFILE)
    assert any("measured on 4 ranks, but this op's CP group has 2" in d
               for d in info.value.diagnostics)


def test_a_malformed_profile_is_an_error_naming_the_file(tmp_path):
    bad = tmp_path / "bad.profile"
    bad.write_text("format = 1\nranks = four\n")
    with pytest.raises(cp_mlir.MLIRError) as info:
        cp_mlir.apply_scheme(layer(), "auto", machine=str(bad))
    assert any(f"machine profile '{bad}': line 2: 'ranks' expects a number, "
               "got 'four'" in d for d in info.value.diagnostics)
