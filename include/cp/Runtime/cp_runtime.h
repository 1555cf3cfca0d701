/*===- cp_runtime.h - C ABI of libcp_runtime ---------------------*- C -*-===//
 *
 * What compiled cp programs call (emitted by convert-cp-to-mpi) and what
 * drivers use to set up MPI and read the byte counters. Buffers are MLIR
 * unranked memrefs, passed as (rank, pointer to the ranked descriptor), so
 * any rank, shape and stride is accepted.
 *
 * Errors are never returned: a bad input or a failed MPI call prints
 * "cp-runtime: rank R: <call>: <reason>" and ends every rank (exit code 1).
 *
 *===----------------------------------------------------------------------===*/

#ifndef CP_RUNTIME_CP_RUNTIME_H
#define CP_RUNTIME_CP_RUNTIME_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Collective kinds, for the byte counters. */
enum cp_rt_collective {
  CP_RT_ALL_GATHER = 0,
  CP_RT_ALL_TO_ALL = 1,
  CP_RT_EXCHANGE = 2,
  CP_RT_SHIFT = 3,
  CP_RT_RELAYOUT = 4,
  CP_RT_REDUCE_SCATTER = 5,
  CP_RT_NUM_COLLECTIVES = 6
};

/* Sequence layouts of cp_rt_relayout_* (cp.relayout's `from` / `to`). */
enum cp_rt_layout { CP_RT_CONTIGUOUS = 0, CP_RT_ZIGZAG = 1 };

/* MPI set-up. Both are optional: the first runtime call initializes MPI if
 * nobody has, and MPI is finalized at exit. */
void cp_rt_init(int *argc, char ***argv);
void cp_rt_finalize(void);
int cp_rt_world_rank(void);
int cp_rt_world_size(void);

/* A group is the `axes` of grid `name`. `spec` is an i64 vector
 * [grid rank, shape..., number of axes, axes...]; `name` a NUL-terminated
 * i8 vector. The returned handle is cached per (name, spec). */
int64_t cp_rt_group(int64_t nameRank, void *name, int64_t specRank, void *spec);
/* This process's coordinate along `axis` of the grid in `spec` (its axes
 * part is ignored), and its row-major linear index in the grid. */
int64_t cp_rt_grid_coord(int64_t nameRank, void *name, int64_t specRank,
                         void *spec, int64_t axis);
int64_t cp_rt_grid_linear_index(int64_t nameRank, void *name, int64_t specRank,
                                void *spec);

/* Collectives, one entry per element type T in f64 f32 f16 bf16 i64 i32 i16
 * i8 i1, e.g. cp_rt_all_gather_f32(group, inRank, in, outRank, out, axis). */
#define CP_RT_DECLARE_COLLECTIVES(T)                                           \
  void cp_rt_all_gather_##T(int64_t group, int64_t inRank, void *in,           \
                            int64_t outRank, void *out, int64_t gatherAxis);   \
  void cp_rt_all_to_all_##T(int64_t group, int64_t inRank, void *in,           \
                            int64_t outRank, void *out, int64_t splitAxis,     \
                            int64_t concatAxis);                               \
  void cp_rt_exchange_mirror_##T(int64_t group, int64_t inRank, void *in,      \
                                 int64_t outRank, void *out);                  \
  void cp_rt_shift_##T(int64_t group, int64_t inRank, void *in,                \
                       int64_t outRank, void *out, int64_t offset);            \
  int64_t cp_rt_shift_start_##T(int64_t group, int64_t inRank, void *in,       \
                                int64_t outRank, void *out, int64_t offset);   \
  void cp_rt_relayout_##T(int64_t group, int64_t inRank, void *in,             \
                          int64_t outRank, void *out, int64_t seqAxis,         \
                          int64_t from, int64_t to);                           \
  void cp_rt_reduce_scatter_##T(int64_t group, int64_t inRank, void *in,       \
                                int64_t outRank, void *out,                    \
                                int64_t scatterAxis);
CP_RT_DECLARE_COLLECTIVES(f64)
CP_RT_DECLARE_COLLECTIVES(f32)
CP_RT_DECLARE_COLLECTIVES(f16)
CP_RT_DECLARE_COLLECTIVES(bf16)
CP_RT_DECLARE_COLLECTIVES(i64)
CP_RT_DECLARE_COLLECTIVES(i32)
CP_RT_DECLARE_COLLECTIVES(i16)
CP_RT_DECLARE_COLLECTIVES(i8)
CP_RT_DECLARE_COLLECTIVES(i1)
#undef CP_RT_DECLARE_COLLECTIVES

/* cp_rt_shift_start_* begins a shift with nonblocking MPI and returns a
 * request; cp_rt_wait completes it (the output is valid afterwards, and
 * the input may be written again). Every request must be waited for once. */
void cp_rt_wait(int64_t request);

/* Seconds between the return of a shift start and the call of its wait,
 * summed over requests since start or the last reset: the time the
 * program computed while transfers were in flight. With CP_RT_TRACE=1 in
 * the environment every collective, start and wait is also printed on
 * stderr ("cp-runtime trace: rank R: ..."). */
double cp_rt_seconds_in_flight(void);

/* Bytes this rank sent to other ranks, per collective kind (or all kinds
 * for kind < 0), and the number of calls, since start or the last reset. */
int64_t cp_rt_bytes_sent(int kind);
int64_t cp_rt_calls(int kind);
void cp_rt_reset_counters(void);

#ifdef __cplusplus
}
#endif

#endif /* CP_RUNTIME_CP_RUNTIME_H */
