// Stable 64-bit hashing for content fingerprints and feature hashing.
//
// The values are part of the on-disk format (content hashes, embedding cache
// keys): they must never change for a given input. Not cryptographic.
#ifndef FLOWRAG_COMMON_HASH_H_
#define FLOWRAG_COMMON_HASH_H_

#include <cstdint>
#include <string_view>

namespace flowrag {

// splitmix64 finaliser: a bijective avalanche mix of 64 bits.
constexpr uint64_t Mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// FNV-1a over the bytes, seeded, then mixed. O(n).
constexpr uint64_t Hash64(std::string_view s, uint64_t seed = 0) {
  uint64_t h = 0xcbf29ce484222325ULL ^ Mix64(seed);
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return Mix64(h ^ s.size());
}

// Combines two hashes (order-sensitive).
constexpr uint64_t HashCombine(uint64_t a, uint64_t b) { return Mix64(a ^ (b + 0x9e3779b97f4a7c15ULL + (a << 6) + (a >> 2))); }

}  // namespace flowrag

#endif  // FLOWRAG_COMMON_HASH_H_
