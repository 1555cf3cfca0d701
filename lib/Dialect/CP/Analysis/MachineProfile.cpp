//===- MachineProfile.cpp - a machine's measured figures ------------------===//
//
// The profile file's parser and printer, and the interpolation of its
// measured curves.
//
//===----------------------------------------------------------------------===//

#include "cp/Dialect/CP/Analysis/MachineProfile.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::cp;
using llvm::SmallVector;
using llvm::StringRef;

//===----------------------------------------------------------------------===//
// Curves
//===----------------------------------------------------------------------===//

double MeasuredCurve::seconds(double x) const {
  if (x <= 0 || points.empty())
    return 0;
  auto line = [&](size_t i) { // through points i and i + 1
    auto [x0, y0] = points[i];
    auto [x1, y1] = points[i + 1];
    return y0 + (x - x0) * (y1 - y0) / (x1 - x0);
  };
  size_t n = points.size();
  if (x <= points.front().first) {
    // Small calls: the overhead the first segment implies, but never a
    // better rate than the smallest measured call's.
    auto [x0, y0] = points.front();
    return std::max(line(0), y0 * x / x0);
  }
  if (x >= points.back().first) {
    auto [xn, yn] = points.back();
    return std::max(line(n - 2), yn);
  }
  size_t i = 0;
  while (points[i + 1].first < x)
    ++i;
  return line(i);
}

//===----------------------------------------------------------------------===//
// Names
//===----------------------------------------------------------------------===//

StringRef mlir::cp::stringifyProfiledCollective(ProfiledCollective kind) {
  switch (kind) {
  case ProfiledCollective::all_gather:
    return "all_gather";
  case ProfiledCollective::all_to_all:
    return "all_to_all";
  case ProfiledCollective::reduce_scatter:
    return "reduce_scatter";
  case ProfiledCollective::shift:
    return "shift";
  case ProfiledCollective::exchange:
    return "exchange";
  case ProfiledCollective::relayout:
    return "relayout";
  }
  llvm_unreachable("a profiled collective");
}

namespace {

constexpr KernelPass kPasses[] = {KernelPass::forward, KernelPass::backward};
constexpr KernelType kTypes[] = {KernelType::f32, KernelType::bf16};
constexpr KernelMask kMasks[] = {KernelMask::none, KernelMask::causal};

StringRef passName(KernelPass p) {
  return p == KernelPass::forward ? "forward" : "backward";
}
StringRef typeName(KernelType t) { return t == KernelType::f32 ? "f32" : "bf16"; }
StringRef maskName(KernelMask m) {
  return m == KernelMask::none ? "none" : "causal";
}

std::string kernelKey(KernelPass p, KernelType t, KernelMask m) {
  return ("kernel." + passName(p) + "." + typeName(t) + "." + maskName(m))
      .str();
}
std::string collectiveKey(ProfiledCollective kind, int64_t groupSize,
                          bool following) {
  return llvm::formatv("collective.{0}.{1}{2}",
                       stringifyProfiledCollective(kind), groupSize,
                       following ? ".next" : "")
      .str();
}

/// A number that round-trips through text.
std::string formatNumber(double x) {
  return llvm::formatv("{0:e6}", x).str();
}

llvm::Error lineError(unsigned line, const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "line " + llvm::Twine(line) + ": " + message);
}

/// Parses `text` as a finite number; `what` names it in the error.
llvm::Expected<double> parseNumber(StringRef text, unsigned line,
                                   StringRef key) {
  double value;
  if (text.trim().getAsDouble(value) || !std::isfinite(value))
    return lineError(line, "'" + key + "' expects a number, got '" +
                               text.trim() + "'");
  return value;
}

llvm::Expected<MeasuredCurve> parseCurve(StringRef text, unsigned line,
                                         StringRef key) {
  SmallVector<StringRef> pairs;
  text.split(pairs, ' ', -1, /*KeepEmpty=*/false);
  SmallVector<std::pair<double, double>> points;
  for (StringRef pair : pairs) {
    auto [xText, yText] = pair.split(':');
    double x, y;
    if (yText.empty() || xText.getAsDouble(x) || yText.getAsDouble(y) ||
        !std::isfinite(x) || !std::isfinite(y))
      return lineError(line, "'" + key + "' expects points 'x:seconds', got '" +
                                 pair + "'");
    if (x <= 0 || y <= 0)
      return lineError(line, "'" + key + "' has the point '" + pair +
                                 "'; sizes and seconds must be positive");
    if (!points.empty() && x <= points.back().first)
      return lineError(line, "'" + key + "' has the point '" + pair +
                                 "' after size " +
                                 formatNumber(points.back().first) +
                                 "; sizes must increase");
    points.push_back({x, y});
  }
  if (points.size() < 2)
    return lineError(line, "'" + key + "' has " + llvm::Twine(points.size()) +
                               " point(s); a curve needs at least 2");
  return MeasuredCurve(std::move(points));
}

} // namespace

