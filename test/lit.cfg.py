# lit configuration for the cp-mlir regression tests.
import os
import shutil
import subprocess

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "CP"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test", ".c"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "lit.local.cfg", "Inputs", "reference.py", "conftest.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.cp_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
# cp-run-attention checks one call of each case; the untimed warm-up call
# before it is for timing, which no test asserts.
config.environment["CP_RUN_ATTENTION_WARMUP"] = "0"
config.substitutions.append(("%cp_docs_dir", config.cp_docs_dir))
config.substitutions.append(("%cp_src_root", config.cp_src_root))
config.substitutions.append(("%cp_obj_root", config.cp_obj_root))
# The plugin test runs the LLVM installation's own mlir-opt, never cp-opt.
config.substitutions.append(
    ("%stock_mlir_opt", os.path.join(config.llvm_tools_dir, "mlir-opt")))
config.substitutions.append(
    ("%cp_plugin", os.path.join(config.cp_obj_root, "lib", "CPPlugin.so")))
# The out-of-tree scheme plugin of test/SchemePlugin.
config.substitutions.append(
    ("%cp_example_schemes",
     os.path.join(config.cp_obj_root, "lib", "CPExampleSchemes.so")))
# The external-project test builds with this build's compiler (and ccache
# when this build uses it).
config.substitutions.append(("%cxx_compiler", config.cxx_compiler))
config.substitutions.append((
    "%cmake_launcher",
    "-DCMAKE_CXX_COMPILER_LAUNCHER=" + config.cxx_launcher
    if config.cxx_launcher else ""))
config.substitutions.append(("%cp_python", config.cp_python_executable))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

tool_dirs = [config.cp_tools_dir, config.llvm_tools_dir]
tools = [
    ToolSubst("cp-opt", unresolved="fatal"),
    ToolSubst("cp-compile", unresolved="fatal"),
    ToolSubst("cp-run-attention", unresolved="fatal"),
    ToolSubst("cp-test-collectives", unresolved="fatal"),
    ToolSubst("cp-capi-test", unresolved="fatal"),
    ToolSubst("cp-unit-structured-mask-pairs", unresolved="fatal"),
    ToolSubst("cp-unit-shared-cores-finish", unresolved="fatal"),
    ToolSubst("cp-unit-reference-gradient", unresolved="fatal"),
    ToolSubst("cp-unit-mma-fragments", unresolved="fatal"),
    ToolSubst("cp-gpu-emulate", unresolved="fatal"),
]
llvm_config.add_tool_substitutions(tools, tool_dirs)
llvm_config.with_environment("PATH", config.cp_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

# Sanitizer builds (CP_ENABLE_SANITIZERS): any ASan or UBSan report fails
# the test. The ASan runtime (and libstdc++, for its exception
# interceptors) is preloaded for the programs that are not instrumented but
# load instrumented code (stock mlir-opt with the plugin, python3 with the
# package). User poisoning is off: LLVM's header-only BumpPtrAllocator
# poisons its slabs when compiled with ASan (in cp's code) but the
# uninstrumented libMLIR.so allocates from the same slabs without
# unpoisoning them, which ASan would report as use-after-poison. Leak checking is off: MPI and the CUDA stub
# keep allocations until exit by design.
if config.cp_enable_sanitizers.upper() in ("ON", "TRUE", "1"):
    config.available_features.add("sanitizers")
    config.environment["ASAN_OPTIONS"] = (
        "detect_leaks=0:abort_on_error=0:exitcode=99:"
        "verify_asan_link_order=0:handle_segv=1:allow_user_poisoning=0")
    config.environment["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1"
    config.environment["LD_PRELOAD"] = config.cp_sanitizer_preload

# `avx512_bf16` where this CPU has AVX512_BF16 dot products (vdpbf16ps):
# the tests that run cp-lower-to-cpu's bf16-dot kernel.
try:
    with open("/proc/cpuinfo") as cpuinfo:
        if "avx512_bf16" in cpuinfo.read().split():
            config.available_features.add("avx512_bf16")
except OSError:
    pass

# GPU tests: `cuda` where the toolkit and NCCL were found (compile and link
# checks; no device needed), `gpu` where a device is visible (execution).
# Without them those tests report UNSUPPORTED, never PASS.
if config.cp_enable_cuda.upper() in ("ON", "TRUE", "1"):
    config.available_features.add("cuda")
    config.substitutions.append(
        ("%ptxas", os.path.join(config.cuda_bin_dir, "ptxas")))
    smi = shutil.which("nvidia-smi")
    if smi and subprocess.run([smi, "-L"], capture_output=True).returncode == 0:
        config.available_features.add("gpu")

# The masks every numeric integration test runs (cp-run-attention cases):
# structured masks, explicit i1 masks with the global and the local query
# extent (rows with no visible key included), an additive bias, and a
# structured mask combined with an explicit one.
config.substitutions.append((
    "%attention_cases",
    "--case none=none --case causal=causal --case window=window:23 "
    "--case explicit_global=explicit-global "
    "--case explicit_local=explicit-local --case bias_global=bias-global "
    "--case causal_explicit=causal+explicit-global"))

# The flex-style regions every scheme runs: a document mask_mod on segment
# ids (alone, with causal, with a window), causal written as a mask_mod, a
# tanh soft-capping score_mod, an ALiBi score_mod (per-head slopes, so the
# heads must be global under ulysses), and all of them at once.
config.substitutions.append((
    "%region_cases",
    "--case document=none+document --case document_causal=causal+document "
    "--case causal_mod=none+causal-mod --case softcap=causal+softcap:2 "
    "--case alibi=causal+alibi "
    "--case all=window:20+document+causal-mod+softcap:3+alibi"))

# The backward's cases (cp-run-attention +grad): no mask, causal, an odd
# sliding window, an explicit i1 mask per head (rows that see nothing
# included), a local explicit mask with causal, an additive bias, a document
# mask_mod, and tanh soft-capping with ALiBi (score_mod derivatives).
config.substitutions.append((
    "%grad_cases",
    "--case none=none+grad --case causal=causal+grad "
    "--case window=window:7+grad --case explicit=explicit-global+grad "
    "--case local_explicit=causal+explicit-local+grad "
    "--case bias=bias-global+grad --case document=document+grad "
    "--case softcap=causal+softcap:5+grad "
    "--case alibi_softcap=alibi+softcap:3+grad"))
# The same masks as training steps: cp.attention chained into
# cp.attention_grad (cp-run-attention's +train).
config.substitutions.append((
    "%train_cases",
    "--case none=none+train --case causal=causal+train "
    "--case window=window:7+train --case explicit=explicit-global+train "
    "--case local_explicit=causal+explicit-local+train "
    "--case bias=bias-global+train --case document=document+train "
    "--case softcap=causal+softcap:5+train "
    "--case alibi_softcap=alibi+softcap:3+train"))

# Programs under MPI: one OpenMP thread per rank (the ranks already share
# the cores), and a time limit so that a hang fails instead of blocking.
mpirun = shutil.which("mpirun")
if mpirun:
    config.available_features.add("mpi")
    config.substitutions.append(
        ("%mpirun", "env OMP_NUM_THREADS=1 timeout 300 " + mpirun))
