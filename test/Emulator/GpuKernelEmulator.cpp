//===- GpuKernelEmulator.cpp - GPU attention kernels run on the CPU -------===//
//
// cp-gpu-emulate: runs the output of cp-lower-local-attention-to-gpu (a
// function whose cp.buffer.local_attention became a gpu.launch) on the CPU
// and compares it with the plain reference attention
// (cp/TestSupport/ReferenceAttention.h), so that the kernels' numerics are
// checked on a machine without a GPU.
//
// It interprets the IR op by op. Every GPU thread of a block is a fiber
// (ucontext), scheduled cooperatively, so execution is deterministic:
//
//  - gpu.barrier waits for every thread of the block;
//  - warp-level ops (gpu.shuffle, nvgpu.ldmatrix, nvvm.mma.sync) wait for
//    the 32 lanes of the warp, which must all be at the same op, and are
//    then evaluated with the PTX ISA's definitions (cp/TestSupport/PtxIsa.h),
//    not the compiler's own statement of them (MmaFragments.h);
//  - cp.async copies (nvgpu.device_async_copy) are deferred until the
//    issuing thread's cp.async.wait_group retires their group, so data read
//    before its wait is stale, as it may be on a device;
//  - every memory access is bounds-checked; a lane divergence at a warp op,
//    a barrier not every thread reaches, or an out-of-bounds access is an
//    error (exit 1) naming the op.
//
// The function's arguments are q, k, v, then optional segment ids (a 1-D
// integer memref a document mask_mod reads at global positions: documents
// of 23 positions), an optional [Sq, Sk] i1 explicit mask (a pair is
// allowed unless (7i + 3j) % 5 == 0), optional sinks (a 1-D f32 memref of
// H logits, sink[h] = 1.5 h - 1 but -inf for h = 0: a head without one),
// the output, and an optional lse. Q,
// K and V get seeded random values in [-1, 1] rounded to their element
// types. The flags describe
// the attention the op computes (mask, offsets, softcap) for the reference.
// With --grad the function is a backward (cp.buffer.local_attention_grad
// lowered): its arguments are q, k, v, [segments], [mask], o, lse, do, dq,
// dk, dv; o and lse are the reference forward's, do is random, and dq, dk,
// dv are compared with the reference gradient
// (cp/TestSupport/ReferenceAttentionGrad.h), each error as a fraction of
// max(1, the largest magnitude of that gradient). Host scratch (memref.alloc),
// f32 atomic adds and the kernels' opaque inline move are emulated too.
// Each result line ends with kernel=mma when the launches use the tensor
// cores, kernel=simt otherwise.
// --break-ldmatrix-trans evaluates ldmatrix.trans as a plain ldmatrix: the
// tensor-core kernel must then fail, which shows the comparison can.
//
// One file (about 1500 lines): a single-purpose test tool whose parts (the
// interpreter, fibers and warps, memory checks, inputs and the reference
// comparison) are only ever used together.
//
//===----------------------------------------------------------------------===//

#include "cp/InitAllCP.h"
#include "cp/TestSupport/PtxIsa.h"
#include "cp/TestSupport/ReferenceAttention.h"
#include "cp/TestSupport/ReferenceAttentionGrad.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/InitAllDialects.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <ucontext.h>

using namespace mlir;

