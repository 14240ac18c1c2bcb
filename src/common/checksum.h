// StreamChecksum: the 64-bit checksum of persisted bytes (the store's
// snapshot parts, graph/graph_io.h; segment files, segment/segment_format.h).
//
// A byte stream fed in pieces of any size gives the same value as the same
// bytes fed at once: four independent multiply-rotate lanes over 32-byte
// blocks (~4 bytes per cycle, so a 170 MB part costs ~15 ms), then the
// lanes, the tail and the length mixed. Detects truncation, bit flips and
// overwritten ranges; not a MAC (anyone can recompute it).
//
// The values are part of the on-disk formats: they must never change for a
// given byte stream (tests/snapshot_persist_test.cc and the segment fixture
// of tests/segment_test.cc fail if they do).
//
// Thread-safety: a value; one object per stream, not shared while updated.
#ifndef FLOWRAG_COMMON_CHECKSUM_H_
#define FLOWRAG_COMMON_CHECKSUM_H_

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace flowrag {

class StreamChecksum {
 public:
  // Feeds `n` bytes at `data` (null allowed when n is 0). O(n).
  void Update(const void* data, size_t n) {
    if (n == 0) return;  // empty arrays may pass a null pointer
    const char* p = static_cast<const char*>(data);
    total_ += n;
    if (fill_ > 0) {
      const size_t take = std::min(n, kBlock - fill_);
      std::memcpy(buf_ + fill_, p, take);
      fill_ += take;
      p += take;
      n -= take;
      if (fill_ < kBlock) return;
      Block(buf_);
      fill_ = 0;
    }
    for (; n >= kBlock; p += kBlock, n -= kBlock) Block(p);
    std::memcpy(buf_, p, n);
    fill_ = n;
  }

  // The checksum of everything fed so far (the stream may continue).
  uint64_t Final() const;

  // The checksum of `n` bytes at `data` in one call.
  static uint64_t Of(const void* data, size_t n) {
    StreamChecksum c;
    c.Update(data, n);
    return c.Final();
  }

 private:
  static constexpr size_t kBlock = 32;
  void Block(const char* p) {
    for (int l = 0; l < 4; ++l) {
      uint64_t w;
      std::memcpy(&w, p + 8 * l, 8);
      lanes_[l] = std::rotl(lanes_[l] ^ (w * 0xC2B2AE3D27D4EB4Full), 31) * 0x9E3779B97F4A7C15ull;
    }
  }

  uint64_t lanes_[4] = {0x27D4EB2F165667C5ull, 0x165667B19E3779F9ull, 0x85EBCA77C2B2AE63ull,
                        0xFF51AFD7ED558CCDull};
  char buf_[kBlock] = {};
  size_t fill_ = 0;
  uint64_t total_ = 0;
};

}  // namespace flowrag

#endif  // FLOWRAG_COMMON_CHECKSUM_H_
