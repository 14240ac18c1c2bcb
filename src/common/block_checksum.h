// BlockChecksum: the 64-bit checksum of a segment file's blocks (segment
// format version 3, segment/segment_format.h), built to be computed at the
// speed memory delivers the bytes: an open verifies gigabytes of blocks
// (issue 34), and StreamChecksum (common/checksum.h; 4 bytes per cycle, one
// multiply chain per lane) took 40% of a 10^6-passage open's CPU.
//
// Eight 64-bit lanes take a 64-byte stripe at a time. For word w of lane i
// and its keyed value k = w ^ key[j][i] (j: the stripe's place in its
// scramble period, so that two stripes swapped give other products), lane
// i adds lo32(k) * hi32(k) (a
// 32x32 -> 64 product, one instruction per four lanes in AVX2) and the word
// of its neighbour lane i ^ 1 (so that no word is lost when a product is
// 0). Every 16 stripes (1 KiB) each lane is scrambled (xor-shift, key, a
// 32-bit multiply), which spreads a change of one word over the lane before
// later words can cancel it. The tail after the last whole stripe, the
// length and the lanes are then mixed by 64-bit multiplies and a final
// avalanche. The design follows XXH3's accumulate-and-scramble structure;
// the constants and the mixing are this file's own.
//
// Detects truncation, bit flips, zeroed and overwritten ranges; not a MAC.
// A byte stream fed in pieces of any size gives the same value as fed at
// once. The AVX2 path and the portable one give identical values (the
// portable one is what the format specifies; tests compare them).
//
// The values are part of the segment format: they must never change for a
// given byte stream (tests/segment_test.cc's version-3 fixture and
// BlockChecksumTest's pinned values fail if they do).
//
// Thread-safety: a value; one object per stream, not shared while updated.
#ifndef FLOWRAG_COMMON_BLOCK_CHECKSUM_H_
#define FLOWRAG_COMMON_BLOCK_CHECKSUM_H_

#include <cstddef>
#include <cstdint>

namespace flowrag {

class BlockChecksum {
 public:
  BlockChecksum();

  // Feeds `n` bytes at `data` (null allowed when n is 0). O(n).
  void Update(const void* data, size_t n);

  // The checksum of everything fed so far (the stream may continue).
  uint64_t Final() const;

  // The checksum of `n` bytes at `data` in one call.
  static uint64_t Of(const void* data, size_t n) {
    BlockChecksum c;
    c.Update(data, n);
    return c.Final();
  }

  static constexpr size_t kStripe = 64;
  static constexpr size_t kStripesPerScramble = 16;

  // Tests: take the portable path even where AVX2 is available (process-wide).
  static void UsePortableForTesting(bool portable);

 private:
  void Stripes(const unsigned char* p, size_t count);

  uint64_t lanes_[8];
  unsigned char buf_[kStripe];
  size_t fill_ = 0;
  uint64_t stripes_ = 0;  // whole stripes taken so far
  uint64_t total_ = 0;
};

}  // namespace flowrag

#endif  // FLOWRAG_COMMON_BLOCK_CHECKSUM_H_
