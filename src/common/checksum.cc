#include "common/checksum.h"

#include "common/hash.h"

namespace flowrag {

uint64_t StreamChecksum::Final() const {
  uint64_t h = Mix64(total_);
  for (uint64_t lane : lanes_) h = HashCombine(h, lane);
  uint64_t tail[kBlock / 8] = {};
  std::memcpy(tail, buf_, fill_);
  for (uint64_t w : tail) h = HashCombine(h, w);
  return Mix64(h);
}

}  // namespace flowrag
