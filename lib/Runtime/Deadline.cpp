//===- Deadline.cpp - bounded waits for peers, and the fault hook ---------===//

#include "Deadline.h"

#include "MpiProcess.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <unistd.h>

using namespace cp::runtime;

namespace {

double readTimeLimit() {
  const char *text = std::getenv("CP_RT_TIMEOUT_S");
  if (!text || !*text)
    return 600;
  char *end = nullptr;
  double seconds = std::strtod(text, &end);
  if (end == text || *end || !(seconds >= 0)) {
    std::fprintf(stderr,
                 "cp-runtime: CP_RT_TIMEOUT_S='%s' is not a number of "
                 "seconds >= 0; using 600\n",
                 text);
    return 600;
  }
  return seconds;
}

std::string secondsText(double seconds) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", seconds);
  return text;
}

void pauseFor(long microseconds) {
  timespec pause{0, microseconds * 1000};
  nanosleep(&pause, nullptr);
}

/// The ranks on this node: the launcher's count (MPICH's hydra, Open MPI),
/// or every rank when it gives none.
long ranksOnNode() {
  for (const char *name : {"MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE"})
    if (const char *text = std::getenv(name))
      if (long ranks = std::atol(text); ranks > 0)
        return ranks;
  return worldSize();
}

/// Whether a waiting rank should leave its core at once: CP_RT_WAIT=sleep,
/// or, by default, when this node's ranks outnumber its cores (a spinning
/// rank then takes the core a peer it waits for needs). CP_RT_WAIT=spin
/// spins first whatever the node.
bool sleepAtOnce() {
  static const bool atOnce = [] {
    const char *mode = std::getenv("CP_RT_WAIT");
    if (mode && std::strcmp(mode, "sleep") == 0)
      return true;
    if (mode && std::strcmp(mode, "spin") == 0)
      return false;
    if (mode && *mode)
      std::fprintf(stderr,
                   "cp-runtime: CP_RT_WAIT='%s' is not spin or sleep; "
                   "choosing by the node\n",
                   mode);
    return ranksOnNode() > sysconf(_SC_NPROCESSORS_ONLN);
  }();
  return atOnce;
}

struct Fault {
  enum Action { None, Kill, Stall } action = None;
  int rank = -1;
  long call = 0;
};

Fault readFault() {
  Fault fault;
  const char *text = std::getenv("CP_RT_FAULT");
  if (!text || !*text)
    return fault;
  char action[16] = {0};
  int rank = -1;
  long call = 0;
  int consumed = 0;
  if (std::sscanf(text, "%15[a-z]:%d:%ld%n", action, &rank, &call,
                  &consumed) != 3 ||
      text[consumed] != '\0' || rank < 0 || call < 1 ||
      (std::strcmp(action, "kill") != 0 && std::strcmp(action, "stall") != 0)) {
    std::fprintf(stderr,
                 "cp-runtime: CP_RT_FAULT='%s' is not kill|stall:RANK:N "
                 "(N >= 1); ignored\n",
                 text);
    return fault;
  }
  fault.action = std::strcmp(action, "kill") == 0 ? Fault::Kill : Fault::Stall;
  fault.rank = rank;
  fault.call = call;
  return fault;
}

} // namespace

double cp::runtime::collectiveTimeLimit() {
  static const double limit = readTimeLimit();
  return limit;
}

void cp::runtime::waitOrFail(int count, MPI_Request *requests,
                             const std::string &call, const std::string &what) {
  double limit = collectiveTimeLimit();
  double start = MPI_Wtime();
  for (long polls = 0;; ++polls) {
    int done = 0;
    checkMpi(MPI_Testall(count, requests, &done, MPI_STATUSES_IGNORE), call,
             "MPI_Testall");
    if (done)
      return;
    double waited = MPI_Wtime() - start;
    if (limit > 0 && waited > limit)
      failHere(call, what + " did not complete within " + secondsText(limit) +
                         " s; a rank of the group has died or stalled (set "
                         "CP_RT_TIMEOUT_S to wait longer)");
    // Ranks with a core each spin for the first millisecond (short
    // messages), then poll every 200 us; ranks sharing cores poll every
    // 50 us from the start.
    if (sleepAtOnce())
      pauseFor(50);
    else if (waited > 1e-3)
      pauseFor(200);
  }
}

void cp::runtime::faultPoint(const std::string &call) {
  static const Fault fault = readFault();
  static long calls = 0;
  if (fault.action == Fault::None || ensureMpi() != fault.rank ||
      ++calls != fault.call)
    return;
  std::fprintf(stderr, "cp-runtime: rank %d: %s: CP_RT_FAULT %s here\n",
               fault.rank, call.c_str(),
               fault.action == Fault::Kill ? "kills the process" : "stalls");
  std::fflush(stderr);
  if (fault.action == Fault::Kill)
    raise(SIGKILL);
  for (;;)
    pause();
}
