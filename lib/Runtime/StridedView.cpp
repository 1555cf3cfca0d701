//===- StridedView.cpp - N-d strided views of MLIR memref buffers ---------===//

#include "StridedView.h"

#include <cstring>

using namespace cp::runtime;

StridedView StridedView::fromDescriptor(int64_t rank, void *descriptor,
                                        int64_t elementBytes) {
  // Layout of StridedMemRefType<T, rank>: two pointers, then int64 offset,
  // sizes[rank], strides[rank].
  auto *pointers = static_cast<char **>(descriptor);
  auto *fields = reinterpret_cast<int64_t *>(pointers + 2);
  StridedView view;
  view.elementBytes = elementBytes;
  view.base = pointers[1] + fields[0] * elementBytes;
  view.sizes.assign(fields + 1, fields + 1 + rank);
  view.strides.assign(fields + 1 + rank, fields + 1 + 2 * rank);
  return view;
}

StridedView StridedView::contiguous(void *data, std::vector<int64_t> sizes,
                                    int64_t elementBytes) {
  StridedView view;
  view.base = static_cast<char *>(data);
  view.elementBytes = elementBytes;
  view.strides.assign(sizes.size(), 1);
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 2; d >= 0; --d)
    view.strides[d] = view.strides[d + 1] * sizes[d + 1];
  view.sizes = std::move(sizes);
  return view;
}

int64_t StridedView::numElements() const {
  int64_t n = 1;
  for (int64_t size : sizes)
    n *= size;
  return n;
}

bool StridedView::isContiguous() const {
  int64_t expected = 1;
  for (int64_t d = rank() - 1; d >= 0; --d) {
    if (sizes[d] != 1 && strides[d] != expected)
      return false;
    expected *= sizes[d];
  }
  return true;
}

StridedView StridedView::slice(int64_t dim, int64_t begin,
                               int64_t count) const {
  StridedView view = *this;
  view.base += begin * strides[dim] * elementBytes;
  view.sizes[dim] = count;
  return view;
}

std::string StridedView::shapeString() const {
  std::string s;
  for (int64_t d = 0; d < rank(); ++d)
    s += (d ? "x" : "") + std::to_string(sizes[d]);
  return s.empty() ? "scalar" : s;
}

/// Copies the sub-block starting at dim `d`; the innermost dim is a memcpy
/// when both sides are unit-stride there.
static void copyDim(const StridedView &from, const StridedView &to, int64_t d,
                    char *src, char *dst) {
  int64_t eb = from.elementBytes;
  if (d == from.rank() - 1) {
    if (from.strides[d] == 1 && to.strides[d] == 1) {
      std::memcpy(dst, src, from.sizes[d] * eb);
      return;
    }
    for (int64_t i = 0; i < from.sizes[d]; ++i)
      std::memcpy(dst + i * to.strides[d] * eb, src + i * from.strides[d] * eb,
                  eb);
    return;
  }
  for (int64_t i = 0; i < from.sizes[d]; ++i)
    copyDim(from, to, d + 1, src + i * from.strides[d] * eb,
            dst + i * to.strides[d] * eb);
}

void cp::runtime::copyElements(const StridedView &from, const StridedView &to) {
  if (from.numElements() == 0)
    return;
  if (from.rank() == 0) {
    std::memcpy(to.base, from.base, from.elementBytes);
    return;
  }
  copyDim(from, to, 0, from.base, to.base);
}
