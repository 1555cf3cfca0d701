//===- CudaDriver.h - the CUDA context and checked driver calls -*- C++ -*-===//
//
// The runtime's one CUDA context (the primary context of the chosen device,
// made current on first use) and the check that turns a CUresult into an
// error naming the rank, the call and CUDA's reason.
//
//===----------------------------------------------------------------------===//

#ifndef CP_RUNTIME_GPU_CUDADRIVER_H
#define CP_RUNTIME_GPU_CUDADRIVER_H

#include <cuda.h>

#include <string>

namespace cp::runtime {

/// Makes the runtime's context current on this thread, creating it first.
void ensureCudaContext();

/// Ends every rank unless `result` is CUDA_SUCCESS.
void checkCuda(CUresult result, const std::string &call,
               const char *driverFunction);

} // namespace cp::runtime

#endif // CP_RUNTIME_GPU_CUDADRIVER_H
