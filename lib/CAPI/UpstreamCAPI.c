//===- UpstreamCAPI.c - libCPUpstreamCAPI.so --------------------*- C -*-===//
//
// The upstream MLIR C API, linked in whole from Debian's static archives
// (lib/CAPI/CMakeLists.txt says why it is a library of its own). This file
// only gives the library a source; its contents are the archives' objects.
//
//===----------------------------------------------------------------------===//

typedef int cpUpstreamCAPIHasNoCodeOfItsOwn;
