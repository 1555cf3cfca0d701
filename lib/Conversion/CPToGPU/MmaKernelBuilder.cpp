//===- MmaKernelBuilder.cpp - what both tensor-core kernels build with ----===//

#include "MmaKernelBuilder.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::cp;
using namespace mlir::cp::detail;

std::string
mlir::cp::detail::mmaOperandsUnsupportedReason(ArrayRef<StringRef> names,
                                               ArrayRef<MemRefType> memrefs,
                                               int64_t d, int64_t dv) {
  std::string reason;
  llvm::raw_string_ostream os(reason);
  Type elt = memrefs.front().getElementType();
  if (!elt.isF16() && !elt.isBF16()) {
    os << names.front() << " is " << elt << "; mma.sync takes f16 or bf16";
    return reason;
  }
  for (auto [name, type] : llvm::zip(names, memrefs))
    if (type.getElementType() != elt) {
      os << names.front() << " is " << elt << " but " << name << " is "
         << type.getElementType() << "; mma.sync takes one element type";
      return reason;
    }
  if (ShapedType::isDynamic(d) || ShapedType::isDynamic(dv)) {
    os << "D or Dv is dynamic; the kernel's tiles need them static";
    return reason;
  }
  if (d % mma::kK != 0 || dv % mma::kK != 0 || d > 128 || dv > 128) {
    os << "D = " << d << " and Dv = " << dv
       << " must be multiples of 16 and at most 128";
    return reason;
  }
  // cp.async copies 16 aligned bytes: rows must be contiguous and start
  // at multiples of 8 elements from the (aligned) base.
  for (auto [name, type] : llvm::zip(names, memrefs)) {
    SmallVector<int64_t> strides;
    int64_t offset;
    bool aligned = succeeded(type.getStridesAndOffset(strides, offset)) &&
                   strides.back() == 1 && !ShapedType::isDynamic(offset) &&
                   offset % kMmaChunk == 0;
    for (int64_t stride : ArrayRef<int64_t>(strides).drop_back())
      aligned &= !ShapedType::isDynamic(stride) && stride % kMmaChunk == 0;
    if (!aligned) {
      os << name << " has layout " << type.getLayout()
         << "; cp.async copies 16-byte rows: the last dim must be "
            "contiguous, and the offset and the other strides static "
            "multiples of 8 elements";
      return reason;
    }
  }
  return reason;
}

gpu::LaunchOp MmaKernelBuilder::launchWarps(Value gridX, Value gridY,
                                            Value gridZ, int64_t sharedBytes) {
  Value one = idx(1);
  Value bytes = arith::ConstantIntOp::create(b, loc, sharedBytes, 32);
  auto launch = gpu::LaunchOp::create(
      b, loc, gridX, gridY, gridZ, idx(kMmaThreads), one, one, bytes,
      /*asyncTokenType=*/nullptr, /*asyncDependencies=*/{});
  b.setInsertionPointToStart(&launch.getBody().front());
  tid = launch.getThreadIds().x;
  warp = arith::DivUIOp::create(b, loc, tid, idx(mma::kWarpSize));
  laneId = arith::RemUIOp::create(b, loc, tid, idx(mma::kWarpSize));
  return launch;
}

MmaKernelBuilder::AddressesInLoop::AddressesInLoop(MmaKernelBuilder &builder)
    : builder(builder), tid(builder.tid), laneId(builder.laneId) {
  OpBuilder &b = builder.b;
  Location loc = builder.loc;
  auto opaque = [&](Value v) -> Value {
    Type i32 = b.getI32Type();
    Value in = arith::IndexCastUIOp::create(b, loc, i32, v);
    auto move = LLVM::InlineAsmOp::create(
        b, loc, i32, ValueRange{in}, kOpaqueMove, "=r,r",
        /*has_side_effects=*/true, /*is_align_stack=*/false,
        LLVM::tailcallkind::TailCallKind::None, /*asm_dialect=*/{},
        /*operand_attrs=*/{});
    return arith::IndexCastUIOp::create(b, loc, b.getIndexType(),
                                        move.getResult(0));
  };
  builder.tid = opaque(tid);
  builder.laneId = opaque(laneId);
}

MmaKernelBuilder::AddressesInLoop::~AddressesInLoop() {
  builder.tid = tid;
  builder.laneId = laneId;
}

MmaKernelBuilder::SharedViews::SharedViews(MmaKernelBuilder &builder)
    : builder(builder) {
  OpBuilder &b = builder.b;
  auto workgroup =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  shared = gpu::DynamicSharedMemoryOp::create(
      b, builder.loc,
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                      MemRefLayoutAttrInterface(), workgroup));
}

