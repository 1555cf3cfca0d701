//===- Counters.cpp - the runtime's byte and call counters, and trace -----===//
//
// What every collective sent, per kind (cp_rt_bytes_sent, cp_rt_calls),
// and the CP_RT_TRACE lines. The lowest piece of the collectives: the
// algorithms count what they run here, the C ABI reads it.
//
//===----------------------------------------------------------------------===//

#include "Collectives.h"
#include "MpiProcess.h"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace cp::runtime;

namespace {

using Counters = std::array<int64_t, CP_RT_NUM_COLLECTIVES>;
Counters bytesCounter{};
Counters callCounter{};

/// One kind's counter, or the sum over kinds for kind < 0.
int64_t counterOf(const Counters &counters, int kind) {
  if (kind >= 0 && kind < CP_RT_NUM_COLLECTIVES)
    return counters[kind];
  int64_t total = 0;
  for (int64_t c : counters)
    total += c;
  return total;
}

bool traceRequested() {
  const char *value = std::getenv("CP_RT_TRACE");
  return value && *value && std::strcmp(value, "0") != 0;
}

} // namespace

bool cp::runtime::tracing() {
  static const bool enabled = traceRequested();
  return enabled;
}

void cp::runtime::trace(const std::string &line) {
  std::fprintf(stderr, "cp-runtime trace: rank %d: %s\n", ensureMpi(),
               line.c_str());
}

int64_t cp::runtime::countedBytes(int kind) {
  return counterOf(bytesCounter, kind);
}

int64_t cp::runtime::countedCalls(int kind) {
  return counterOf(callCounter, kind);
}

void cp::runtime::resetCounts() {
  bytesCounter.fill(0);
  callCounter.fill(0);
}

void cp::runtime::count(const Call &call) {
  int64_t bytes = call.bytesSent();
  bytesCounter[call.kind] += bytes;
  ++callCounter[call.kind];
  if (tracing())
    trace(call.label + ": " + std::to_string(bytes) + " bytes sent");
}