namespace {

llvm::cl::opt<std::string> inputFile(llvm::cl::Positional,
                                     llvm::cl::desc("<lowered .mlir>"),
                                     llvm::cl::init("-"));
llvm::cl::opt<std::string> funcName("func", llvm::cl::desc("function to run"),
                                    llvm::cl::Required);
llvm::cl::opt<std::string> maskKind("mask",
                                    llvm::cl::desc("none | causal | window:W"),
                                    llvm::cl::init("none"));
llvm::cl::opt<int64_t> qOffset("q-offset", llvm::cl::init(0),
                               llvm::cl::desc("the op's query offset"));
llvm::cl::opt<int64_t> kvOffset("kv-offset", llvm::cl::init(0),
                                llvm::cl::desc("the op's key offset"));
llvm::cl::opt<double> softcap("softcap", llvm::cl::init(0),
                              llvm::cl::desc("score_mod c*tanh(s/c); 0: none"));
llvm::cl::opt<double> tolerance("tolerance", llvm::cl::init(8e-3),
                                llvm::cl::desc("max abs error allowed"));
llvm::cl::opt<unsigned> seed("seed", llvm::cl::init(7));
llvm::cl::opt<std::string>
    schedule("schedule", llvm::cl::init("warp-first"),
             llvm::cl::desc("warp-first (warps as far apart as barriers "
                            "allow) or round-robin"));
llvm::cl::opt<bool>
    grad("grad", llvm::cl::init(false),
         llvm::cl::desc("the function is a backward: q, k, v, o, lse, do, "
                        "dq, dk, dv; o and lse are the reference's"));
llvm::cl::opt<bool>
    breakLdmatrixTrans("break-ldmatrix-trans", llvm::cl::init(false),
                       llvm::cl::desc("evaluate ldmatrix .trans without "
                                      "transposing (the check must fail)"));

[[noreturn]] void fail(const std::string &message, Operation *op = nullptr) {
  std::string where;
  if (op) {
    llvm::raw_string_ostream os(where);
    os << " at '" << op->getName() << "' (" << op->getLoc() << ")";
  }
  std::fprintf(stderr, "cp-gpu-emulate: %s%s\n", message.c_str(),
               where.c_str());
  std::exit(1);
}

//===----------------------------------------------------------------------===//
// Numbers as the element types hold them.
//===----------------------------------------------------------------------===//

float bf16ToFloat(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
uint16_t floatToBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if (std::isnan(f))
    return 0x7fc0;
  bits += 0x7fff + ((bits >> 16) & 1); // round to nearest even
  return static_cast<uint16_t>(bits >> 16);
}
float f16ToFloat(uint16_t h) {
  int sign = h >> 15, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  float value;
  if (exponent == 0)
    value = std::ldexp(static_cast<float>(mantissa), -24);
  else if (exponent == 31)
    value = mantissa ? NAN : INFINITY;
  else
    value = std::ldexp(static_cast<float>(mantissa | 0x400), exponent - 25);
  return sign ? -value : value;
}
uint16_t floatToF16(float f) {
  uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  float a = std::fabs(f);
  if (std::isnan(f))
    return 0x7e00;
  if (a >= 65520.0f)
    return sign | 0x7c00;
  if (a < std::ldexp(1.0f, -24) / 2)
    return sign;
  int exponent;
  std::frexp(a, &exponent); // a = m * 2^exponent, m in [0.5, 1)
  int e = std::max(exponent - 1, -14);
  // 10 mantissa bits below the leading one (or subnormal scale 2^-24).
  float scaled = std::ldexp(a, 10 - e);
  float rounded = std::nearbyint(scaled); // round half to even
  uint32_t m = static_cast<uint32_t>(rounded);
  if (m >= 2048) { // rounding carried into the next binade
    m >>= 1;
    ++e;
  }
  if (m < 1024) // subnormal
    return sign | static_cast<uint16_t>(m);
  if (e > 15)
    return sign | 0x7c00;
  return sign | static_cast<uint16_t>(((e + 15) << 10) | (m & 0x3ff));
}

/// `x` rounded to float type `t`.
double roundTo(Type t, double x) {
  if (t.isF64())
    return x;
  if (t.isF32())
    return static_cast<float>(x);
  if (t.isBF16())
    return bf16ToFloat(floatToBf16(static_cast<float>(x)));
  if (t.isF16())
    return f16ToFloat(floatToF16(static_cast<float>(x)));
  fail("unsupported float type");
}

int64_t bitWidth(Type t) {
  if (t.isIndex())
    return 64;
  return t.getIntOrFloatBitWidth();
}
/// `x` wrapped to the width of integer type `t`, sign-extended.
int64_t wrapTo(Type t, int64_t x) {
  int64_t w = bitWidth(t);
  if (w >= 64)
    return x;
  if (w == 1)
    return x & 1;
  uint64_t mask = (uint64_t(1) << w) - 1;
  uint64_t v = static_cast<uint64_t>(x) & mask;
  if (v >> (w - 1))
    v |= ~mask;
  return static_cast<int64_t>(v);
}
uint64_t asUnsigned(Type t, int64_t x) {
  int64_t w = bitWidth(t);
  if (w >= 64)
    return static_cast<uint64_t>(x);
  return static_cast<uint64_t>(x) & ((uint64_t(1) << w) - 1);
}

//===----------------------------------------------------------------------===//
// Values and memory.
//===----------------------------------------------------------------------===//

struct MemRefVal {
  std::shared_ptr<std::vector<uint8_t>> bytes;
  /// Workgroup memory only: per byte, the cp.async copies in flight to it.
  std::shared_ptr<std::vector<uint16_t>> inFlight;
  int64_t offset = 0; // elements
  SmallVector<int64_t> sizes, strides;
  Type element;
  int64_t elementBytes() const {
    return element.isIndex() ? 8 : std::max<int64_t>(1, bitWidth(element) / 8);
  }
  /// Fails if a cp.async copy to any of the `n` bytes at `byte` has not
  /// landed: the access would race with it on a device.
  void checkLanded(int64_t byte, int64_t n, Operation *op) const {
    if (!inFlight)
      return;
    for (int64_t b = byte; b < byte + n; ++b)
      if ((*inFlight)[b])
        fail("accesses workgroup memory that a cp.async has not landed in "
             "yet (a missing cp.async.wait_group or gpu.barrier)",
             op);
  }
  void markInFlight(int64_t byte, int64_t n, int delta) const {
    if (inFlight)
      for (int64_t b = byte; b < byte + n; ++b)
        (*inFlight)[b] += delta;
  }
  /// The byte address of `at`, bounds-checked.
  int64_t address(ArrayRef<int64_t> at, Operation *op) const {
    if (at.size() != sizes.size())
      fail("index count differs from the memref's rank", op);
    int64_t linear = offset;
    for (size_t d = 0; d < at.size(); ++d) {
      if (at[d] < 0 || at[d] >= sizes[d])
        fail("index " + std::to_string(at[d]) + " out of bounds [0, " +
                 std::to_string(sizes[d]) + ") in dim " + std::to_string(d),
             op);
      linear += at[d] * strides[d];
    }
    int64_t byte = linear * elementBytes();
    if (byte < 0 || byte + elementBytes() > static_cast<int64_t>(bytes->size()))
      fail("access outside the buffer", op);
    return byte;
  }
};

struct Val {
  int64_t i = 0;
  double f = 0;
  std::vector<Val> elements; // vector (row-major) or struct members
  std::shared_ptr<MemRefVal> memref;
  static Val ofInt(int64_t v) {
    Val r;
    r.i = v;
    return r;
  }
  static Val ofFloat(double v) {
    Val r;
    r.f = v;
    return r;
  }
};

double loadElement(const MemRefVal &m, int64_t byte) {
  const uint8_t *p = m.bytes->data() + byte;
  Type t = m.element;
  if (t.isF32()) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, p, 2);
  if (t.isBF16())
    return bf16ToFloat(h);
  if (t.isF16())
    return f16ToFloat(h);
  fail("unsupported float element type");
}
int64_t loadInt(const MemRefVal &m, int64_t byte) {
  const uint8_t *p = m.bytes->data() + byte;
  switch (m.elementBytes()) {
  case 1:
    return wrapTo(m.element, static_cast<int8_t>(*p));
  case 4: {
    int32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }
  default: {
    int64_t v;
    std::memcpy(&v, p, 8);
    return v;
  }
  }
}
Val load(const MemRefVal &m, int64_t byte) {
  if (isa<FloatType>(m.element))
    return Val::ofFloat(loadElement(m, byte));
  return Val::ofInt(loadInt(m, byte));
}
void store(const MemRefVal &m, int64_t byte, const Val &v) {
  uint8_t *p = m.bytes->data() + byte;
  Type t = m.element;
  if (t.isF32()) {
    float f = static_cast<float>(v.f);
    std::memcpy(p, &f, 4);
  } else if (t.isBF16() || t.isF16()) {
    uint16_t h = t.isBF16() ? floatToBf16(static_cast<float>(v.f))
                            : floatToF16(static_cast<float>(v.f));
    std::memcpy(p, &h, 2);
  } else if (m.elementBytes() == 1) {
    *p = static_cast<uint8_t>(v.i);
  } else if (m.elementBytes() == 4) {
    int32_t x = static_cast<int32_t>(v.i);
    std::memcpy(p, &x, 4);
  } else {
    std::memcpy(p, &v.i, 8);
  }
}

std::shared_ptr<MemRefVal> allocate(MemRefType type, Operation *op) {
  if (!type.hasStaticShape())
    fail("needs a static memref shape", op);
  auto m = std::make_shared<MemRefVal>();
  m->element = type.getElementType();
  m->sizes.assign(type.getShape().begin(), type.getShape().end());
  // A strided layout gets a buffer that spans it, starting at its offset.
  if (failed(type.getStridesAndOffset(m->strides, m->offset)) ||
      ShapedType::isDynamic(m->offset) ||
      llvm::any_of(m->strides, ShapedType::isDynamic))
    fail("needs static strides and offset", op);
  int64_t span = m->offset + 1;
  for (auto [size, stride] : llvm::zip(m->sizes, m->strides))
    span += (size - 1) * stride;
  m->bytes = std::make_shared<std::vector<uint8_t>>(span * m->elementBytes());
  return m;
}

//===----------------------------------------------------------------------===//
// Fibers: the threads of one block.
//===----------------------------------------------------------------------===//

struct Fiber;
struct Warp {
  int arrived = 0;
  Operation *op = nullptr;
  std::array<Val, 32> in, out;
  std::array<Fiber *, 32> lanes{};
  int size = 0;
};

/// A deferred cp.async copy.
struct PendingCopy {
  std::shared_ptr<MemRefVal> dst, src;
  int64_t dstByte, srcByte, count, srcCount;
};

struct Fiber {
  ucontext_t context;
  /// Left uninitialized: a thread touches a few KiB of it, and zeroing
  /// every thread's whole stack at each launch cost more than running it.
  std::unique_ptr<char[]> stack;
  bool done = false, blocked = false;
  Operation *waitingAt = nullptr;
  int lane = 0;
  Warp *warp = nullptr;
  std::vector<PendingCopy> openGroup;
  std::vector<std::vector<PendingCopy>> committed;
  std::function<void()> body;
};

struct Block {
  std::vector<std::unique_ptr<Fiber>> fibers;
  std::vector<std::unique_ptr<Warp>> warps;
  int barrierArrived = 0;
  ucontext_t scheduler;
  Fiber *current = nullptr;
};
Block *activeBlock = nullptr;

void fiberEntry() {
  Fiber *f = activeBlock->current;
  f->body();
  f->done = true;
  swapcontext(&f->context, &activeBlock->scheduler);
}

void yieldToScheduler() {
  Fiber *f = activeBlock->current;
  swapcontext(&f->context, &activeBlock->scheduler);
}

