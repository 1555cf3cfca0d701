//===- StridedView.h - N-d strided views of MLIR memref buffers -*- C++ -*-===//
//
// A collective's buffers arrive as MLIR memref descriptors of any rank and
// stride. StridedView reads a descriptor and copies between views, which is
// how the runtime packs inputs for MPI and unpacks what it receives.
//
//===----------------------------------------------------------------------===//

#ifndef CP_RUNTIME_STRIDEDVIEW_H
#define CP_RUNTIME_STRIDEDVIEW_H

#include <cstdint>
#include <string>
#include <vector>

namespace cp::runtime {

struct StridedView {
  char *base = nullptr; // first element
  int64_t elementBytes = 0;
  std::vector<int64_t> sizes;   // elements per dim
  std::vector<int64_t> strides; // in elements

  /// Reads a ranked MLIR descriptor {allocated, aligned, offset, sizes[rank],
  /// strides[rank]} as passed inside an unranked memref.
  static StridedView fromDescriptor(int64_t rank, void *descriptor,
                                    int64_t elementBytes);
  /// A dense row-major view of `sizes` over `data`.
  static StridedView contiguous(void *data, std::vector<int64_t> sizes,
                                int64_t elementBytes);

  int64_t rank() const { return static_cast<int64_t>(sizes.size()); }
  int64_t numElements() const;
  int64_t numBytes() const { return numElements() * elementBytes; }
  /// Row-major dense, so the bytes can go to MPI as they are.
  bool isContiguous() const;
  /// The sub-view [begin, begin + count) along `dim`.
  StridedView slice(int64_t dim, int64_t begin, int64_t count) const;
  /// "1x4x64x32".
  std::string shapeString() const;
};

/// Copies every element of `from` into `to`; both have the same sizes.
void copyElements(const StridedView &from, const StridedView &to);

} // namespace cp::runtime

#endif // CP_RUNTIME_STRIDEDVIEW_H
