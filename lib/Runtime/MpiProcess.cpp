//===- MpiProcess.cpp - this process's MPI, and failing on one rank -------===//

#include "MpiProcess.h"

#include <cstdio>
#include <cstdlib>
#include <ctime>

using namespace cp::runtime;

namespace {
int worldRank = -1;
int worldProcesses = 0;

void finalizeAtExit() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized)
    MPI_Finalize();
}
} // namespace

int cp::runtime::ensureMpi() {
  if (worldRank >= 0)
    return worldRank;
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) !=
        MPI_SUCCESS) {
      std::fprintf(stderr, "cp-runtime: MPI_Init_thread failed\n");
      std::exit(1);
    }
    std::atexit(finalizeAtExit);
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &worldRank);
  MPI_Comm_size(MPI_COMM_WORLD, &worldProcesses);
  return worldRank;
}

int cp::runtime::worldSize() {
  ensureMpi();
  return worldProcesses;
}

// MPI_Abort has the launcher kill every process at once; a line written to
// stderr just before may still sit in the pipe to the launcher's proxy and
// be lost with it. Give the proxy a moment to forward it.
void cp::runtime::abortJob() {
  timespec pause{0, 500 * 1000 * 1000}; // 0.5 s
  nanosleep(&pause, nullptr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::exit(1);
}

void cp::runtime::failHere(const std::string &call, const std::string &reason) {
  std::fprintf(stderr, "cp-runtime: rank %d: %s: %s\n", worldRank, call.c_str(),
               reason.c_str());
  std::fflush(stderr);
  abortJob();
}

void cp::runtime::checkMpi(int code, const std::string &call,
                           const char *mpiFunction) {
  if (code == MPI_SUCCESS)
    return;
  char reason[MPI_MAX_ERROR_STRING] = {0};
  int length = 0;
  MPI_Error_string(code, reason, &length);
  failHere(call, std::string(mpiFunction) + " failed: " + reason);
}
