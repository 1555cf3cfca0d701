//===- Bf16.h - bf16 bits of a float and back -------------------*- C++ -*-===//
//
// The one conversion the drivers of compiled cp programs use to write bf16
// inputs and read bf16 outputs: round to nearest even, as the compiled
// kernels' truncf does.
//
//===----------------------------------------------------------------------===//

#ifndef CP_TESTSUPPORT_BF16_H
#define CP_TESTSUPPORT_BF16_H

#include <cstdint>
#include <cstring>

namespace cp::tools {

/// bf16 bits of `f`, rounded to nearest even.
inline uint16_t toBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  bits += 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

/// The float that bf16 bits `h` stand for.
inline float fromBf16(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

} // namespace cp::tools

#endif // CP_TESTSUPPORT_BF16_H
