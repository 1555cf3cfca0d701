//===- SharedCoresFinish.cpp - the cost model's core sharing vs. a simulation ===//
//
// sharedCoresFinish (MachineProfile.h) gives, in closed form, when the last
// of a node's ranks finishes if the node's cores are divided evenly among
// the ranks still running. This checks it against a step-by-step
// simulation of that sharing (time steps of 1e-4, each running rank
// advancing by its share of a core), for random needs, several nodes and
// core counts, and against the worked example in docs/Schemes.md (4 ranks
// on 2 cores needing 1, 2, 3 and 4: 5.5). Prints one line per mismatch and
// a summary; exits 1 on any mismatch.
//
//===----------------------------------------------------------------------===//

#include "cp/Dialect/CP/Analysis/MachineProfile.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

using namespace mlir::cp;

namespace {

constexpr double kStep = 1e-4;

/// Steps time forward until every rank's need is met.
double simulate(const std::vector<double> &need, int64_t perNode,
                int64_t cores) {
  double last = 0;
  for (size_t first = 0; first < need.size(); first += perNode) {
    std::vector<double> left(need.begin() + first,
                             need.begin() +
                                 std::min(need.size(), first + perNode));
    double now = 0;
    for (;;) {
      int running = 0;
      for (double l : left)
        running += l > 0;
      if (running == 0)
        break;
      double share = std::min(1.0, double(cores) / running);
      for (double &l : left)
        if (l > 0)
          l -= share * kStep;
      now += kStep;
    }
    last = std::max(last, now);
  }
  return last;
}

} // namespace

int main() {
  int cases = 0, mismatches = 0;
  auto check = [&](const std::vector<double> &need, int64_t perNode,
                   int64_t cores, double expected, double tolerance) {
    double got = sharedCoresFinish(need, perNode, cores);
    ++cases;
    if (std::fabs(got - expected) <= tolerance)
      return;
    ++mismatches;
    llvm::outs() << "mismatch: " << need.size() << " ranks, " << perNode
                 << " per node, " << cores << " cores: sharedCoresFinish "
                 << got << ", expected " << expected << "\n";
  };
  check({1, 2, 3, 4}, 4, 2, 5.5, 1e-12);
  check({4, 3, 2, 1}, 4, 2, 5.5, 1e-12);
  check({2, 2, 2, 2}, 4, 2, 4.0, 1e-12);
  check({1, 7}, 2, 2, 7.0, 1e-12); // a core each: the busiest rank
  check({1, 2, 3, 4}, 2, 1, 7.0, 1e-12); // two nodes of one core
  std::mt19937 random(11);
  std::uniform_real_distribution<double> needs(0.05, 1.0);
  for (int64_t ranks : {1, 2, 3, 4, 6, 8})
    for (int64_t perNode : {1, 2, 4, 8})
      for (int64_t cores : {1, 2, 3})
        for (int trial = 0; trial < 4; ++trial) {
          std::vector<double> need;
          for (int64_t r = 0; r < ranks; ++r)
            need.push_back(needs(random));
          // Each simulated rank overshoots by at most one step.
          check(need, perNode, cores, simulate(need, perNode, cores),
                2 * kStep * double(std::min(ranks, perNode)));
        }
  llvm::outs() << "shared cores finish: " << cases << " cases, " << mismatches
               << " mismatches\n";
  return mismatches == 0 ? 0 : 1;
}
