//===- cp-calibrate.cpp - measure a machine profile on MPI ranks ---------===//
//
// Run on the ranks a program will run on (mpirun -n P cp-calibrate -o
// FILE), measures what cp-choose-scheme{machine=FILE} costs schemes with
// (MachineProfile.h): the local attention kernel's seconds per head,
// forward and backward, f32 and bf16, unmasked and causal, at four lengths,
// every rank calling at once as the ranks of a program do; the runtime's
// collectives (libcp_runtime over MPI) at message sizes from 4 KiB to 16
// MiB per rank, for the group of all P ranks and for every subgroup size
// dividing P (the hybrid scheme's groups), all groups at once, alone and
// in bursts of calls back to back; how much of a ring step's shifts
// computation hides; when ranks outnumber cores, how much of the cores
// that waiting ranks leave the busy ones get; and the memory figures.
// Rank 0 writes the profile.
//
// The kernels are compiled from `cp-calibrate --emit-kernels` into
// cp-calibrate-kernels.so at build time (tools/cp-calibrate/CMakeLists.txt).
//
//===----------------------------------------------------------------------===//

#include "cp/Dialect/CP/Analysis/MachineProfile.h"
#include "cp/Runtime/cp_runtime.h"
#include "cp/TestSupport/Bf16.h"
#include "cp/TestSupport/DeviceMirror.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <dlfcn.h>
#include <fstream>
#include <optional>
#include <string>
#include <unistd.h>
#include <vector>

using namespace mlir::cp;
using cp::tools::denseDescriptor;
using cp::tools::Descriptor;
using cp::tools::toBf16;

