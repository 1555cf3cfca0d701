//===- dynamic-gather-driver.cpp - run a compiled dynamic all-gather ------===//
//
// Calls `_mlir_ciface_gather(in, out)` of a shared object compiled from
// Inputs/dynamic-gather.mlir (cp.all_gather of tensor<?x4xf32> along dim 0)
// with this rank's number of rows taken from a comma-separated list, and
// checks the gathered rows when every rank passes the same count. Ranks that
// disagree must be stopped by libcp_runtime with a message on every rank.
//
//===----------------------------------------------------------------------===//

#include "cp/Runtime/cp_runtime.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

namespace {
struct Descriptor2D {
  float *allocated, *aligned;
  int64_t offset, sizes[2], strides[2];
};

float valueAt(int rank, int64_t row, int64_t col) {
  return static_cast<float>(rank * 1000 + row * 10 + col);
}
} // namespace

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s LIB.so ROWS,ROWS,... (one per rank)\n",
                 argv[0]);
    return 2;
  }
  cp_rt_init(&argc, &argv);
  int rank = cp_rt_world_rank(), size = cp_rt_world_size();
  std::vector<int64_t> rowsPerRank;
  std::stringstream list(argv[2]);
  for (std::string item; std::getline(list, item, ',');)
    rowsPerRank.push_back(std::atoll(item.c_str()));
  if (static_cast<int>(rowsPerRank.size()) != size) {
    std::fprintf(stderr, "give one row count per rank (%d)\n", size);
    return 2;
  }
  void *lib = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
  auto gather = lib ? reinterpret_cast<void (*)(Descriptor2D *, Descriptor2D *)>(
                          dlsym(lib, "_mlir_ciface_gather"))
                    : nullptr;
  if (!gather) {
    std::fprintf(stderr, "cannot load _mlir_ciface_gather from %s\n", argv[1]);
    return 1;
  }
  int64_t rows = rowsPerRank[rank];
  std::vector<float> in(rows * 4), out(rows * 4 * size, -1.0f);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t c = 0; c < 4; ++c)
      in[i * 4 + c] = valueAt(rank, i, c);
  Descriptor2D din{in.data(), in.data(), 0, {rows, 4}, {4, 1}};
  Descriptor2D dout{out.data(), out.data(), 0, {rows * size, 4}, {4, 1}};
  gather(&din, &dout);
  int wrong = 0;
  for (int r = 0; r < size; ++r)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t c = 0; c < 4; ++c)
        wrong += out[(r * rows + i) * 4 + c] != valueAt(r, i, c);
  std::printf("rank %d: gathered %lldx4, %d wrong\n", rank,
              static_cast<long long>(rows * size), wrong);
  cp_rt_finalize();
  return wrong ? 1 : 0;
}
