//===- MpiProcess.h - this process's MPI, and failing on one rank -*- C++ -*-===//
//
// The bottom of the host runtime: MPI initialized once per process, and the
// way to fail on this rank alone (an MPI call failed, or a wait ran out):
// print "cp-runtime: rank R: call: reason" and abort the job. Groups and
// failing on every rank of a group (Communicator.h) and bounded waits
// (Deadline.h) are built on it.
//
//===----------------------------------------------------------------------===//

#ifndef CP_RUNTIME_MPIPROCESS_H
#define CP_RUNTIME_MPIPROCESS_H

#include <mpi.h>

#include <string>

namespace cp::runtime {

/// Initializes MPI when nobody has; returns this process's world rank.
int ensureMpi();

/// The number of processes in MPI_COMM_WORLD (ensureMpi first).
int worldSize();

/// Ends every rank after printing "cp-runtime: rank R: call: reason" here.
[[noreturn]] void failHere(const std::string &call, const std::string &reason);

/// Checks an MPI return code; on failure ends every rank with MPI's reason.
void checkMpi(int code, const std::string &call, const char *mpiFunction);

/// Has the launcher end every process (after giving a line just written to
/// stderr time to reach it).
[[noreturn]] void abortJob();

} // namespace cp::runtime

#endif // CP_RUNTIME_MPIPROCESS_H