namespace {

//===----------------------------------------------------------------------===//
// The calibrated kernel calls
//===----------------------------------------------------------------------===//

/// Every call has B = 1 and D = Dv = kHeadDim; the sequence lengths span
/// the calls the schemes make, small to large, with H = Hkv heads (fewer
/// for the longest, which costs as much per head and would take long).
constexpr int64_t kHeadDim = 64;
constexpr int64_t kLengths[] = {128, 512, 2048, 4096};
int64_t headsAt(int64_t s) { return s >= 4096 ? 1 : 4; }

const char *passName(KernelPass p) {
  return p == KernelPass::forward ? "forward" : "backward";
}
const char *typeName(KernelType t) { return t == KernelType::f32 ? "f32" : "bf16"; }
const char *maskName(KernelMask m) {
  return m == KernelMask::none ? "none" : "causal";
}
std::string functionName(KernelPass p, KernelType t, KernelMask m, int64_t s) {
  return std::string(passName(p)) + "_" + typeName(t) + "_" + maskName(m) +
         "_" + std::to_string(s);
}

/// Forward FLOPs of one head of a call: 2 * (D + Dv) per visible
/// query/key pair.
double forwardFlopsPerHead(KernelMask m, int64_t s) {
  double pairs = m == KernelMask::none ? double(s) * s : double(s) * (s + 1) / 2;
  return 2.0 * (2 * kHeadDim) * pairs;
}

/// The module of every calibrated call: forward_<type>_<mask>_<S> (the
/// output and lse of cp.local_attention) and backward_<type>_<mask>_<S>
/// (cp.local_attention_grad given o and lse).
void emitKernels(llvm::raw_ostream &os) {
  os << "// cp-calibrate --emit-kernels: the local attention calls "
        "cp-calibrate times\n";
  for (KernelType t : {KernelType::f32, KernelType::bf16})
    for (KernelMask m : {KernelMask::none, KernelMask::causal})
      for (int64_t s : kLengths) {
        std::string h = std::to_string(headsAt(s));
        std::string x = "tensor<1x" + h + "x" + std::to_string(s) + "x" +
                        std::to_string(kHeadDim) + "x" + typeName(t) + ">";
        std::string g = "tensor<1x" + h + "x" + std::to_string(s) + "x" +
                        std::to_string(kHeadDim) + "xf32>";
        std::string lse = "tensor<1x" + h + "x" + std::to_string(s) + "xf32>";
        std::string mask = m == KernelMask::causal ? " mask = causal" : "";
        os << "func.func @" << functionName(KernelPass::forward, t, m, s)
           << "(%q: " << x << ", %k: " << x << ", %v: " << x << ") -> (" << x
           << ", " << lse << ") {\n"
           << "  %c0 = arith.constant 0 : index\n"
           << "  %o, %lse = cp.local_attention %q, %k, %v offsets(%c0, %c0)"
           << mask << "\n      : " << x << ", " << x << ", " << x << " -> "
           << x << ", " << lse << "\n"
           << "  return %o, %lse : " << x << ", " << lse << "\n}\n";
        os << "func.func @" << functionName(KernelPass::backward, t, m, s)
           << "(%q: " << x << ", %k: " << x << ", %v: " << x << ", %o: " << x
           << ", %lse: " << lse << ", %do: " << x << ") -> (" << g << ", "
           << g << ", " << g << ") {\n"
           << "  %c0 = arith.constant 0 : index\n"
           << "  %dq, %dk, %dv = cp.local_attention_grad %q, %k, %v, %o, "
              "%lse, %do offsets(%c0, %c0)"
           << mask << "\n      : " << x << ", " << x << ", " << x << ", " << x
           << ", " << lse << ", " << x << " -> " << g << ", " << g << ", "
           << g << "\n"
           << "  return %dq, %dk, %dv : " << g << ", " << g << ", " << g
           << "\n}\n";
      }
}

//===----------------------------------------------------------------------===//
// Ranks and timing
//===----------------------------------------------------------------------===//

int worldRank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int worldSize() {
  int n = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

[[noreturn]] void fail(const std::string &why) {
  std::fprintf(stderr, "cp-calibrate: rank %d: %s\n", worldRank(), why.c_str());
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::exit(1);
}

/// Seconds of `call` with every rank calling at once: the slowest rank's,
/// median of `repeats` after one untimed call.
template <typename F> double timeTogether(int repeats, F call) {
  call();
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    call();
    double elapsed = MPI_Wtime() - start, slowest = 0;
    MPI_Allreduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    times.push_back(slowest);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

//===----------------------------------------------------------------------===//
// Memref descriptors
//===----------------------------------------------------------------------===//

/// A dense buffer of `shape` with `elementBytes` per element, and its
/// descriptor.
template <int N> struct Buffer {
  std::vector<unsigned char> bytes;
  Descriptor<N> desc;
  Buffer(const int64_t (&shape)[N], int64_t elementBytes) {
    int64_t n = 1;
    for (int i = 0; i < N; ++i)
      n *= shape[i];
    bytes.assign(n * elementBytes, 0);
    desc = denseDescriptor<N>(bytes.data(), shape);
  }
  int64_t elements() const {
    int64_t n = 1;
    for (int i = 0; i < N; ++i)
      n *= desc.sizes[i];
    return n;
  }
};

/// Fills `b` with values of the kernel's type: small random ones, or
/// `constant` when given.
template <int N>
void fill(Buffer<N> &b, KernelType t, unsigned seed, double constant = NAN) {
  int64_t n = b.elements();
  for (int64_t i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    float x = std::isnan(constant) ? float((seed >> 8) * (1.0 / (1 << 24)) - 0.5)
                                   : float(constant);
    if (t == KernelType::f32)
      std::memcpy(b.bytes.data() + 4 * i, &x, 4);
    else {
      uint16_t h = toBf16(x);
      std::memcpy(b.bytes.data() + 2 * i, &h, 2);
    }
  }
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

/// The compiled entry of a calibrated call; every rank fails when the
/// library lacks it.
void *kernelEntry(void *library, KernelPass p, KernelType t, KernelMask m,
                  int64_t s) {
  std::string name = "_mlir_ciface_" + functionName(p, t, m, s);
  void *entry = dlsym(library, name.c_str());
  if (!entry)
    fail(name + " is not in the kernel library: rebuild "
                "cp-calibrate-kernels.so");
  return entry;
}

/// Seconds per call of every calibrated kernel, every rank calling at once.
void measureKernels(void *library, MachineProfile &profile) {
  using P = void *;
  for (KernelType t : {KernelType::f32, KernelType::bf16})
    for (KernelMask m : {KernelMask::none, KernelMask::causal}) {
      llvm::SmallVector<std::pair<double, double>> forward, backward;
      for (int64_t s : kLengths) {
        int64_t heads = headsAt(s);
        int64_t shape[4] = {1, heads, s, kHeadDim};
        int64_t rows[3] = {1, heads, s};
        int64_t bytes = t == KernelType::f32 ? 4 : 2;
        Buffer<4> q(shape, bytes), k(shape, bytes), v(shape, bytes),
            o(shape, bytes), dout(shape, bytes), dq(shape, 4), dk(shape, 4),
            dv(shape, 4);
        Buffer<3> lse(rows, 4);
        fill(q, t, 1);
        fill(k, t, 2);
        fill(v, t, 3);
        fill(o, t, 4);
        fill(dout, t, 5);
        // Rows whose softmax sums to about one: no overflow, no denormals.
        fill(lse, KernelType::f32, 6, std::log(double(s)));
        // Fewer repeats for the larger calls: the whole run stays short.
        int repeats = s >= 2048 ? 3 : 7;
        auto fwd = reinterpret_cast<void (*)(P, P, P, P, P)>(
            kernelEntry(library, KernelPass::forward, t, m, s));
        auto bwd = reinterpret_cast<void (*)(P, P, P, P, P, P, P, P, P)>(
            kernelEntry(library, KernelPass::backward, t, m, s));
        double f = timeTogether(repeats, [&] {
          fwd(&q.desc, &k.desc, &v.desc, &o.desc, &lse.desc);
        });
        fill(lse, KernelType::f32, 6, std::log(double(s)));
        double b = timeTogether(repeats, [&] {
          bwd(&q.desc, &k.desc, &v.desc, &o.desc, &lse.desc, &dout.desc,
              &dq.desc, &dk.desc, &dv.desc);
        });
        forward.push_back({forwardFlopsPerHead(m, s), f / heads});
        backward.push_back({forwardFlopsPerHead(m, s), b / heads});
      }
      profile.kernels[{KernelPass::forward, t, m}] =
          MeasuredCurve(std::move(forward));
      profile.kernels[{KernelPass::backward, t, m}] =
          MeasuredCurve(std::move(backward));
    }
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

/// The runtime group of consecutive ranks of size `g` this rank belongs
/// to: the last axis of a [P/g, g] grid (the whole group when g = P).
int64_t groupOf(int64_t g) {
  int64_t p = worldSize();
  std::string name = "cp_calibrate_" + std::to_string(g);
  std::vector<int8_t> nameBytes(name.begin(), name.end());
  nameBytes.push_back(0);
  std::vector<int64_t> spec = g == p ? std::vector<int64_t>{1, p, 1, 0}
                                     : std::vector<int64_t>{2, p / g, g, 1, 1};
  Descriptor<1> n{nameBytes.data(), nameBytes.data(), 0,
                  {int64_t(nameBytes.size())}, {1}};
  Descriptor<1> s{spec.data(), spec.data(), 0, {int64_t(spec.size())}, {1}};
  return cp_rt_group(1, &n, 1, &s);
}

/// Elements of the input buffer for which one call of `kind` in a group of
/// `g` sends about `target` bytes from each rank (f32), rounded so that
/// every split is even.
int64_t inputElements(ProfiledCollective kind, int64_t g, int64_t target) {
  int64_t unit = 2 * g; // relayout halves, all-to-all and reduce-scatter splits
  auto round = [&](double elements) {
    return std::max<int64_t>(unit, int64_t(elements / unit) * unit);
  };
  double elements = target / 4.0;
  switch (kind) {
  case ProfiledCollective::all_gather:
    return round(elements / (g - 1)); // every other rank gets the input
  case ProfiledCollective::all_to_all:
  case ProfiledCollective::reduce_scatter:
    return round(elements * g / (g - 1)); // (g-1)/g of it leaves
  case ProfiledCollective::shift:
  case ProfiledCollective::exchange:
    return round(elements);
  case ProfiledCollective::relayout:
    return round(elements * 2); // about half of it moves
  }
  return round(elements);
}

cp_rt_collective counterOf(ProfiledCollective kind) {
  switch (kind) {
  case ProfiledCollective::all_gather:
    return CP_RT_ALL_GATHER;
  case ProfiledCollective::all_to_all:
    return CP_RT_ALL_TO_ALL;
  case ProfiledCollective::reduce_scatter:
    return CP_RT_REDUCE_SCATTER;
  case ProfiledCollective::shift:
    return CP_RT_SHIFT;
  case ProfiledCollective::exchange:
    return CP_RT_EXCHANGE;
  case ProfiledCollective::relayout:
    return CP_RT_RELAYOUT;
  }
  return CP_RT_SHIFT;
}

/// One call of `kind` on `group` (of size g) from `in` (n elements).
void callCollective(ProfiledCollective kind, int64_t group, int64_t g,
                    Buffer<1> &in, Buffer<1> &out) {
  switch (kind) {
  case ProfiledCollective::all_gather:
    return cp_rt_all_gather_f32(group, 1, &in.desc, 1, &out.desc, 0);
  case ProfiledCollective::all_to_all:
    return cp_rt_all_to_all_f32(group, 1, &in.desc, 1, &out.desc, 0, 0);
  case ProfiledCollective::reduce_scatter:
    return cp_rt_reduce_scatter_f32(group, 1, &in.desc, 1, &out.desc, 0);
  case ProfiledCollective::shift:
    return cp_rt_shift_f32(group, 1, &in.desc, 1, &out.desc, 1);
  case ProfiledCollective::exchange:
    return cp_rt_exchange_mirror_f32(group, 1, &in.desc, 1, &out.desc);
  case ProfiledCollective::relayout:
    return cp_rt_relayout_f32(group, 1, &in.desc, 1, &out.desc, 0,
                              CP_RT_CONTIGUOUS, CP_RT_ZIGZAG);
  }
}

int64_t outputElements(ProfiledCollective kind, int64_t g, int64_t n) {
  if (kind == ProfiledCollective::all_gather)
    return n * g;
  if (kind == ProfiledCollective::reduce_scatter)
    return n / g;
  return n;
}

/// Message sizes per rank and call: 4 KiB to 16 MiB.
constexpr int64_t kMessageBytes[] = {4 << 10,   16 << 10, 64 << 10, 256 << 10,
                                     1 << 20,   4 << 20,  16 << 20};

void measureCollectives(MachineProfile &profile) {
  int64_t p = worldSize();
  for (int64_t g = 2; g <= p; ++g) {
    if (p % g)
      continue;
    int64_t group = groupOf(g);
    for (ProfiledCollective kind : kProfiledCollectives) {
      llvm::SmallVector<std::pair<double, double>> points, following;
      for (int64_t target : kMessageBytes) {
        int64_t n = inputElements(kind, g, target);
        int64_t inShape[1] = {n}, outShape[1] = {outputElements(kind, g, n)};
        Buffer<1> in(inShape, 4), out(outShape, 4);
        fill(in, KernelType::f32, 7);
        cp_rt_reset_counters();
        callCollective(kind, group, g, in, out);
        int64_t sent = cp_rt_bytes_sent(counterOf(kind)), most = 0;
        MPI_Allreduce(&sent, &most, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
        int repeats = target >= (4 << 20) ? 3 : 7;
        double seconds = timeTogether(
            repeats, [&] { callCollective(kind, group, g, in, out); });
        // A burst of kBurst calls back to back, as a scheme issues them:
        // the calls after the first find their partners there.
        constexpr int kBurst = 4;
        double burst = timeTogether(repeats, [&] {
          for (int i = 0; i < kBurst; ++i)
            callCollective(kind, group, g, in, out);
        });
        double next =
            std::max((burst - seconds) / (kBurst - 1), 0.01 * seconds);
        if (most > 0 && (points.empty() || most > points.back().first)) {
          points.push_back({double(most), seconds});
          following.push_back({double(most), next});
        }
      }
      // A larger message is never faster: a sample slowed by the host
      // (a rank descheduled) is lowered to the next size's time.
      for (auto *curve : {&points, &following})
        for (size_t i = curve->size(); i-- > 1;)
          (*curve)[i - 1].second =
              std::min((*curve)[i - 1].second, (*curve)[i].second);
      if (points.size() >= 2) {
        profile.collectives[{kind, g, false}] = MeasuredCurve(std::move(points));
        profile.collectives[{kind, g, true}] =
            MeasuredCurve(std::move(following));
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// Overlap and memory
//===----------------------------------------------------------------------===//

/// Arithmetic on a small array for about `iterations` steps.
double computeFor(int64_t iterations) {
  volatile double sink = 0;
  double acc[8] = {1, 1, 1, 1, 1, 1, 1, 1};
  for (int64_t i = 0; i < iterations; ++i)
    for (double &a : acc)
      a = a * 0.999999 + 1e-6;
  for (double a : acc)
    sink = sink + a;
  return sink;
}

/// The fraction of a ring step's shifts that computation running while
/// they are in flight hides: K and V (2 MiB each) shifted, computation
/// about as long as the two, then the wait. Each sample times the three
/// back to back (shifts alone, computation alone, both) and estimates
/// (shifts + compute - both) / min(shifts, compute); the median of the
/// samples, in [0, 1].
double measureOverlap() {
  int64_t p = worldSize();
  if (p < 2)
    return 0;
  int64_t group = groupOf(p);
  int64_t shape[1] = {(2 << 20) / 4};
  Buffer<1> k(shape, 4), v(shape, 4), kNext(shape, 4), vNext(shape, 4);
  auto shifts = [&] {
    int64_t a = cp_rt_shift_start_f32(group, 1, &k.desc, 1, &kNext.desc, 1);
    int64_t b = cp_rt_shift_start_f32(group, 1, &v.desc, 1, &vNext.desc, 1);
    cp_rt_wait(a);
    cp_rt_wait(b);
  };
  double shift = timeTogether(5, shifts);
  // Computation about as long as the shifts.
  int64_t iterations = 1 << 16;
  double unit = timeTogether(3, [&] { computeFor(iterations); });
  iterations = std::max<int64_t>(
      1, int64_t(double(iterations) * shift / std::max(unit, 1e-9)));
  std::vector<double> estimates;
  for (int sample = 0; sample < 15; ++sample) {
    double alone = timeTogether(1, shifts);
    double compute = timeTogether(1, [&] { computeFor(iterations); });
    double both = timeTogether(1, [&] {
      int64_t a = cp_rt_shift_start_f32(group, 1, &k.desc, 1, &kNext.desc, 1);
      int64_t b = cp_rt_shift_start_f32(group, 1, &v.desc, 1, &vNext.desc, 1);
      computeFor(iterations);
      cp_rt_wait(a);
      cp_rt_wait(b);
    });
    estimates.push_back((alone + compute - both) /
                        std::max(std::min(alone, compute), 1e-9));
  }
  std::sort(estimates.begin(), estimates.end());
  return std::clamp(estimates[estimates.size() / 2], 0.0, 1.0);
}

/// When the ranks of a node outnumber its cores: the share of the cores
/// that ranks waiting in the runtime leave to busy ones. Rank r of a node
/// makes (r + 1) k calls of the forward f32 causal kernel at S = 512, then
/// waits for the others; against k calls on every rank, that is between
/// max_calls * t (waiting ranks keep their cores: 0) and the cores divided
/// among the ranks still running (sharedCoresFinish: 1).
double measureIdleCoreReuse(void *library, int perNode, long cores) {
  double sharing = double(perNode) / double(std::max(cores, 1L));
  if (sharing <= 1)
    return 1; // no rank shares a core: the figure is not used
  using P = void *;
  constexpr int64_t s = 512, k = 2;
  int64_t shape[4] = {1, headsAt(s), s, kHeadDim};
  int64_t rows[3] = {1, headsAt(s), s};
  Buffer<4> q(shape, 4), kk(shape, 4), v(shape, 4), o(shape, 4);
  Buffer<3> lse(rows, 4);
  fill(q, KernelType::f32, 1);
  fill(kk, KernelType::f32, 2);
  fill(v, KernelType::f32, 3);
  auto fwd = reinterpret_cast<void (*)(P, P, P, P, P)>(kernelEntry(
      library, KernelPass::forward, KernelType::f32, KernelMask::causal, s));
  // The calls, then a runtime collective: ranks that finish first wait in
  // it as they wait in a program (the runtime's wait, not MPI's).
  int64_t group = groupOf(worldSize());
  int64_t one[1] = {2 * worldSize()}, all[1] = {2 * worldSize() * worldSize()};
  Buffer<1> token(one, 4), tokens(all, 4);
  auto calls = [&](int64_t n) {
    for (int64_t i = 0; i < n; ++i)
      fwd(&q.desc, &kk.desc, &v.desc, &o.desc, &lse.desc);
    cp_rt_all_gather_f32(group, 1, &token.desc, 1, &tokens.desc, 0);
  };
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                      &node);
  int local = 0;
  MPI_Comm_rank(node, &local);
  MPI_Comm_free(&node);
  // Each sample times both back to back and places the uneven run; the
  // median of the samples (the host's scheduling varies from one to the
  // next).
  double most = double(perNode) * k;
  std::vector<double> estimates;
  for (int sample = 0; sample < 15; ++sample) {
    double call = timeTogether(1, [&] { calls(k); }) / k;
    double uneven = timeTogether(1, [&] { calls((local + 1) * k); });
    double kept = most * call;
    llvm::SmallVector<double> coreSeconds;
    for (int r = 0; r < perNode; ++r)
      coreSeconds.push_back(double(r + 1) * k * call / sharing);
    double given = sharedCoresFinish(coreSeconds, perNode, cores);
    estimates.push_back(kept <= given ? 1.0
                                      : (kept - uneven) / (kept - given));
  }
  std::sort(estimates.begin(), estimates.end());
  return std::clamp(estimates[estimates.size() / 2], 0.0, 1.0);
}

/// Bytes per second one rank copies (read + write) while every rank does.
double measureMemoryBandwidth() {
  int64_t shape[1] = {int64_t(64) << 20};
  Buffer<1> a(shape, 1), b(shape, 1);
  std::memset(a.bytes.data(), 1, a.bytes.size());
  double seconds = timeTogether(3, [&] {
    std::memcpy(b.bytes.data(), a.bytes.data(), a.bytes.size());
  });
  return 2.0 * double(a.bytes.size()) / seconds;
}

//===----------------------------------------------------------------------===//
// Where it runs
//===----------------------------------------------------------------------===//

std::string cpuModel() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line))
    if (line.rfind("model name", 0) == 0) {
      size_t colon = line.find(':');
      if (colon != std::string::npos)
        return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  return "unknown CPU";
}

std::string runtimeName() {
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(version, &length);
  std::string text(version, length);
  text = text.substr(0, text.find('\n'));
  for (char &c : text)
    if (c == '\t' || c == '#')
      c = ' ';
  while (!text.empty() && text.back() == ' ')
    text.pop_back();
  return "cp_runtime over MPI (" + text + ")";
}

std::string utcDate() {
  std::time_t now = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return text;
}

/// The kernel library next to this executable's directory: ../lib.
std::string defaultKernels() {
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0)
    return "cp-calibrate-kernels.so";
  std::string path(self, n);
  path = path.substr(0, path.rfind('/'));
  return path + "/../lib/cp-calibrate-kernels.so";
}

/// Writes `text` to `path` (stdout when empty); what went wrong, if anything.
std::optional<std::string> writeText(const std::string &path,
                                     llvm::StringRef text) {
  if (path.empty()) {
    llvm::outs() << text;
    return std::nullopt;
  }
  std::error_code error;
  llvm::raw_fd_ostream file(path, error);
  if (error)
    return "cannot write " + path + ": " + error.message();
  file << text;
  return std::nullopt;
}

void usage(FILE *out) {
  std::fprintf(out,
               "usage: mpirun -n P cp-calibrate [-o FILE] [--kernels LIB.so]\n"
               "       cp-calibrate --emit-kernels [-o FILE.mlir]\n"
               "       cp-calibrate --print-profile FILE\n"
               "Measures a machine profile on the P ranks it runs on and writes "
               "it to FILE\n(default: stdout) for "
               "cp-choose-scheme{machine=FILE}. --emit-kernels prints\nthe "
               "kernel calls it times (MLIR); --print-profile reads FILE and "
               "writes it back\nas cp-calibrate would (a check that it "
               "parses).\n");
}

} // namespace

int main(int argc, char **argv) {
  std::string output, kernels;
  bool emit = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--emit-kernels") {
      emit = true;
      continue;
    }
    if (a == "--print-profile" && i + 1 < argc) {
      llvm::Expected<MachineProfile> profile = MachineProfile::load(argv[i + 1]);
      if (!profile) {
        llvm::errs() << "cp-calibrate: machine profile '" << argv[i + 1]
                     << "': " << llvm::toString(profile.takeError()) << "\n";
        return 1;
      }
      profile->print(llvm::outs());
      return 0;
    }
    if (a == "-o" && i + 1 < argc)
      output = argv[++i];
    else if (a == "--kernels" && i + 1 < argc)
      kernels = argv[++i];
    else if (a == "-h" || a == "--help") {
      usage(stdout);
      return 0;
    } else {
      std::fprintf(stderr, "cp-calibrate: unknown argument '%s'\n", a.c_str());
      usage(stderr);
      return 2;
    }
  }
  if (emit) {
    std::string text;
    llvm::raw_string_ostream os(text);
    emitKernels(os);
    if (std::optional<std::string> error = writeText(output, os.str())) {
      std::fprintf(stderr, "cp-calibrate: %s\n", error->c_str());
      return 1;
    }
    return 0;
  }
  if (kernels.empty())
    kernels = defaultKernels();

  cp_rt_init(&argc, &argv);
  auto start = std::chrono::steady_clock::now();
  void *library = dlopen(kernels.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!library)
    fail("cannot load the kernel library " + kernels + ": " + dlerror());

  MachineProfile profile;
  int64_t p = worldSize();
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                      &node);
  int perNode = 1;
  MPI_Comm_size(node, &perNode);
  MPI_Comm_free(&node);
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  char host[256] = "unknown";
  gethostname(host, sizeof(host) - 1);
  profile.machine = std::string(host) + ": " + cpuModel() + ", " +
                    std::to_string(cores) + " cores";
  profile.runtime = runtimeName();
  profile.date = utcDate();
  profile.ranks = p;
  profile.ranksPerNode = perNode;
  profile.cores = std::max<long>(1, cores);
  profile.memory = double(sysconf(_SC_PHYS_PAGES)) *
                   double(sysconf(_SC_PAGESIZE)) / perNode;
  profile.kernelHeadDim = kHeadDim;

  measureKernels(library, profile);
  measureCollectives(profile);
  // Ranks that share cores overlap nothing: a shift over shared memory is
  // copies by the ranks themselves, and no core is left over for them
  // while every rank computes. Measured, that case gives 0 or 1 by how the
  // host happens to schedule the ranks.
  profile.overlap = perNode > cores ? 0.0 : measureOverlap();
  profile.idleCoreReuse = measureIdleCoreReuse(library, perNode, cores);
  profile.memoryBandwidth = measureMemoryBandwidth();

  if (worldRank() == 0) {
    std::string text;
    llvm::raw_string_ostream os(text);
    profile.print(os);
    if (std::optional<std::string> error = writeText(output, os.str()))
      fail(*error);
    std::chrono::duration<double> took =
        std::chrono::steady_clock::now() - start;
    std::fprintf(stderr,
                 "cp-calibrate: %lld ranks, %zu kernel and %zu collective "
                 "curves, overlap %.2f, in %.1f s%s%s\n",
                 (long long)p, profile.kernels.size(),
                 profile.collectives.size(), profile.overlap, took.count(),
                 output.empty() ? "" : "; wrote ", output.c_str());
  }
  cp_rt_finalize();
  return 0;
}