/// Runs the fibers of `block` until all end. With --schedule=warp-first
/// (the default) the lowest-numbered runnable thread runs next, so warp 0
/// runs ahead until a block barrier stops it, then warp 1, ...: warps are
/// as far apart as barriers allow, which exposes a missing barrier between
/// one warp's writes (or cp.async copies) and another's reads.
/// --schedule=round-robin runs every runnable thread in turn. No runnable
/// thread while some have not ended is a deadlock.
void runBlock(Block &block) {
  activeBlock = &block;
  for (auto &f : block.fibers) {
    constexpr size_t kStackBytes = 512 * 1024;
    f->stack.reset(new char[kStackBytes]);
    getcontext(&f->context);
    f->context.uc_stack.ss_sp = f->stack.get();
    f->context.uc_stack.ss_size = kStackBytes;
    f->context.uc_link = nullptr;
    makecontext(&f->context, fiberEntry, 0);
  }
  bool warpFirst = schedule == "warp-first";
  for (;;) {
    bool live = false, progress = false;
    for (auto &f : block.fibers) {
      if (f->done)
        continue;
      live = true;
      if (f->blocked)
        continue;
      block.current = f.get();
      swapcontext(&block.scheduler, &f->context);
      progress = true;
      if (warpFirst)
        break;
    }
    if (!live)
      break;
    if (!progress) {
      Operation *at = nullptr;
      int waiting = 0;
      for (auto &f : block.fibers)
        if (!f->done) {
          ++waiting;
          at = f->waitingAt;
        }
      fail("deadlock: " + std::to_string(waiting) +
               " threads wait at a barrier or warp op the others never reach",
           at);
    }
  }
  activeBlock = nullptr;
}

/// Every thread of the block reaches `op` before any passes it.
void blockBarrier(Operation *op) {
  Block &block = *activeBlock;
  Fiber *self = block.current;
  if (++block.barrierArrived == static_cast<int>(block.fibers.size())) {
    block.barrierArrived = 0;
    for (auto &f : block.fibers)
      f->blocked = false;
    return;
  }
  self->blocked = true;
  self->waitingAt = op;
  while (self->blocked)
    yieldToScheduler();
}

/// The warp's lanes all reach `op`; then `compute(in, lane)` gives each
/// lane's result from every lane's `in`.
Val warpCollective(
    Operation *op, Val in,
    const std::function<Val(const std::array<Val, 32> &, int)> &compute) {
  Fiber *self = activeBlock->current;
  Warp &w = *self->warp;
  if (w.arrived > 0 && w.op != op)
    fail("lanes of one warp diverge: some wait at another warp op", op);
  w.op = op;
  w.in[self->lane] = std::move(in);
  if (++w.arrived == w.size) {
    for (int lane = 0; lane < w.size; ++lane)
      w.out[lane] = compute(w.in, lane);
    w.arrived = 0;
    w.op = nullptr;
    for (int lane = 0; lane < w.size; ++lane)
      w.lanes[lane]->blocked = false;
    return w.out[self->lane];
  }
  self->blocked = true;
  self->waitingAt = op;
  while (self->blocked)
    yieldToScheduler();
  return w.out[self->lane];
}

//===----------------------------------------------------------------------===//
// The interpreter.
//===----------------------------------------------------------------------===//

/// The values a kernel body defines (block arguments and op results), each
/// numbered once per launch and shared by its threads, so that a thread keeps
/// its values in a vector rather than a map of its own.
using SlotMap = DenseMap<Value, unsigned>;

std::shared_ptr<SlotMap> numberValues(mlir::Block &body) {
  auto slots = std::make_shared<SlotMap>();
  auto add = [&](Value v) { slots->try_emplace(v, slots->size()); };
  for (BlockArgument a : body.getArguments())
    add(a);
  for (Operation &top : body)
    top.walk([&](Operation *op) {
      for (Value r : op->getResults())
        add(r);
      for (Region &region : op->getRegions())
        for (mlir::Block &block : region)
          for (BlockArgument a : block.getArguments())
            add(a);
    });
  return slots;
}

class Interpreter {
public:
  explicit Interpreter(const Interpreter *parent = nullptr,
                       std::shared_ptr<const SlotMap> slots = nullptr)
      : parent(parent), slots(std::move(slots)) {
    if (this->slots) {
      values.resize(this->slots->size());
      defined.resize(this->slots->size());
    }
  }

  Val &get(Value v) {
    if (slots) {
      auto it = slots->find(v);
      if (it != slots->end()) {
        if (!defined[it->second])
          fail("value used before it is defined", v.getDefiningOp());
        return values[it->second];
      }
    }
    auto it = env.find(v);
    if (it != env.end())
      return it->second;
    if (parent) {
      auto pit = parent->env.find(v);
      if (pit != parent->env.end())
        return const_cast<Val &>(pit->second);
    }
    fail("value used before it is defined", v.getDefiningOp());
  }
  void set(Value v, Val x) {
    if (slots) {
      auto it = slots->find(v);
      if (it != slots->end()) {
        values[it->second] = std::move(x);
        defined[it->second] = 1;
        return;
      }
    }
    env[v] = std::move(x);
  }

  /// Runs `block` with `args`; returns the terminator's operands.
  SmallVector<Val> run(mlir::Block &block, ArrayRef<Val> args) {
    for (auto [arg, v] : llvm::zip(block.getArguments(), args))
      set(arg, v);
    for (Operation &op : block) {
      if (op.hasTrait<OpTrait::IsTerminator>()) {
        SmallVector<Val> results;
        for (Value v : op.getOperands())
          results.push_back(get(v));
        return results;
      }
      exec(&op);
    }
    return {};
  }

private:
  void exec(Operation *op);
  void execArith(Operation *op);
  void execLaunch(gpu::LaunchOp launch);
  void execCopy(nvgpu::DeviceAsyncCopyOp op);
  void waitCopies(int64_t pending);
  SmallVector<int64_t> indices(ValueRange values) {
    SmallVector<int64_t> at;
    for (Value v : values)
      at.push_back(get(v).i);
    return at;
  }

  DenseMap<Value, Val> env;
  const Interpreter *parent;
  /// In a kernel thread: the launch's numbering of the body's values, and
  /// this thread's values by that number.
  std::shared_ptr<const SlotMap> slots;
  std::vector<Val> values;
  std::vector<uint8_t> defined;
};