//===----------------------------------------------------------------------===//
// Lookup
//===----------------------------------------------------------------------===//

const MeasuredCurve *MachineProfile::kernel(KernelPass pass, KernelType type,
                                            KernelMask mask) const {
  auto it = kernels.find({pass, type, mask});
  return it == kernels.end() ? nullptr : &it->second;
}

const MeasuredCurve *MachineProfile::collective(ProfiledCollective kind,
                                                int64_t groupSize,
                                                bool following) const {
  auto it = collectives.find({kind, groupSize, following});
  return it == collectives.end() ? nullptr : &it->second;
}

std::optional<double> MachineProfile::burstSeconds(ProfiledCollective kind,
                                                   int64_t groupSize,
                                                   double calls,
                                                   double bytes) const {
  const MeasuredCurve *first = collective(kind, groupSize);
  const MeasuredCurve *next = collective(kind, groupSize, true);
  if (!first || !next)
    return std::nullopt;
  if (calls <= 0 || bytes <= 0)
    return 0.0;
  return first->seconds(bytes) + (calls - 1) * next->seconds(bytes);
}

//===----------------------------------------------------------------------===//
// Text
//===----------------------------------------------------------------------===//

llvm::Expected<MachineProfile> MachineProfile::parse(StringRef text) {
  MachineProfile profile;
  llvm::StringSet<> seen;
  SmallVector<StringRef> lines;
  text.split(lines, '\n');
  for (auto [index, rawLine] : llvm::enumerate(lines)) {
    unsigned line = index + 1;
    StringRef content = rawLine.split('#').first.trim();
    if (content.empty())
      continue;
    auto [keyText, value] = content.split('=');
    StringRef key = keyText.trim();
    value = value.trim();
    if (key.empty() || !content.contains('='))
      return lineError(line, "expected 'key = value', got '" + content + "'");
    if (!seen.insert(key).second)
      return lineError(line, "'" + key + "' is given twice");

    auto number = [&]() { return parseNumber(value, line, key); };
    auto count = [&](int64_t &field) -> llvm::Error {
      llvm::Expected<double> x = number();
      if (!x)
        return x.takeError();
      if (*x < 1 || *x != std::floor(*x))
        return lineError(line, "'" + key + "' expects a positive integer, got '" +
                                   value + "'");
      field = static_cast<int64_t>(*x);
      return llvm::Error::success();
    };
    auto positive = [&](double &field) -> llvm::Error {
      llvm::Expected<double> x = number();
      if (!x)
        return x.takeError();
      if (*x <= 0)
        return lineError(line, "'" + key + "' must be positive, got '" +
                                   value + "'");
      field = *x;
      return llvm::Error::success();
    };

    llvm::Error error = llvm::Error::success();
    if (key == "format") {
      int64_t f = 0;
      error = count(f);
      if (!error && f != kFormat)
        error = lineError(line, "format " + llvm::Twine(f) +
                                    " is not the one this build reads (" +
                                    llvm::Twine(kFormat) +
                                    "); measure it again with cp-calibrate");
    } else if (key == "machine") {
      profile.machine = value.str();
    } else if (key == "runtime") {
      profile.runtime = value.str();
    } else if (key == "date") {
      profile.date = value.str();
    } else if (key == "ranks") {
      error = count(profile.ranks);
    } else if (key == "ranks_per_node") {
      error = count(profile.ranksPerNode);
    } else if (key == "cores") {
      error = count(profile.cores);
    } else if (key == "kernel_head_dim") {
      error = count(profile.kernelHeadDim);
    } else if (key == "memory") {
      error = positive(profile.memory);
    } else if (key == "memory_bandwidth") {
      error = positive(profile.memoryBandwidth);
    } else if (key == "overlap" || key == "idle_core_reuse") {
      llvm::Expected<double> x = number();
      if (!x)
        error = x.takeError();
      else if (*x < 0 || *x > 1)
        error = lineError(line, "'" + key + "' must be between 0 and 1, got '" +
                                    value + "'");
      else
        (key == "overlap" ? profile.overlap : profile.idleCoreReuse) = *x;
    } else if (key.starts_with("kernel.")) {
      bool known = false;
      for (KernelPass p : kPasses)
        for (KernelType t : kTypes)
          for (KernelMask m : kMasks)
            if (key == kernelKey(p, t, m)) {
              known = true;
              llvm::Expected<MeasuredCurve> curve = parseCurve(value, line, key);
              if (!curve)
                return curve.takeError();
              profile.kernels[{p, t, m}] = std::move(*curve);
            }
      if (!known)
        error = lineError(line, "unknown kernel '" + key +
                                    "'; expected kernel.<forward|backward>."
                                    "<f32|bf16>.<none|causal>");
    } else if (key.starts_with("collective.")) {
      StringRef name = key.drop_front(11);
      bool following = name.consume_back(".next");
      auto [kindText, sizeText] = name.rsplit('.');
      const ProfiledCollective *kind =
          llvm::find_if(kProfiledCollectives, [&](ProfiledCollective k) {
            return stringifyProfiledCollective(k) == kindText;
          });
      int64_t groupSize = 0;
      if (kind == std::end(kProfiledCollectives) ||
          sizeText.getAsInteger(10, groupSize) || groupSize < 2)
        error = lineError(
            line, "unknown collective '" + key +
                      "'; expected collective.<all_gather|all_to_all|"
                      "reduce_scatter|shift|exchange|relayout>.<group size "
                      ">= 2>[.next]");
      else {
        llvm::Expected<MeasuredCurve> curve = parseCurve(value, line, key);
        if (!curve)
          return curve.takeError();
        profile.collectives[{*kind, groupSize, following}] = std::move(*curve);
      }
    } else {
      error = lineError(line, "unknown key '" + key + "'");
    }
    if (error)
      return std::move(error);
  }

  auto missing = [](StringRef what) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "no '" + what + "' entry");
  };
  for (StringRef key : {"format", "machine", "runtime", "date", "ranks",
                        "ranks_per_node", "cores", "memory",
                        "memory_bandwidth", "overlap", "idle_core_reuse",
                        "kernel_head_dim"})
    if (!seen.contains(key))
      return missing(key);
  for (KernelPass p : kPasses)
    for (KernelType t : kTypes)
      for (KernelMask m : kMasks)
        if (!profile.kernel(p, t, m))
          return missing(kernelKey(p, t, m));
  if (profile.ranks > 1)
    for (ProfiledCollective kind : kProfiledCollectives)
      for (bool following : {false, true})
        if (!profile.collective(kind, profile.ranks, following))
          return missing(collectiveKey(kind, profile.ranks, following));
  return profile;
}

