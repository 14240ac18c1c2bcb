// binary16 conversions (common/half.h).
#include "common/half.h"

#include <cmath>
#include <cstring>

namespace flowrag {

uint16_t FloatToHalf(float x) {
  uint32_t f;
  std::memcpy(&f, &x, sizeof f);
  const uint16_t sign = static_cast<uint16_t>((f >> 16) & 0x8000u);
  uint32_t abs = f & 0x7fffffffu;
  if (abs > 0x7f800000u) return sign | 0x7e00u;   // NaN
  if (abs >= 0x477ff000u) return sign | 0x7c00u;  // >= 65520 rounds to infinity
  if (abs < 0x38800000u) {                        // below 2^-14: a subnormal half
    // |x|·2^24 is exact (a power-of-two scale); nearbyint rounds half to even.
    const float units = std::nearbyint(std::fabs(x) * 16777216.0f);
    return sign | static_cast<uint16_t>(units);  // 1024 is the smallest normal
  }
  abs += 0xfffu + ((abs >> 13) & 1u);  // round the 13 dropped bits to nearest even
  return sign | static_cast<uint16_t>((abs - 0x38000000u) >> 13);  // exponent bias 127 → 15
}

float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  uint32_t f;
  if (exponent == 0) {
    const float v = static_cast<float>(mantissa) * (1.0f / 16777216.0f);  // mantissa·2^-24
    std::memcpy(&f, &v, sizeof f);
    f |= sign;
  } else if (exponent == 31) {
    f = sign | 0x7f800000u | (mantissa << 13);
  } else {
    f = sign | ((exponent + 112) << 23) | (mantissa << 13);
  }
  float out;
  std::memcpy(&out, &f, sizeof out);
  return out;
}

bool FitsHalf(float x) { return std::isfinite(x) && std::fabs(x) < 65520.0f; }

}  // namespace flowrag
