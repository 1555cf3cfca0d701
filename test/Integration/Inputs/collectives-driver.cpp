//===- collectives-driver.cpp - run compiled cp collectives on MPI ranks --===//
//
// Loads a shared object compiled from Inputs/collectives.mlir (`static`) or
// Inputs/collectives-dynamic.mlir (`dynamic`) or Inputs/shard-collectives.mlir
// (`shard`: the same functions written with upstream's shard collectives, all
// but the exchange) and runs it on 3 ranks. `static`: every function on
// x_r[i][j][k] = 1000r + 100i + 10j + k,
// compared element by element with what the op's definition says rank r must
// receive. `dynamic ROWS,ROWS,ROWS`: @gather_dynamic with this rank's row
// count from the list, checked when the counts agree (when they do not, the
// runtime must stop every rank).
//
//===----------------------------------------------------------------------===//

#include "cp/Runtime/cp_runtime.h"
#include "cp/TestSupport/DeviceMirror.h"

#include <dlfcn.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

namespace {

using cp::tools::Descriptor;

template <int R>
Descriptor<R> describe(std::vector<float> &data, std::array<int64_t, R> sizes) {
  return cp::tools::denseDescriptor<R>(data.data(), sizes.data());
}

float input(int64_t rank, int64_t i, int64_t j, int64_t k) {
  return static_cast<float>(1000 * rank + 100 * i + 10 * j + k);
}

void *entry(void *lib, const std::string &name) {
  void *fn = dlsym(lib, ("_mlir_ciface_" + name).c_str());
  if (!fn) {
    std::fprintf(stderr, "missing _mlir_ciface_%s\n", name.c_str());
    std::exit(1);
  }
  return fn;
}

/// Calls `name` on this rank's x (2x6x4) into an output of `outSizes` and
/// counts the elements that differ from `expected(i, j, k)` by more than
/// `tolerance` relative to it (0: exactly).
int runStatic(void *lib, const std::string &name, int rank,
              std::array<int64_t, 3> outSizes,
              std::function<float(int64_t, int64_t, int64_t)> expected,
              float tolerance = 0) {
  std::vector<float> x(2 * 6 * 4);
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 6; ++j)
      for (int64_t k = 0; k < 4; ++k)
        x[(i * 6 + j) * 4 + k] = input(rank, i, j, k);
  std::vector<float> out(outSizes[0] * outSizes[1] * outSizes[2], -1.0f);
  auto dx = describe<3>(x, {2, 6, 4});
  auto dout = describe<3>(out, outSizes);
  reinterpret_cast<void (*)(void *, void *)>(entry(lib, name))(&dx, &dout);
  int wrong = 0;
  for (int64_t i = 0; i < outSizes[0]; ++i)
    for (int64_t j = 0; j < outSizes[1]; ++j)
      for (int64_t k = 0; k < outSizes[2]; ++k)
        wrong += std::fabs(out[(i * outSizes[1] + j) * outSizes[2] + k] -
                           expected(i, j, k)) >
                 tolerance * std::fabs(expected(i, j, k));
  std::printf("rank %d: %s: %d wrong\n", rank, name.c_str(), wrong);
  return wrong;
}