llvm::Expected<MachineProfile> MachineProfile::load(StringRef path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!file)
    return llvm::createStringError(file.getError(),
                                   "cannot read it: " +
                                       file.getError().message());
  llvm::Expected<MachineProfile> profile = parse((*file)->getBuffer());
  if (profile)
    profile->path = path.str();
  return profile;
}

void MachineProfile::print(llvm::raw_ostream &os) const {
  auto curve = [&](const MeasuredCurve &c) {
    llvm::interleave(
        c.getPoints(), os,
        [&](const std::pair<double, double> &p) {
          os << formatNumber(p.first) << ':' << formatNumber(p.second);
        },
        " ");
  };
  os << "# cp-mlir machine profile (cp-calibrate); read by "
        "cp-choose-scheme{machine=FILE}\n"
     << "format = " << kFormat << "\n"
     << "machine = " << machine << "\n"
     << "runtime = " << runtime << "\n"
     << "date = " << date << "\n"
     << "ranks = " << ranks << "\n"
     << "ranks_per_node = " << ranksPerNode << "\n"
     << "cores = " << cores << "\n"
     << "memory = " << formatNumber(memory) << "\n"
     << "memory_bandwidth = " << formatNumber(memoryBandwidth) << "\n"
     << "overlap = " << formatNumber(overlap) << "\n"
     << "idle_core_reuse = " << formatNumber(idleCoreReuse) << "\n"
     << "kernel_head_dim = " << kernelHeadDim << "\n"
     << "# local attention: forward FLOPs per head : seconds per head\n";
  for (const auto &[key, c] : kernels) {
    auto [p, t, m] = key;
    os << kernelKey(p, t, m) << " = ";
    curve(c);
    os << "\n";
  }
  os << "# collectives: bytes one rank sends per call : seconds per call;\n"
        "# .next: each call after the first of a burst\n";
  for (const auto &[key, c] : collectives) {
    auto [kind, groupSize, following] = key;
    os << collectiveKey(kind, groupSize, following) << " = ";
    curve(c);
    os << "\n";
  }
}

double mlir::cp::sharedCoresFinish(llvm::ArrayRef<double> coreSeconds,
                                   int64_t ranksPerNode, int64_t cores) {
  size_t perNode = static_cast<size_t>(std::max<int64_t>(ranksPerNode, 1));
  double share = static_cast<double>(std::max<int64_t>(cores, 1));
  double last = 0;
  for (size_t first = 0; first < coreSeconds.size(); first += perNode) {
    llvm::SmallVector<double> node(
        coreSeconds.slice(first, std::min(perNode, coreSeconds.size() - first)));
    llvm::sort(node);
    // In order of need: while k ranks run, each gets min(1, cores / k) of
    // a core until the next one is done.
    double now = 0, done = 0;
    for (size_t i = 0; i < node.size(); ++i) {
      double running = static_cast<double>(node.size() - i);
      now += (node[i] - done) / std::min(1.0, share / running);
      done = node[i];
    }
    last = std::max(last, now);
  }
  return last;
}