void Interpreter::exec(Operation *op) {
  if (op->getDialect() &&
      isa<arith::ArithDialect, math::MathDialect>(op->getDialect()))
    return execArith(op);
  llvm::TypeSwitch<Operation *>(op)
      .Case([&](scf::ForOp forOp) {
        int64_t lb = get(forOp.getLowerBound()).i,
                ub = get(forOp.getUpperBound()).i,
                step = get(forOp.getStep()).i;
        SmallVector<Val> carried;
        for (Value v : forOp.getInitArgs())
          carried.push_back(get(v));
        for (int64_t iv = lb; iv < ub; iv += step) {
          SmallVector<Val> args{Val::ofInt(iv)};
          args.append(carried.begin(), carried.end());
          carried = run(*forOp.getBody(), args);
        }
        for (auto [r, v] : llvm::zip(forOp.getResults(), carried))
          set(r, v);
      })
      .Case([&](scf::IfOp ifOp) {
        bool cond = get(ifOp.getCondition()).i & 1;
        Region &region = cond ? ifOp.getThenRegion() : ifOp.getElseRegion();
        if (region.empty())
          return;
        SmallVector<Val> results = run(region.front(), {});
        for (auto [r, v] : llvm::zip(ifOp.getResults(), results))
          set(r, v);
      })
      .Case([&](memref::CastOp castOp) {
        // Only the static type changes (e.g. a dynamic offset); the
        // buffer, its offset and strides are the source's.
        set(castOp, get(castOp.getSource()));
      })
      .Case([&](memref::DimOp dimOp) {
        auto m = get(dimOp.getSource()).memref;
        set(dimOp, Val::ofInt(m->sizes[get(dimOp.getIndex()).i]));
      })
      .Case([&](memref::LoadOp loadOp) {
        auto &m = *get(loadOp.getMemRef()).memref;
        int64_t byte = m.address(indices(loadOp.getIndices()), op);
        m.checkLanded(byte, m.elementBytes(), op);
        set(loadOp, load(m, byte));
      })
      .Case([&](memref::StoreOp storeOp) {
        auto &m = *get(storeOp.getMemRef()).memref;
        int64_t byte = m.address(indices(storeOp.getIndices()), op);
        m.checkLanded(byte, m.elementBytes(), op);
        store(m, byte, get(storeOp.getValueToStore()));
      })
      .Case([&](memref::AllocOp alloc) {
        // Host scratch (the tensor-core backward's lse, D_i and f32 dQ):
        // an identity layout over the dynamic sizes, poisoned like
        // workgroup memory so that a read before a write shows.
        MemRefType type = alloc.getType();
        if (!type.getLayout().isIdentity())
          fail("only identity-layout allocations are emulated", op);
        auto m = std::make_shared<MemRefVal>();
        m->element = type.getElementType();
        auto dynamicSizes = alloc.getDynamicSizes().begin();
        for (int64_t size : type.getShape())
          m->sizes.push_back(ShapedType::isDynamic(size)
                                 ? get(*dynamicSizes++).i
                                 : size);
        int64_t count = 1;
        m->strides.assign(m->sizes.size(), 1);
        for (int64_t d = static_cast<int64_t>(m->sizes.size()) - 1; d >= 0;
             --d) {
          m->strides[d] = count;
          count *= m->sizes[d];
        }
        m->bytes = std::make_shared<std::vector<uint8_t>>(
            static_cast<size_t>(count * m->elementBytes()), 0x7f);
        Val v;
        v.memref = m;
        set(alloc, v);
      })
      .Case([&](memref::DeallocOp dealloc) {
        // Later uses of the value would be a use after free.
        env.erase(dealloc.getMemref());
      })
      .Case([&](memref::AtomicRMWOp atomic) {
        // Threads run one at a time, so the read-modify-write is atomic;
        // its order across threads is the schedule's, as on a device.
        if (atomic.getKind() != arith::AtomicRMWKind::addf)
          fail("only addf atomics are emulated", op);
        auto &m = *get(atomic.getMemref()).memref;
        int64_t byte = m.address(indices(atomic.getIndices()), op);
        m.checkLanded(byte, m.elementBytes(), op);
        Val old = load(m, byte);
        store(m, byte,
              Val::ofFloat(roundTo(m.element,
                                   static_cast<float>(old.f) +
                                       static_cast<float>(
                                           get(atomic.getValue()).f))));
        set(atomic, old);
      })
      .Case([&](LLVM::InlineAsmOp inlineAsm) {
        // The kernels' only inline PTX: a move LLVM cannot see through.
        if (inlineAsm.getAsmString() != "mov.u32 $0, $1;" ||
            inlineAsm.getNumOperands() != 1)
          fail("only the inline `mov.u32 $0, $1;` is emulated", op);
        set(inlineAsm.getResult(0), get(inlineAsm.getOperand(0)));
      })
      .Case([&](memref::ViewOp viewOp) {
        auto source = get(viewOp.getSource()).memref;
        auto type = viewOp.getType();
        auto m = std::make_shared<MemRefVal>();
        m->bytes = source->bytes;
        m->inFlight = source->inFlight;
        m->element = type.getElementType();
        m->sizes.assign(type.getShape().begin(), type.getShape().end());
        int64_t offset;
        if (!type.hasStaticShape() ||
            failed(type.getStridesAndOffset(m->strides, offset)))
          fail("needs a static identity view", op);
        int64_t shift = get(viewOp.getByteShift()).i;
        if (shift % m->elementBytes() != 0)
          fail("view shift is not a whole number of elements", op);
        m->offset = shift / m->elementBytes();
        int64_t end = (m->offset + type.getNumElements()) * m->elementBytes();
        if (end > static_cast<int64_t>(m->bytes->size()))
          fail("view of " + std::to_string(end) + " bytes over a buffer of " +
                   std::to_string(m->bytes->size()),
               op);
        Val v;
        v.memref = m;
        set(viewOp, v);
      })
      .Case([&](gpu::LaunchOp launch) { execLaunch(launch); })
      .Case([&](gpu::BarrierOp) { blockBarrier(op); })
      .Case([&](gpu::DynamicSharedMemoryOp shared) {
        // Bound by execLaunch to the block's buffer.
        get(shared);
      })
      .Case([&](gpu::ShuffleOp shuffle) {
        if (shuffle.getMode() != gpu::ShuffleMode::XOR)
          fail("only xor shuffles are emulated", op);
        int64_t offset = get(shuffle.getOffset()).i,
                width = get(shuffle.getWidth()).i;
        Val v = warpCollective(op, get(shuffle.getValue()),
                               [&](const std::array<Val, 32> &in, int lane) {
                                 int src = lane ^ static_cast<int>(offset);
                                 return src < width ? in[src] : in[lane];
                               });
        set(shuffle.getShuffleResult(), v);
        set(shuffle.getValid(), Val::ofInt(1));
      })
      .Case([&](nvgpu::DeviceAsyncCopyOp copy) { execCopy(copy); })
      .Case([&](NVVM::CpAsyncCommitGroupOp) {
        Fiber *self = activeBlock->current;
        self->committed.push_back(std::move(self->openGroup));
        self->openGroup.clear();
      })
      .Case([&](NVVM::CpAsyncWaitGroupOp wait) { waitCopies(wait.getN()); })
      .Case([&](nvgpu::LdMatrixOp ld) {
        // Each lane gives one 8-element row; PtxIsa.h says who gets what.
        auto &m = *get(ld.getSrcMemref()).memref;
        SmallVector<int64_t> at = indices(ld.getIndices());
        if (m.address(at, op) % 16 != 0)
          fail("ldmatrix row address is not 16-byte aligned", op);
        Val row;
        for (int64_t e = 0; e < 8; ++e) {
          SmallVector<int64_t> element(at);
          element.back() += e;
          int64_t byte = m.address(element, op);
          m.checkLanded(byte, m.elementBytes(), op);
          row.elements.push_back(load(m, byte));
        }
        int tiles = ld.getNumTiles();
        bool trans = ld.getTranspose() && !breakLdmatrixTrans;
        Val v = warpCollective(
            op, row, [&](const std::array<Val, 32> &in, int lane) {
              Val out;
              for (int reg = 0; reg < tiles; ++reg)
                for (int j = 0; j < 2; ++j) {
                  ::cp::ptx::LdmatrixSource s =
                      ::cp::ptx::ldmatrixSource(lane, reg, j, trans);
                  out.elements.push_back(in[s.source].elements[s.element]);
                }
              return out;
            });
        set(ld, v);
      })
      .Case([&](NVVM::MmaOp mmaOp) {
        // Operands: 4 A registers, 2 B, 4 C (f32); each 16-bit pair is
        // vector<2xf16> or an i32 holding two bf16 (element 0 low).
        auto pair = [&](Value v) -> std::array<double, 2> {
          Val x = get(v);
          if (!x.elements.empty())
            return {x.elements[0].f, x.elements[1].f};
          uint32_t bits = static_cast<uint32_t>(x.i);
          return {bf16ToFloat(bits & 0xffff), bf16ToFloat(bits >> 16)};
        };
        Val in;
        for (Value v : mmaOp.getOperandA()) {
          auto p = pair(v);
          in.elements.push_back(Val::ofFloat(p[0]));
          in.elements.push_back(Val::ofFloat(p[1]));
        }
        for (Value v : mmaOp.getOperandB()) {
          auto p = pair(v);
          in.elements.push_back(Val::ofFloat(p[0]));
          in.elements.push_back(Val::ofFloat(p[1]));
        }
        for (Value v : mmaOp.getOperandC())
          in.elements.push_back(get(v));
        if (in.elements.size() != 8 + 4 + 4)
          fail("only m16n8k16 with 16-bit A/B and f32 C is emulated", op);
        Val v = warpCollective(
            op, in, [&](const std::array<Val, 32> &all, int lane) {
              double a[16][16], bm[16][8], c[16][8];
              for (int l = 0; l < 32; ++l) {
                for (int i = 0; i < 8; ++i) {
                  ::cp::ptx::RowCol p = ::cp::ptx::mmaA(l, i);
                  a[p.row][p.col] = all[l].elements[i].f;
                }
                for (int i = 0; i < 4; ++i) {
                  ::cp::ptx::RowCol p = ::cp::ptx::mmaB(l, i);
                  bm[p.row][p.col] = all[l].elements[8 + i].f;
                  ::cp::ptx::RowCol q = ::cp::ptx::mmaC(l, i);
                  c[q.row][q.col] = all[l].elements[12 + i].f;
                }
              }
              Val out;
              for (int i = 0; i < 4; ++i) {
                ::cp::ptx::RowCol q = ::cp::ptx::mmaC(lane, i);
                double sum = c[q.row][q.col];
                for (int k = 0; k < 16; ++k)
                  sum += a[q.row][k] * bm[k][q.col];
                out.elements.push_back(Val::ofFloat(static_cast<float>(sum)));
              }
              return out;
            });
        set(mmaOp.getRes(), v);
      })
      .Case([&](LLVM::ExtractValueOp extract) {
        Val agg = get(extract.getContainer());
        for (int64_t p : extract.getPosition())
          agg = agg.elements[p];
        set(extract, agg);
      })
      .Case([&](LLVM::BitcastOp cast) {
        // vector<2xbf16> -> i32: element 0 in the low half.
        Val x = get(cast.getArg());
        auto from = dyn_cast<VectorType>(cast.getArg().getType());
        if (!from || from.getNumElements() != 2 ||
            !from.getElementType().isBF16() || !cast.getType().isInteger(32))
          fail("only vector<2xbf16> to i32 bitcasts are emulated", op);
        uint32_t lo = floatToBf16(static_cast<float>(x.elements[0].f));
        uint32_t hi = floatToBf16(static_cast<float>(x.elements[1].f));
        set(cast, Val::ofInt(static_cast<int32_t>(lo | (hi << 16))));
      })
      .Case([&](vector::ExtractOp extract) {
        if (!extract.getDynamicPosition().empty())
          fail("only static vector.extract positions are emulated", op);
        auto type = cast<VectorType>(extract.getSource().getType());
        ArrayRef<int64_t> shape = type.getShape();
        ArrayRef<int64_t> position = extract.getStaticPosition();
        int64_t inner = 1;
        for (size_t d = position.size(); d < shape.size(); ++d)
          inner *= shape[d];
        int64_t first = 0;
        for (size_t d = 0; d < position.size(); ++d)
          first = first * shape[d] + position[d];
        first *= inner;
        const Val &source = get(extract.getSource());
        if (isa<VectorType>(extract.getType())) {
          Val out;
          out.elements.assign(source.elements.begin() + first,
                              source.elements.begin() + first + inner);
          set(extract, out);
        } else {
          set(extract, source.elements[first]);
        }
      })
      .Case([&](vector::FromElementsOp from) {
        Val out;
        for (Value v : from.getElements())
          out.elements.push_back(get(v));
        set(from, out);
      })
      .Default([&](Operation *) { fail("no emulation of this op", op); });
}

