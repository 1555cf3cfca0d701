//===- BufferizableOpInterfaceImpl.h - bufferization of cp ops --*- C++ -*-===//
//
// External models of BufferizableOpInterface for the cp tensor ops, so that
// one-shot-bufferize handles whole modules of cp IR.
//
//===----------------------------------------------------------------------===//

#ifndef CP_DIALECT_CP_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H
#define CP_DIALECT_CP_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H

namespace mlir {
class DialectRegistry;

namespace cp {
void registerBufferizableOpInterfaceExternalModels(DialectRegistry &registry);
} // namespace cp
} // namespace mlir

#endif // CP_DIALECT_CP_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H
