//===- MachinePeaks.h - the ceilings a CPU benchmark is held to -*- C++ -*-===//
//
// The rates of this machine that cp-bench-attention reports its kernels
// against, measured in the same run: the f32 FMA peak with the widest
// vector ISA the CPU has (AVX-512 where present, else AVX2), the bf16
// dot-product peak (vdpbf16ps) where present, and the memory bandwidth of
// a STREAM-like triad. Each probe runs on every thread and keeps the best
// of three runs, since the machines are shared.
//
//===----------------------------------------------------------------------===//

#ifndef CP_BENCH_MACHINEPEAKS_H
#define CP_BENCH_MACHINEPEAKS_H

#include <optional>
#include <string>

namespace cp::bench {

struct Peak {
  /// The instructions the probe ran, e.g. "AVX-512F (zmm FMA)".
  std::string isa;
  double gflops;
};

/// f32 FMA peak of `threads` threads with the widest FMA the CPU supports.
Peak f32FmaPeak(unsigned threads);
/// The 256-bit (AVX2) f32 FMA peak, for comparison with the widest.
Peak f32Fma256Peak(unsigned threads);
/// bf16 dot-product peak (vdpbf16ps, f32 accumulation), or none when the
/// CPU lacks AVX512_BF16.
std::optional<Peak> bf16DotPeak(unsigned threads);
/// Memory bandwidth in GB/s of a triad a[i] = b[i] + s * c[i] over arrays
/// far larger than the caches (bytes read and written, 3 * 4 per element).
double triadBandwidthGBs(unsigned threads);

} // namespace cp::bench

#endif // CP_BENCH_MACHINEPEAKS_H