void Interpreter::execArith(Operation *op) {
  auto in = [&](int i) -> Val & { return get(op->getOperand(i)); };
  Type type = op->getNumResults() ? op->getResult(0).getType() : Type();
  auto setInt = [&](int64_t v) {
    set(op->getResult(0), Val::ofInt(wrapTo(type, v)));
  };
  auto setFloat = [&](double v) {
    set(op->getResult(0), Val::ofFloat(roundTo(type, v)));
  };
  auto u = [&](int i) {
    return asUnsigned(op->getOperand(i).getType(), in(i).i);
  };
  // Math in f32 as a GPU does it (float functions), rounded to the type.
  auto f = [&](int i) { return static_cast<float>(in(i).f); };
  llvm::TypeSwitch<Operation *>(op)
      .Case([&](arith::ConstantOp c) {
        Attribute value = c.getValue();
        if (auto i = dyn_cast<IntegerAttr>(value))
          return setInt(i.getValue().getSExtValue());
        if (auto fl = dyn_cast<FloatAttr>(value))
          return setFloat(fl.getValueAsDouble());
        if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
          Val out;
          if (isa<FloatType>(dense.getElementType()))
            for (APFloat x : dense.getValues<APFloat>())
              out.elements.push_back(Val::ofFloat(x.convertToDouble()));
          else
            for (APInt x : dense.getValues<APInt>())
              out.elements.push_back(Val::ofInt(x.getSExtValue()));
          return set(c, out);
        }
        fail("unsupported constant", op);
      })
      .Case([&](arith::AddIOp) { setInt(in(0).i + in(1).i); })
      .Case([&](arith::SubIOp) { setInt(in(0).i - in(1).i); })
      .Case([&](arith::MulIOp) { setInt(in(0).i * in(1).i); })
      .Case([&](arith::DivUIOp) { setInt(static_cast<int64_t>(u(0) / u(1))); })
      .Case([&](arith::DivSIOp) { setInt(in(0).i / in(1).i); })
      .Case([&](arith::RemUIOp) { setInt(static_cast<int64_t>(u(0) % u(1))); })
      .Case([&](arith::RemSIOp) { setInt(in(0).i % in(1).i); })
      .Case([&](arith::CeilDivUIOp) {
        setInt(static_cast<int64_t>((u(0) + u(1) - 1) / u(1)));
      })
      .Case([&](arith::CeilDivSIOp) {
        int64_t a = in(0).i, b = in(1).i;
        setInt(a / b + ((a % b != 0) && ((a < 0) == (b < 0))));
      })
      .Case([&](arith::FloorDivSIOp) {
        int64_t a = in(0).i, b = in(1).i;
        setInt(a / b - ((a % b != 0) && ((a < 0) != (b < 0))));
      })
      .Case([&](arith::MinSIOp) { setInt(std::min(in(0).i, in(1).i)); })
      .Case([&](arith::MaxSIOp) { setInt(std::max(in(0).i, in(1).i)); })
      .Case([&](arith::MinUIOp) {
        setInt(static_cast<int64_t>(std::min(u(0), u(1))));
      })
      .Case([&](arith::MaxUIOp) {
        setInt(static_cast<int64_t>(std::max(u(0), u(1))));
      })
      .Case([&](arith::AndIOp) { setInt(in(0).i & in(1).i); })
      .Case([&](arith::OrIOp) { setInt(in(0).i | in(1).i); })
      .Case([&](arith::XOrIOp) { setInt(in(0).i ^ in(1).i); })
      .Case([&](arith::ShLIOp) { setInt(in(0).i << in(1).i); })
      .Case([&](arith::ShRUIOp) {
        setInt(static_cast<int64_t>(u(0) >> in(1).i));
      })
      .Case([&](arith::ShRSIOp) { setInt(in(0).i >> in(1).i); })
      .Case<arith::IndexCastOp, arith::ExtSIOp, arith::TruncIOp>(
          [&](Operation *) { setInt(in(0).i); })
      .Case<arith::IndexCastUIOp, arith::ExtUIOp>(
          [&](Operation *) { setInt(static_cast<int64_t>(u(0))); })
      .Case([&](arith::CmpIOp cmp) {
        int64_t a = in(0).i, b = in(1).i;
        uint64_t ua = u(0), ub = u(1);
        bool r = false;
        switch (cmp.getPredicate()) {
        case arith::CmpIPredicate::eq:
          r = a == b;
          break;
        case arith::CmpIPredicate::ne:
          r = a != b;
          break;
        case arith::CmpIPredicate::slt:
          r = a < b;
          break;
        case arith::CmpIPredicate::sle:
          r = a <= b;
          break;
        case arith::CmpIPredicate::sgt:
          r = a > b;
          break;
        case arith::CmpIPredicate::sge:
          r = a >= b;
          break;
        case arith::CmpIPredicate::ult:
          r = ua < ub;
          break;
        case arith::CmpIPredicate::ule:
          r = ua <= ub;
          break;
        case arith::CmpIPredicate::ugt:
          r = ua > ub;
          break;
        case arith::CmpIPredicate::uge:
          r = ua >= ub;
          break;
        }
        set(cmp, Val::ofInt(r));
      })
      .Case([&](arith::SelectOp) {
        set(op->getResult(0), (in(0).i & 1) ? in(1) : in(2));
      })
      .Case([&](arith::AddFOp) { setFloat(f(0) + f(1)); })
      .Case([&](arith::SubFOp) { setFloat(f(0) - f(1)); })
      .Case([&](arith::MulFOp) { setFloat(f(0) * f(1)); })
      .Case([&](arith::DivFOp) { setFloat(f(0) / f(1)); })
      .Case([&](arith::NegFOp) { setFloat(-f(0)); })
      .Case([&](arith::MaximumFOp) {
        float a = f(0), b = f(1);
        setFloat(std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b));
      })
      .Case([&](arith::MinimumFOp) {
        float a = f(0), b = f(1);
        setFloat(std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b));
      })
      .Case([&](arith::MaxNumFOp) { setFloat(std::fmax(f(0), f(1))); })
      .Case([&](arith::MinNumFOp) { setFloat(std::fmin(f(0), f(1))); })
      .Case<arith::TruncFOp, arith::ExtFOp>(
          [&](Operation *) { setFloat(in(0).f); })
      .Case([&](arith::SIToFPOp) { setFloat(static_cast<double>(in(0).i)); })
      .Case([&](arith::UIToFPOp) { setFloat(static_cast<double>(u(0))); })
      .Case([&](arith::FPToSIOp) { setInt(static_cast<int64_t>(in(0).f)); })
      .Case([&](arith::CmpFOp cmp) {
        double a = in(0).f, b = in(1).f;
        bool unordered = std::isnan(a) || std::isnan(b), r = false;
        using P = arith::CmpFPredicate;
        switch (cmp.getPredicate()) {
        case P::AlwaysFalse:
          r = false;
          break;
        case P::OEQ:
          r = !unordered && a == b;
          break;
        case P::OGT:
          r = !unordered && a > b;
          break;
        case P::OGE:
          r = !unordered && a >= b;
          break;
        case P::OLT:
          r = !unordered && a < b;
          break;
        case P::OLE:
          r = !unordered && a <= b;
          break;
        case P::ONE:
          r = !unordered && a != b;
          break;
        case P::ORD:
          r = !unordered;
          break;
        case P::UEQ:
          r = unordered || a == b;
          break;
        case P::UGT:
          r = unordered || a > b;
          break;
        case P::UGE:
          r = unordered || a >= b;
          break;
        case P::ULT:
          r = unordered || a < b;
          break;
        case P::ULE:
          r = unordered || a <= b;
          break;
        case P::UNE:
          r = unordered || a != b;
          break;
        case P::UNO:
          r = unordered;
          break;
        case P::AlwaysTrue:
          r = true;
          break;
        }
        set(cmp, Val::ofInt(r));
      })
      .Case([&](math::ExpOp) { setFloat(std::exp(f(0))); })
      .Case([&](math::Exp2Op) { setFloat(std::exp2(f(0))); })
      .Case([&](math::LogOp) { setFloat(std::log(f(0))); })
      .Case([&](math::TanhOp) { setFloat(std::tanh(f(0))); })
      .Case([&](math::SqrtOp) { setFloat(std::sqrt(f(0))); })
      .Case([&](math::AbsFOp) { setFloat(std::fabs(f(0))); })
      .Case([&](math::FmaOp) { setFloat(std::fma(f(0), f(1), f(2))); })
      .Default([&](Operation *) { fail("no emulation of this op", op); });
}

