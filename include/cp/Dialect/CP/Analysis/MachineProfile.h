//===- MachineProfile.h - a machine's measured figures ---------*- C++ -*-===//
//
// What cp-calibrate measures on the ranks and runtime a program will run
// on, and cp-choose-scheme{machine=FILE} costs schemes with: the local
// attention kernel's time per call (forward and backward, f32 and bf16,
// unmasked and masked, at several sizes), each collective's time per call
// over the message sizes the schemes send, for every group size that
// occurs, how far a shift overlaps computation, and the memory figures.
//
// The file is text, one `key = value` per line, `#` comments; tables are
// `x:seconds` pairs. docs/Schemes.md ("Machine profiles") describes every
// key. print() writes what parse() reads back unchanged.
//
//===----------------------------------------------------------------------===//

#ifndef CP_DIALECT_CP_ANALYSIS_MACHINEPROFILE_H
#define CP_DIALECT_CP_ANALYSIS_MACHINEPROFILE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

namespace mlir {
namespace cp {

/// Measured (x, seconds) points with strictly increasing x, at least two.
/// seconds(x) interpolates linearly between points; outside them it follows
/// the nearest segment's line, never faster than the nearest point's rate
/// (seconds / x) and never slower beyond the last point than that point.
class MeasuredCurve {
public:
  MeasuredCurve() = default;
  explicit MeasuredCurve(llvm::SmallVector<std::pair<double, double>> points)
      : points(std::move(points)) {}
  llvm::ArrayRef<std::pair<double, double>> getPoints() const {
    return points;
  }
  bool empty() const { return points.empty(); }
  /// Seconds at `x` (0 for x <= 0).
  double seconds(double x) const;

private:
  llvm::SmallVector<std::pair<double, double>> points;
};

/// The collectives a profile times, as the runtime names them.
enum class ProfiledCollective {
  all_gather,
  all_to_all,
  reduce_scatter,
  shift,
  exchange,
  relayout
};
llvm::StringRef stringifyProfiledCollective(ProfiledCollective kind);
constexpr ProfiledCollective kProfiledCollectives[] = {
    ProfiledCollective::all_gather,     ProfiledCollective::all_to_all,
    ProfiledCollective::reduce_scatter, ProfiledCollective::shift,
    ProfiledCollective::exchange,       ProfiledCollective::relayout};

/// The local kernel variants a profile times.
enum class KernelPass { forward, backward };
enum class KernelType { f32, bf16 };
/// Unmasked calls, and calls under a mask (timed causal).
enum class KernelMask { none, causal };

struct MachineProfile {
  /// The profile's format version; parse() refuses another.
  static constexpr int64_t kFormat = 1;

  /// Where it was measured: free text, recorded in cp.cost.
  std::string machine, runtime, date;
  /// Ranks cp-calibrate ran on: the CP group size this profile is for.
  int64_t ranks = 0;
  /// Ranks sharing one node, and the cores of that node they run on.
  int64_t ranksPerNode = 0, cores = 0;
  /// Bytes of memory per rank; bytes/s one rank copies while all copy.
  double memory = 0, memoryBandwidth = 0;
  /// Fraction of a shift's time hidden by computation that runs while it
  /// is in flight (0: none, 1: all), measured.
  double overlap = 0;
  /// When more ranks than cores share a node: the fraction of the cores
  /// that ranks waiting in the runtime leave to the busy ones (0: waiting
  /// ranks keep their share, 1: the busy ones get it all), measured.
  double idleCoreReuse = 0;
  /// Head dimension (D = Dv) of the calibrated kernel calls.
  int64_t kernelHeadDim = 0;

  /// Kernel seconds per head of a call against the call's forward FLOPs
  /// per head (a backward entry: the FLOPs of the forward it
  /// differentiates).
  std::map<std::tuple<KernelPass, KernelType, KernelMask>, MeasuredCurve>
      kernels;
  /// Collective seconds per call against the bytes one rank sends in it,
  /// per group size: a burst's first call (`following` false: every rank
  /// enters it from a barrier, so it pays for the ranks meeting), and each
  /// call after it in a burst of calls issued back to back (true).
  std::map<std::tuple<ProfiledCollective, int64_t, bool>, MeasuredCurve>
      collectives;

  /// Where the profile was read from (not part of the text).
  std::string path;

  const MeasuredCurve *kernel(KernelPass pass, KernelType type,
                              KernelMask mask) const;
  const MeasuredCurve *collective(ProfiledCollective kind, int64_t groupSize,
                                  bool following = false) const;
  /// Seconds of a burst of `calls` calls of `kind` in groups of
  /// `groupSize`, each sending `bytes`; std::nullopt when the profile has
  /// no timings for that group size.
  std::optional<double> burstSeconds(ProfiledCollective kind,
                                     int64_t groupSize, double calls,
                                     double bytes) const;

  /// The profile in `text`; an error names the line and what is wrong.
  static llvm::Expected<MachineProfile> parse(llvm::StringRef text);
  /// The profile in file `path`; an error says what is wrong (unreadable,
  /// or parse()'s message).
  static llvm::Expected<MachineProfile> load(llvm::StringRef path);
  void print(llvm::raw_ostream &os) const;
};

/// When the ranks that share a node's cores are perfectly scheduled: the
/// seconds until the last of them finishes, where rank r needs
/// `coreSeconds[r]` of one core's time, consecutive ranks share a node
/// `ranksPerNode` at a time, and a node's `cores` are divided evenly among
/// the ranks still running there (k running ranks each get min(1,
/// cores / k) of a core). A rank that finishes early leaves its share to
/// the others.
double sharedCoresFinish(llvm::ArrayRef<double> coreSeconds,
                         int64_t ranksPerNode, int64_t cores);

} // namespace cp
} // namespace mlir

#endif // CP_DIALECT_CP_ANALYSIS_MACHINEPROFILE_H
