//===- DeviceMirror.h - memref descriptors and device copies ----*- C++ -*-===//
//
// What drivers of compiled cp programs share: the strided memref descriptor
// a _mlir_ciface_* entry takes, and, for GPU programs, device copies of
// host buffers made through the mgpu* functions of the loaded program's
// libcp_runtime_gpu (so the drivers need no CUDA of their own).
//
//===----------------------------------------------------------------------===//

#ifndef CP_TESTSUPPORT_DEVICEMIRROR_H
#define CP_TESTSUPPORT_DEVICEMIRROR_H

#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace cp::tools {

/// An MLIR strided memref descriptor of rank R.
template <int R> struct Descriptor {
  void *allocated;
  void *aligned;
  int64_t offset;
  int64_t sizes[R];
  int64_t strides[R];
};

/// A dense row-major descriptor over `data` of the R sizes at `sizes`.
template <int R>
Descriptor<R> denseDescriptor(void *data, const int64_t *sizes) {
  Descriptor<R> d{data, data, 0, {}, {}};
  int64_t stride = 1;
  for (int i = R - 1; i >= 0; --i) {
    d.sizes[i] = sizes[i];
    d.strides[i] = stride;
    stride *= sizes[i];
  }
  return d;
}

/// Device copies of a call's buffers (--device gpu). The mgpu* functions
/// come from the loaded program's libcp_runtime_gpu, so a driver needs no
/// CUDA of its own.
class DeviceMirror {
public:
  DeviceMirror() {
    alloc = reinterpret_cast<Alloc>(dlsym(RTLD_DEFAULT, "mgpuMemAlloc"));
    copy = reinterpret_cast<Copy>(dlsym(RTLD_DEFAULT, "mgpuMemcpy"));
    release = reinterpret_cast<Free>(dlsym(RTLD_DEFAULT, "mgpuMemFree"));
    sync = reinterpret_cast<Sync>(dlsym(RTLD_DEFAULT, "mgpuStreamSynchronize"));
    if (!alloc || !copy || !release || !sync) {
      std::fprintf(stderr, "--device gpu needs a program compiled with "
                           "cp-compile --target=nvvm\n");
      std::exit(1);
    }
  }
  ~DeviceMirror() {
    for (Buffer &b : buffers)
      release(b.device, nullptr);
  }
  /// Points `d` at a device copy of its host buffer of `bytes` bytes.
  template <int R> void mirror(Descriptor<R> &d, size_t bytes) {
    void *device = alloc(bytes, nullptr, 0);
    copy(device, d.aligned, bytes, nullptr);
    buffers.push_back({d.aligned, device, bytes});
    d.allocated = d.aligned = device;
  }
  /// Copies every device buffer back to its host buffer.
  void copyBack() {
    sync(nullptr);
    for (Buffer &b : buffers)
      copy(b.host, b.device, b.bytes, nullptr);
    sync(nullptr);
  }
  void synchronize() { sync(nullptr); }

private:
  using Alloc = void *(*)(uint64_t, void *, int8_t);
  using Copy = void (*)(void *, void *, size_t, void *);
  using Free = void (*)(void *, void *);
  using Sync = void (*)(void *);
  struct Buffer {
    void *host, *device;
    size_t bytes;
  };
  Alloc alloc;
  Copy copy;
  Free release;
  Sync sync;
  std::vector<Buffer> buffers;
};

} // namespace cp::tools

#endif // CP_TESTSUPPORT_DEVICEMIRROR_H