void Interpreter::execCopy(nvgpu::DeviceAsyncCopyOp copy) {
  Operation *op = copy;
  auto dst = get(copy.getDst()).memref, src = get(copy.getSrc()).memref;
  int64_t count = copy.getDstElements().getZExtValue();
  int64_t srcCount =
      copy.getSrcElements() ? get(copy.getSrcElements()).i : count;
  SmallVector<int64_t> dstAt = indices(copy.getDstIndices());
  SmallVector<int64_t> last(dstAt);
  last.back() += count - 1;
  dst->address(last, op);
  SmallVector<int64_t> srcAt = indices(copy.getSrcIndices());
  int64_t srcByte = 0;
  if (srcCount > 0) {
    // The source must hold the bytes actually read (src-size of them).
    srcByte = src->address(srcAt, op);
    SmallVector<int64_t> srcLast(srcAt);
    srcLast.back() += srcCount - 1;
    src->address(srcLast, op);
  }
  // cp.async copies 4, 8 or 16 bytes between addresses aligned to that.
  int64_t bytes = count * dst->elementBytes();
  int64_t dstByte = dst->address(dstAt, op);
  if (dstByte % bytes != 0 || (srcCount > 0 && srcByte % bytes != 0))
    fail("cp.async of " + std::to_string(bytes) +
             " bytes between addresses not aligned to it",
         op);
  dst->checkLanded(dstByte, bytes, op);
  dst->markInFlight(dstByte, bytes, +1);
  activeBlock->current->openGroup.push_back(
      {dst, src, dstByte, srcByte, count, srcCount});
  set(copy.getAsyncToken(), Val());
}

void Interpreter::waitCopies(int64_t pending) {
  Fiber *self = activeBlock->current;
  while (static_cast<int64_t>(self->committed.size()) > pending) {
    for (PendingCopy &c : self->committed.front()) {
      int64_t size = c.dst->elementBytes();
      c.dst->markInFlight(c.dstByte, c.count * size, -1);
      for (int64_t e = 0; e < c.count; ++e) {
        Val v = e < c.srcCount ? load(*c.src, c.srcByte + e * size)
                               : Val::ofFloat(0.0);
        store(*c.dst, c.dstByte + e * size, v);
      }
    }
    self->committed.erase(self->committed.begin());
  }
}

void Interpreter::execLaunch(gpu::LaunchOp launch) {
  auto size = [&](Value v) { return get(v).i; };
  int64_t grid[3] = {size(launch.getGridSizeX()), size(launch.getGridSizeY()),
                     size(launch.getGridSizeZ())};
  int64_t threads[3] = {size(launch.getBlockSizeX()),
                        size(launch.getBlockSizeY()),
                        size(launch.getBlockSizeZ())};
  if (threads[1] != 1 || threads[2] != 1 || threads[0] % 32 != 0)
    fail("blocks must be whole warps along x", launch);
  int64_t dynamicBytes = launch.getDynamicSharedMemorySize()
                             ? get(launch.getDynamicSharedMemorySize()).i
                             : 0;
  mlir::Block &body = launch.getBody().front();
  std::shared_ptr<const SlotMap> slots = numberValues(body);
  for (int64_t bz = 0; bz < grid[2]; ++bz)
    for (int64_t by = 0; by < grid[1]; ++by)
      for (int64_t bx = 0; bx < grid[0]; ++bx) {
        Block block;
        // Workgroup memory starts poisoned (0x7f bytes: huge floats), so a
        // read before a write shows.
        SmallVector<Val> workgroup;
        for (BlockArgument a : launch.getWorkgroupAttributions()) {
          Val v;
          v.memref = allocate(cast<MemRefType>(a.getType()), launch);
          std::fill(v.memref->bytes->begin(), v.memref->bytes->end(), 0x7f);
          v.memref->inFlight =
              std::make_shared<std::vector<uint16_t>>(v.memref->bytes->size());
          workgroup.push_back(v);
        }
        auto dynamicShared = std::make_shared<std::vector<uint8_t>>(
            static_cast<size_t>(dynamicBytes));
        std::fill(dynamicShared->begin(), dynamicShared->end(), 0x7f);
        auto dynamicInFlight = std::make_shared<std::vector<uint16_t>>(
            static_cast<size_t>(dynamicBytes));
        std::vector<std::unique_ptr<Interpreter>> threadsOf;
        for (int64_t t = 0; t < threads[0]; ++t) {
          if (t % 32 == 0)
            block.warps.push_back(std::make_unique<Warp>());
          auto fiber = std::make_unique<Fiber>();
          Warp *warp = block.warps.back().get();
          fiber->lane = static_cast<int>(t % 32);
          fiber->warp = warp;
          warp->lanes[fiber->lane] = fiber.get();
          warp->size = fiber->lane + 1;
          threadsOf.push_back(std::make_unique<Interpreter>(this, slots));
          Interpreter *thread = threadsOf.back().get();
          SmallVector<Val> args;
          for (int64_t id : {bx, by, bz})
            args.push_back(Val::ofInt(id));
          for (int64_t id : {t, int64_t(0), int64_t(0)})
            args.push_back(Val::ofInt(id));
          for (int64_t n : grid)
            args.push_back(Val::ofInt(n));
          for (int64_t n : threads)
            args.push_back(Val::ofInt(n));
          args.append(workgroup.begin(), workgroup.end());
          for (BlockArgument a : launch.getPrivateAttributions()) {
            Val v;
            v.memref = allocate(cast<MemRefType>(a.getType()), launch);
            args.push_back(v);
          }
          Fiber *self = fiber.get();
          fiber->body = [thread, self, &body, args, dynamicShared,
                         dynamicInFlight, dynamicBytes]() {
            // gpu.dynamic_shared_memory is the block's buffer.
            body.walk([&](gpu::DynamicSharedMemoryOp op) {
              Val v;
              v.memref = std::make_shared<MemRefVal>();
              v.memref->bytes = dynamicShared;
              v.memref->inFlight = dynamicInFlight;
              v.memref->element = IntegerType::get(op.getContext(), 8);
              v.memref->sizes = {dynamicBytes};
              v.memref->strides = {1};
              thread->set(op, v);
            });
            thread->run(body, args);
            if (!self->committed.empty() || !self->openGroup.empty())
              fail("a thread ends with cp.async copies it never waited for",
                   body.getParentOp());
          };
          block.fibers.push_back(std::move(fiber));
        }
        runBlock(block);
      }
}

