//===- cp-bench-link.cpp - what the cost model needs to know of a host ----===//
//
// Measures, on the MPI ranks it is started on, the figures cp-choose-scheme
// takes as a machine description: the time of one ring shift step of a
// tiny message (latency), the bytes per second a rank sends in a large ring
// shift (bandwidth), and the bytes per second one rank copies through
// memory (the merges' memory bandwidth). Rank 0 prints them as
// `name=value` lines for bench/schemes.sh. Asserts nothing.
//
//===----------------------------------------------------------------------===//

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

/// Seconds per ring shift of `bytes`, best of `repeats`, max over ranks.
double shiftSeconds(size_t bytes, int repeats) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<char> send(bytes, 1), recv(bytes, 0);
  int to = (rank + 1) % size, from = (rank + size - 1) % size;
  double best = 1e30;
  for (int i = 0; i < repeats; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    MPI_Sendrecv(send.data(), static_cast<int>(bytes), MPI_BYTE, to, 7,
                 recv.data(), static_cast<int>(bytes), MPI_BYTE, from, 7,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    double elapsed = MPI_Wtime() - start, slowest = 0;
    MPI_Allreduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    best = std::min(best, slowest);
  }
  return best;
}

/// Bytes per second of a large memcpy on one rank (read + write counted).
double copyBandwidth() {
  size_t bytes = size_t(64) << 20;
  std::vector<char> a(bytes, 1), b(bytes, 0);
  double best = 1e30;
  for (int i = 0; i < 5; ++i) {
    auto start = std::chrono::steady_clock::now();
    std::memcpy(b.data(), a.data(), bytes);
    std::chrono::duration<double> elapsed =
        std::chrono::steady_clock::now() - start;
    best = std::min(best, elapsed.count());
    a[i] = b[bytes - 1 - i]; // keep the copies observable
  }
  return 2.0 * bytes / best;
}

} // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  double latency = shiftSeconds(8, 50);
  size_t large = size_t(8) << 20;
  double transfer = shiftSeconds(large, 10);
  double bandwidth = large / std::max(transfer - latency, 1e-9);
  double memory = copyBandwidth();
  if (rank == 0) {
    std::printf("latency=%.3e\n", latency);
    std::printf("bandwidth=%.3e\n", bandwidth);
    std::printf("memory_bandwidth=%.3e\n", memory);
  }
  MPI_Finalize();
  return 0;
}