/// `withExchange`: the input has @exchange_mirror (upstream's shard
/// collectives have no counterpart of it).
int runAllStatic(void *lib, int r, bool withExchange) {
  const int64_t p = 3;
  int wrong = 0;
  wrong +=
      runStatic(lib, "gather_axis1", r, {2, 18, 4}, [](auto i, auto j, auto k) {
        return input(j / 6, i, j % 6, k);
      });
  wrong += runStatic(
      lib, "gather_slice_axis2", r, {2, 2, 12},
      [](auto i, auto j, auto k) { return input(k / 4, i, 2 + j, k % 4); });
  // Rank r receives part r (along dim 1) of every rank p, stacked along 0.
  wrong += runStatic(lib, "all_to_all_1_0", r, {6, 2, 4},
                     [&](auto i, auto j, auto k) {
                       return input(i / 2, i % 2, 2 * r + j, k);
                     });
  wrong += runStatic(lib, "all_to_all_1_1", r, {2, 6, 4},
                     [&](auto i, auto j, auto k) {
                       return input(j / 2, i, 2 * r + j % 2, k);
                     });
  // The sum over ranks q of x_q, block r along the scattered dim.
  auto summed = [&](int64_t i, int64_t j, int64_t k) {
    float total = 0;
    for (int64_t q = 0; q < p; ++q)
      total += input(q, i, j, k);
    return total;
  };
  wrong += runStatic(lib, "reduce_scatter_axis1", r, {2, 2, 4},
                     [&](auto i, auto j, auto k) {
                       return summed(i, 2 * r + j, k);
                     });
  wrong += runStatic(lib, "reduce_scatter_slice_axis2", r, {2, 6, 1},
                     [&](auto i, auto j, auto) {
                       return summed(i, j, 1 + r);
                     });
  // Three roundings of the inputs and two of the sums: 5 half-ulps.
  wrong += runStatic(
      lib, "reduce_scatter_bf16", r, {2, 2, 4},
      [&](auto i, auto j, auto k) { return summed(i, 2 * r + j, k); },
      5 * 0x1p-9f);
  wrong += runStatic(
      lib, "reduce_scatter_f16", r, {2, 2, 4},
      [&](auto i, auto j, auto k) { return summed(i, 2 * r + j, k); },
      5 * 0x1p-12f);
  if (withExchange)
    wrong += runStatic(
        lib, "exchange_mirror", r, {2, 6, 4},
        [&](auto i, auto j, auto k) { return input(p - 1 - r, i, j, k); });
  wrong += runStatic(
      lib, "shift_forward", r, {2, 6, 4},
      [&](auto i, auto j, auto k) { return input((r - 1 + p) % p, i, j, k); });
  wrong +=
      runStatic(lib, "shift_back", r, {2, 6, 4}, [&](auto i, auto j, auto k) {
        return input((r + 1) % p, i, j, k);
      });
  return wrong;
}

int runDynamic(void *lib, int rank, int size, const char *list) {
  std::vector<int64_t> rowsPerRank;
  std::stringstream items(list);
  for (std::string item; std::getline(items, item, ',');)
    rowsPerRank.push_back(std::atoll(item.c_str()));
  if (static_cast<int>(rowsPerRank.size()) != size) {
    std::fprintf(stderr, "give one row count per rank (%d)\n", size);
    return 2;
  }
  int64_t rows = rowsPerRank[rank];
  std::vector<float> in(rows * 4), out(rows * 4 * size, -1.0f);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t c = 0; c < 4; ++c)
      in[i * 4 + c] = input(rank, 0, i, c);
  auto din = describe<2>(in, {rows, 4});
  auto dout = describe<2>(out, {rows * size, 4});
  reinterpret_cast<void (*)(void *, void *)>(entry(lib, "gather_dynamic"))(
      &din, &dout);
  int wrong = 0;
  for (int r = 0; r < size; ++r)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t c = 0; c < 4; ++c)
        wrong += out[(r * rows + i) * 4 + c] != input(r, 0, i, c);
  std::printf("rank %d: gather_dynamic: gathered %lldx4, %d wrong\n", rank,
              static_cast<long long>(rows * size), wrong);
  return wrong;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 3 || (std::string(argv[2]) == "dynamic" && argc != 4)) {
    std::fprintf(stderr,
                 "usage: %s LIB.so static | shard | dynamic ROWS,ROWS,ROWS\n",
                 argv[0]);
    return 2;
  }
  cp_rt_init(&argc, &argv);
  int rank = cp_rt_world_rank(), size = cp_rt_world_size();
  void *lib = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
  if (!lib) {
    std::fprintf(stderr, "cannot load %s: %s\n", argv[1], dlerror());
    return 1;
  }
  std::string mode = argv[2];
  int wrong = mode == "dynamic"
                  ? runDynamic(lib, rank, size, argv[3])
                  : runAllStatic(lib, rank, /*withExchange=*/mode != "shard");
  cp_rt_finalize();
  return wrong ? 1 : 0;
}