//===----------------------------------------------------------------------===//
// Inputs, reference and comparison.
//===----------------------------------------------------------------------===//

struct Operands {
  std::shared_ptr<MemRefVal> q, k, v, segments, mask, out, lse, sinks;
};

/// The document of global position p, when the function takes segment
/// ids (a mask_mod's operand): documents of 23 positions.
int64_t documentOf(int64_t p) { return p / 23; }

/// Calls `fn(byte)` for every element of `m`, in row-major order of its
/// logical indices (through its strides).
void forEachElement(const MemRefVal &m, function_ref<void(int64_t)> fn) {
  int64_t n = 1;
  for (int64_t size : m.sizes)
    n *= size;
  SmallVector<int64_t> at(m.sizes.size(), 0);
  for (int64_t e = 0; e < n; ++e) {
    int64_t rest = e;
    for (int64_t d = static_cast<int64_t>(at.size()) - 1; d >= 0; --d) {
      at[d] = rest % m.sizes[d];
      rest /= m.sizes[d];
    }
    fn(m.address(at, nullptr));
  }
}

std::vector<double> readAll(const MemRefVal &m) {
  std::vector<double> out;
  forEachElement(m, [&](int64_t byte) {
    out.push_back(isa<FloatType>(m.element)
                      ? loadElement(m, byte)
                      : static_cast<double>(loadInt(m, byte)));
  });
  return out;
}

/// The explicit mask's pattern: a pair is allowed unless (7i + 3j) % 5 == 0.
bool explicitAllows(int64_t i, int64_t j) { return (7 * i + 3 * j) % 5 != 0; }

/// What the reference needs of the attention the function computes.
struct Problem {
  ::cp::reference::Shape shape;
  double scale;
  std::function<bool(int64_t, int64_t, int64_t, int64_t)> allowed;
  std::function<double(double, int64_t, int64_t, int64_t, int64_t)> scoreMod,
      scoreModGrad;
};

Problem problemOf(const Operands &ops) {
  const auto &q = ops.q->sizes, &k = ops.k->sizes, &v = ops.v->sizes;
  Problem p;
  p.shape = {q[0], q[1], k[1], q[2], k[2], q[3], v[3]};
  p.scale = 1.0 / std::sqrt(static_cast<double>(p.shape.headDim));
  int64_t window = 0;
  StringRef mask = maskKind;
  if (mask.consume_front("window:"))
    mask.getAsInteger(10, window);
  bool causal = maskKind == "causal";
  bool segments = ops.segments != nullptr, explicitMask = ops.mask != nullptr;
  p.allowed = [=](int64_t, int64_t, int64_t i, int64_t j) {
    int64_t qp = qOffset + i, kp = kvOffset + j;
    if (causal && kp > qp)
      return false;
    if (window > 0 && !(kp <= qp && qp - window < kp))
      return false;
    if (segments && documentOf(qp) != documentOf(kp))
      return false;
    return !explicitMask || explicitAllows(i, j);
  };
  double cap = softcap;
  p.scoreMod = [cap](double s, int64_t, int64_t, int64_t, int64_t) {
    return cap > 0 ? cap * std::tanh(s / cap) : s;
  };
  p.scoreModGrad = [cap](double s, int64_t, int64_t, int64_t, int64_t) {
    double t = cap > 0 ? std::tanh(s / cap) : 0;
    return cap > 0 ? 1 - t * t : 1.0;
  };
  return p;
}

double noBias(int64_t, int64_t, int64_t, int64_t) { return 0; }

/// The largest |got - want| (NaN counts as infinite; equal infinities as
/// 0).
double maxAbsError(const std::vector<double> &got,
                   const std::vector<double> &want) {
  double worst = 0;
  for (size_t e = 0; e < got.size(); ++e) {
    double err = std::isinf(want[e]) && got[e] == want[e]
                     ? 0
                     : std::fabs(got[e] - want[e]);
    worst = std::max(worst, std::isnan(err) ? INFINITY : err);
  }
  return worst;
}

/// Stores `values` (row-major over the logical indices) into `m`.
void writeAll(const MemRefVal &m, const std::vector<double> &values) {
  size_t e = 0;
  forEachElement(
      m, [&](int64_t byte) { store(m, byte, Val::ofFloat(values[e++])); });
}

/// Which kernel the function's launches are: "mma" when some use the
/// tensor cores, else "simt".
const char *kernelKind(func::FuncOp func) {
  bool mma = func.walk([](NVVM::MmaOp) { return WalkResult::interrupt(); })
                 .wasInterrupted();
  return mma ? "mma" : "simt";
}

void printResult(bool ok, const Problem &p, const std::string &errors,
                 func::FuncOp func) {
  const ::cp::reference::Shape &s = p.shape;
  std::printf("%s %s: B=%lld H=%lld Hkv=%lld Sq=%lld Sk=%lld D=%lld Dv=%lld "
              "mask=%s %s tolerance=%.3g kernel=%s\n",
              ok ? "PASS" : "FAIL", funcName.c_str(), (long long)s.batch,
              (long long)s.heads, (long long)s.kvHeads, (long long)s.queries,
              (long long)s.keys, (long long)s.headDim, (long long)s.valueDim,
              maskKind.c_str(), errors.c_str(), static_cast<double>(tolerance),
              kernelKind(func));
}