Value MmaKernelBuilder::SharedViews::next(ArrayRef<int64_t> shape, Type type) {
  OpBuilder &b = builder.b;
  if (!type)
    type = builder.elt;
  auto workgroup =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  auto memref =
      MemRefType::get(shape, type, MemRefLayoutAttrInterface(), workgroup);
  Value v = memref::ViewOp::create(b, builder.loc, memref, shared,
                                   builder.idx(offset), ValueRange{});
  offset += memref.getNumElements() * (type.getIntOrFloatBitWidth() / 8);
  return v;
}

Value MmaKernelBuilder::quadReduce(Value v, bool isMax) {
  for (int offset : mma::kRowReduceMasks) {
    Value other = gpu::ShuffleOp::create(b, loc, v, offset, mma::kWarpSize,
                                         gpu::ShuffleMode::XOR)
                      .getShuffleResult();
    v = isMax ? fmax(v, other) : fadd(v, other);
  }
  return v;
}

void MmaKernelBuilder::copyTileAsync(Value src, Value batch, Value h, Value r0,
                                     Value validRows, Value dst,
                                     ValueRange prefix, int64_t cols) {
  int64_t chunksPerRow = cols / kMmaChunk;
  int64_t perThread = kMmaTileRows * chunksPerRow / kMmaThreads;
  auto tokenType = nvgpu::DeviceAsyncTokenType::get(b.getContext());
  for (int64_t j = 0; j < perThread; ++j) {
    Value chunk = add(tid, idx(j * kMmaThreads));
    Value row = arith::DivUIOp::create(b, loc, chunk, idx(chunksPerRow));
    Value col = mul(arith::RemUIOp::create(b, loc, chunk, idx(chunksPerRow)),
                    idx(kMmaChunk));
    Value valid = lessThan(row, validRows);
    Value srcRow = select(valid, add(r0, row), idx(0));
    Value srcElements = select(valid, idx(kMmaChunk), idx(0));
    SmallVector<Value> dstAt(prefix);
    dstAt.append({row, col});
    nvgpu::DeviceAsyncCopyOp::create(b, loc, tokenType, dst, dstAt, src,
                                     ValueRange{batch, h, srcRow, col},
                                     b.getIndexAttr(kMmaChunk), srcElements,
                                     /*bypassL1=*/b.getUnitAttr());
  }
}

void MmaKernelBuilder::copyRowAsync(Value src, Value batch, Value h, Value r0,
                                    Value dst, ValueRange prefix,
                                    int64_t firstThread) {
  constexpr int64_t perChunk = 4; // f32 values in 16 bytes
  constexpr int64_t chunks = kMmaTileRows / perChunk;
  Value chunk = sub(tid, idx(firstThread));
  Value mine = andI(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                          tid, idx(firstThread)),
                    lessThan(chunk, idx(chunks)));
  scf::IfOp::create(b, loc, mine, [&](OpBuilder &, Location) {
    Value col = mul(chunk, idx(perChunk));
    SmallVector<Value> dstAt(prefix);
    dstAt.push_back(col);
    nvgpu::DeviceAsyncCopyOp::create(
        b, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()), dst, dstAt,
        src, ValueRange{batch, h, add(r0, col)}, b.getIndexAttr(perChunk),
        /*srcElements=*/Value(), /*bypassL1=*/b.getUnitAttr());
    scf::YieldOp::create(b, loc);
  });
}

void MmaKernelBuilder::commitCopies() {
  NVVM::CpAsyncCommitGroupOp::create(b, loc);
}

void MmaKernelBuilder::waitCopies(int pending) {
  NVVM::CpAsyncWaitGroupOp::create(b, loc, b.getI32IntegerAttr(pending));
}

SmallVector<Value, 4> MmaKernelBuilder::ldmatrix(Value tile, ValueRange prefix,
                                                 Value row, Value col,
                                                 bool transpose) {
  SmallVector<Value> at(prefix);
  at.append({row, col});
  auto fragments = VectorType::get({4, 2}, elt);
  Value all = nvgpu::LdMatrixOp::create(b, loc, fragments, tile, at,
                                        b.getBoolAttr(transpose),
                                        b.getI32IntegerAttr(4));
  SmallVector<Value, 4> regs;
  for (int64_t i = 0; i < 4; ++i)
    regs.push_back(vector::ExtractOp::create(b, loc, all, i));
  return regs;
}