int compare(const Operands &ops, func::FuncOp func) {
  Problem p = problemOf(ops);
  const ::cp::reference::Shape &shape = p.shape;
  std::vector<double> qv = readAll(*ops.q), kv = readAll(*ops.k),
                      vv = readAll(*ops.v), got = readAll(*ops.out);
  std::vector<double> want(got.size()),
      lse(shape.batch * shape.heads * shape.queries);
  std::vector<double> sinks;
  if (ops.sinks)
    sinks = readAll(*ops.sinks);
  ::cp::reference::attention<double>(
      shape, qv.data(), kv.data(), vv.data(), want.data(), 0, shape.queries,
      p.scale, p.allowed, noBias, lse.data(), p.scoreMod,
      ops.sinks ? sinks.data() : nullptr);
  double maxError = maxAbsError(got, want);
  double lseError = ops.lse ? maxAbsError(readAll(*ops.lse), lse) : 0;
  bool ok = maxError <= tolerance && lseError <= tolerance;
  char errors[96];
  std::snprintf(errors, sizeof errors, "max_abs_error=%.3g lse_error=%.3g",
                maxError, lseError);
  printResult(ok, p, errors, func);
  return ok ? 0 : 1;
}

/// The backward's operands: the inputs, o and lse from the reference
/// forward, dO random.
struct GradOperands {
  std::shared_ptr<MemRefVal> q, k, v, segments, mask, o, lse, dout, dq, dk,
      dv;
  Operands forward() const { return {q, k, v, segments, mask, o, lse}; }
};

/// Fills o and lse with the reference forward of q, k, v (rounded to their
/// storage types, as a forward kernel would leave them).
void prepareGrad(const GradOperands &g) {
  Problem p = problemOf(g.forward());
  const ::cp::reference::Shape &s = p.shape;
  std::vector<double> qv = readAll(*g.q), kv = readAll(*g.k),
                      vv = readAll(*g.v);
  std::vector<double> o(s.batch * s.heads * s.queries * s.valueDim),
      lse(s.batch * s.heads * s.queries);
  ::cp::reference::attention<double>(s, qv.data(), kv.data(), vv.data(),
                                     o.data(), 0, s.queries, p.scale, p.allowed,
                                     noBias, lse.data(), p.scoreMod);
  writeAll(*g.o, o);
  writeAll(*g.lse, lse);
}

int compareGrad(const GradOperands &g, func::FuncOp func) {
  Problem p = problemOf(g.forward());
  const ::cp::reference::Shape &s = p.shape;
  std::vector<double> qv = readAll(*g.q), kv = readAll(*g.k),
                      vv = readAll(*g.v), dout = readAll(*g.dout);
  std::vector<double> dq(qv.size()), dk(kv.size()), dv(vv.size());
  ::cp::reference::attentionGrad<double>(
      s, qv.data(), kv.data(), vv.data(), dout.data(), dq.data(), dk.data(),
      dv.data(), p.scale, p.allowed, noBias, p.scoreMod, p.scoreModGrad);
  // Gradients grow with the keys a query sees and the heads a GQA group
  // sums, and a 16-bit gradient is rounded relative to its size: each
  // error is measured against max(1, the gradient's largest magnitude).
  auto error = [](const std::vector<double> &got,
                  const std::vector<double> &want) {
    double largest = 1;
    for (double w : want)
      largest = std::max(largest, std::fabs(w));
    return maxAbsError(got, want) / largest;
  };
  double eq = error(readAll(*g.dq), dq), ek = error(readAll(*g.dk), dk),
         ev = error(readAll(*g.dv), dv);
  bool ok = eq <= tolerance && ek <= tolerance && ev <= tolerance;
  char errors[96];
  std::snprintf(errors, sizeof errors,
                "dq_error=%.3g dk_error=%.3g "
                "dv_error=%.3g",
                eq, ek, ev);
  printResult(ok, p, errors, func);
  return ok ? 0 : 1;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::cl::ParseCommandLineOptions(
      argc, argv, "cp-gpu-emulate: GPU attention kernels on the CPU\n");
  DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::cp::registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  llvm::SourceMgr sourceMgr;
  auto file = llvm::MemoryBuffer::getFileOrSTDIN(inputFile);
  if (!file)
    fail("cannot read " + inputFile);
  sourceMgr.AddNewSourceBuffer(std::move(*file), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;
  auto func = module->lookupSymbol<func::FuncOp>(funcName);
  if (!func)
    fail("no function @" + funcName);

  // Arguments: q, k, v, [segments], [mask], out, [lse].
  Operands ops;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  SmallVector<Val> args;
  SmallVector<std::shared_ptr<MemRefVal>> memrefs;
  for (BlockArgument a : func.getArguments()) {
    auto type = dyn_cast<MemRefType>(a.getType());
    if (!type)
      fail("arguments must be memrefs");
    Val v;
    v.memref = allocate(type, func);
    memrefs.push_back(v.memref);
    args.push_back(v);
  }
  size_t n = memrefs.size();
  auto fillRandom = [&](const std::shared_ptr<MemRefVal> &m) {
    int64_t count = static_cast<int64_t>(m->bytes->size()) / m->elementBytes();
    for (int64_t e = 0; e < count; ++e)
      store(*m, e * m->elementBytes(), Val::ofFloat(uniform(rng)));
  };
  auto fillNaN = [&](const std::shared_ptr<MemRefVal> &m) {
    for (int64_t e = 0;
         e < static_cast<int64_t>(m->bytes->size()) / m->elementBytes(); ++e)
      store(*m, e * m->elementBytes(), Val::ofFloat(NAN));
  };
  // Segment ids and an explicit mask follow v when the function takes
  // them (a rank-1 and a rank-2 memref).
  size_t next = 3;
  std::shared_ptr<MemRefVal> segments, mask;
  if (next < n && memrefs[next]->sizes.size() == 1 &&
      isa<IntegerType>(memrefs[next]->element))
    segments = memrefs[next++];
  if (next < n && memrefs[next]->sizes.size() == 2)
    mask = memrefs[next++];
  std::shared_ptr<MemRefVal> sinks;
  if (!grad && next < n && memrefs[next]->sizes.size() == 1 &&
      isa<FloatType>(memrefs[next]->element)) {
    sinks = memrefs[next++];
    for (int64_t h = 0; h < sinks->sizes[0]; ++h)
      store(*sinks, sinks->address({h}, func),
            Val::ofFloat(h == 0 ? -INFINITY : 1.5 * h - 1.0));
  }
  if (segments)
    for (int64_t p = 0; p < segments->sizes[0]; ++p)
      store(*segments, segments->address({p}, func),
            Val::ofInt(documentOf(p)));
  if (mask)
    for (int64_t i = 0; i < mask->sizes[0]; ++i)
      for (int64_t j = 0; j < mask->sizes[1]; ++j)
        store(*mask, mask->address({i, j}, func),
              Val::ofInt(explicitAllows(i, j)));
  if (grad) {
    // Arguments: q, k, v, [segments], [mask], o, lse, do, dq, dk, dv.
    if (n - next != 6)
      fail("--grad expects q, k, v, [segments], [mask], o, lse, do, dq, dk, "
           "dv");
    GradOperands g{memrefs[0],        memrefs[1],        memrefs[2],
                   segments,          mask,              memrefs[next],
                   memrefs[next + 1], memrefs[next + 2], memrefs[next + 3],
                   memrefs[next + 4], memrefs[next + 5]};
    for (auto &m : {g.q, g.k, g.v, g.dout})
      fillRandom(m);
    prepareGrad(g);
    for (auto &m : {g.dq, g.dk, g.dv})
      fillNaN(m);
    Interpreter host;
    host.run(func.getBody().front(), args);
    return compareGrad(g, func);
  }
  if (n < 4)
    fail("expected q, k, v, [segments], [mask], out, [lse]");
  ops.q = memrefs[0];
  ops.k = memrefs[1];
  ops.v = memrefs[2];
  ops.segments = segments;
  ops.mask = mask;
  ops.sinks = sinks;
  if (next >= n)
    fail("no output argument");
  ops.out = memrefs[next++];
  if (next < n)
    ops.lse = memrefs[next];
  for (auto &m : {ops.q, ops.k, ops.v})
    fillRandom(m);
  // Outputs start as NaN: an element the kernel never writes fails.
  for (auto &m : {ops.out, ops.lse})
    if (m)
      fillNaN(m);

  Interpreter host;
  host.run(func.getBody().front(), args);
  return compare(ops, func);
}