Accumulator MmaKernelBuilder::mmaSync(ArrayRef<Value> a, ArrayRef<Value> bFrag,
                                      ArrayRef<Value> c) {
  bool bf16 = elt.isBF16();
  // bf16 pairs travel as i32 registers (the NVVM op's operand type for
  // bf16); f16 pairs as vector<2xf16>.
  auto operand = [&](Value pair) -> Value {
    if (!bf16)
      return pair;
    return LLVM::BitcastOp::create(b, loc, b.getI32Type(), pair);
  };
  SmallVector<Value> aOps, bOps;
  for (Value v : a)
    aOps.push_back(operand(v));
  for (Value v : bFrag)
    bOps.push_back(operand(v));
  auto type = bf16 ? NVVM::MMATypes::bf16 : NVVM::MMATypes::f16;
  Type result =
      LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32});
  Value d = NVVM::MmaOp::create(
      b, loc, result, aOps, bOps, c, {mma::kM, mma::kN, mma::kK},
      /*b1Op=*/std::nullopt, /*intOverflow=*/std::nullopt,
      std::array<NVVM::MMATypes, 2>{type, type},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  Accumulator out;
  for (int64_t i = 0; i < 4; ++i)
    out.push_back(LLVM::ExtractValueOp::create(b, loc, d, i));
  return out;
}

Value MmaKernelBuilder::pack(Value x, Value y) {
  auto pairType = VectorType::get({2}, elt);
  return vector::FromElementsOp::create(
      b, loc, pairType,
      ValueRange{arith::TruncFOp::create(b, loc, elt, x),
                 arith::TruncFOp::create(b, loc, elt, y)});
}

SmallVector<MmaKernelBuilder::Fragment>
MmaKernelBuilder::loadA(Value tile, ValueRange prefix, Value row0,
                        int64_t cols) {
  mma::PositionOf<IndexExpr> at = mma::ldmatrixAddressA(lane());
  SmallVector<Fragment> out;
  for (int64_t slab = 0; slab < cols / mma::kK; ++slab)
    out.push_back(ldmatrix(tile, prefix, add(row0, at.row.v),
                           add(at.col.v, idx(slab * mma::kK)),
                           /*transpose=*/false));
  return out;
}

SmallVector<MmaKernelBuilder::Fragment>
MmaKernelBuilder::accumulatorsAsA(ArrayRef<Accumulator> acc) {
  SmallVector<Fragment> out;
  for (size_t t = 0; 2 * t < acc.size(); ++t) {
    auto reg = [&](int i) {
      mma::AccumulatorSlot slot = mma::accumulatorForA(i);
      return acc[2 * t + slot.nTile][slot.reg];
    };
    out.push_back({pack(reg(0), reg(1)), pack(reg(2), reg(3)),
                   pack(reg(4), reg(5)), pack(reg(6), reg(7))});
  }
  return out;
}

void MmaKernelBuilder::mmaRowsTrans(ArrayRef<Fragment> a, Value tile,
                                    ValueRange prefix, Value kRow0,
                                    int64_t col0,
                                    MutableArrayRef<Accumulator> acc) {
  mma::PositionOf<IndexExpr> at = mma::ldmatrixAddressBColumnsTrans(lane());
  for (size_t slab = 0; slab < a.size(); ++slab)
    for (size_t pair = 0; 2 * pair < acc.size(); ++pair) {
      SmallVector<Value, 4> frag = ldmatrix(
          tile, prefix, add(kRow0, add(at.row.v, idx(slab * mma::kK))),
          add(at.col.v, idx(col0 + pair * 2 * mma::kN)), /*transpose=*/true);
      acc[2 * pair] = mmaSync(a[slab], {frag[0], frag[1]}, acc[2 * pair]);
      acc[2 * pair + 1] =
          mmaSync(a[slab], {frag[2], frag[3]}, acc[2 * pair + 1]);
    }
}

void MmaKernelBuilder::mmaColumns(ArrayRef<Fragment> a, Value tile,
                                  ValueRange prefix,
                                  MutableArrayRef<Accumulator> acc,
                                  Value nRow0) {
  mma::PositionOf<IndexExpr> at = mma::ldmatrixAddressBRows(lane());
  Value row0 = nRow0 ? add(at.row.v, nRow0) : at.row.v;
  for (size_t slab = 0; slab < a.size(); ++slab)
    for (size_t pair = 0; 2 * pair < acc.size(); ++pair) {
      SmallVector<Value, 4> frag = ldmatrix(
          tile, prefix, add(row0, idx(pair * 2 * mma::kN)),
                   add(at.col.v, idx(slab * mma::kK)), /*transpose=*/false);
      acc[2 * pair] = mmaSync(a[slab], {frag[0], frag[1]}, acc[2 * pair]);
      acc[2 * pair + 1] =
          mmaSync(a[slab], {frag[2], frag[3]}, acc[2 * pair + 1]);
    }
}
