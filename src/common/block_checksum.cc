#include "common/block_checksum.h"

#include <atomic>
#include <bit>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace flowrag {
namespace {

// Keys: one per lane and stripe of a scramble period, so that stripes
// swapped within a period give other products (splitmix64 of the index).
constexpr uint64_t SplitMix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
struct StripeKeys {
  uint64_t key[BlockChecksum::kStripesPerScramble][8];
};
constexpr StripeKeys MakeStripeKeys() {
  StripeKeys k{};
  for (size_t j = 0; j < BlockChecksum::kStripesPerScramble; ++j) {
    for (size_t i = 0; i < 8; ++i) k.key[j][i] = SplitMix(0xF10A5EED00000000ull + 8 * j + i);
  }
  return k;
}
constexpr StripeKeys kKeys = MakeStripeKeys();
constexpr const uint64_t* kKey = kKeys.key[0];  // lane keys of the tail and the start
constexpr uint64_t kScrambleKey[8] = {
    0x5BE0CD19137E2179ull, 0xCBBB9D5DC1059ED8ull, 0x629A292A367CD507ull, 0x9159015A3070DD17ull,
    0x152FECD8F70E5939ull, 0x67332667FFC00B31ull, 0x8EB44A8768581511ull, 0xDB0C2E0D64F98FA7ull};
constexpr uint64_t kPrime32 = 0x9E3779B1ull;  // < 2^32: a lane times it is two 32x32 products
constexpr uint64_t kPrime64a = 0x9E3779B97F4A7C15ull;
constexpr uint64_t kPrime64b = 0xC2B2AE3D27D4EB4Full;
constexpr uint64_t kPrime64c = 0x165667B19E3779F9ull;

uint64_t Load64(const unsigned char* p) {
  uint64_t w;
  std::memcpy(&w, p, 8);
  return w;
}

// Stripes [done, done + count) of a stream at `p`: accumulate each, and
// scramble after every 16th. The portable path, which defines the values.
void RunPortable(uint64_t* lanes, const unsigned char* p, size_t count, uint64_t done) {
  for (size_t s = 0; s < count; ++s, p += BlockChecksum::kStripe) {
    uint64_t w[8];
    for (int i = 0; i < 8; ++i) w[i] = Load64(p + 8 * i);
    const uint64_t* key = kKeys.key[(done + s) % BlockChecksum::kStripesPerScramble];
    for (int i = 0; i < 8; ++i) {
      const uint64_t k = w[i] ^ key[i];
      lanes[i] += (k & 0xFFFFFFFFull) * (k >> 32) + w[i ^ 1];
    }
    if ((done + s + 1) % BlockChecksum::kStripesPerScramble == 0) {
      for (int i = 0; i < 8; ++i) {
        uint64_t a = lanes[i];
        a ^= a >> 47;
        a ^= kScrambleKey[i];
        lanes[i] = a * kPrime32;
      }
    }
  }
}

#if defined(__x86_64__)
#define FLOWRAG_CTARGET_AVX2 __attribute__((target("avx2")))

FLOWRAG_CTARGET_AVX2 __m256i Accumulate(__m256i lanes, __m256i words, __m256i key) {
  const __m256i k = _mm256_xor_si256(words, key);
  const __m256i product = _mm256_mul_epu32(k, _mm256_srli_epi64(k, 32));
  // Each 64-bit word swapped with its neighbour (i ^ 1) in its 128-bit half.
  const __m256i neighbour = _mm256_shuffle_epi32(words, _MM_SHUFFLE(1, 0, 3, 2));
  return _mm256_add_epi64(lanes, _mm256_add_epi64(product, neighbour));
}

FLOWRAG_CTARGET_AVX2 __m256i Scramble(__m256i a, __m256i key) {
  a = _mm256_xor_si256(a, _mm256_srli_epi64(a, 47));
  a = _mm256_xor_si256(a, key);
  const __m256i prime = _mm256_set1_epi64x(static_cast<long long>(kPrime32));
  const __m256i low = _mm256_mul_epu32(a, prime);
  const __m256i high = _mm256_mul_epu32(_mm256_srli_epi64(a, 32), prime);
  return _mm256_add_epi64(low, _mm256_slli_epi64(high, 32));
}

FLOWRAG_CTARGET_AVX2 void RunAvx2(uint64_t* lanes, const unsigned char* p, size_t count,
                                  uint64_t done) {
  __m256i a0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(lanes));
  __m256i a1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(lanes + 4));
  const __m256i s0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kScrambleKey));
  const __m256i s1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kScrambleKey + 4));
  for (size_t s = 0; s < count; ++s, p += BlockChecksum::kStripe) {
    const uint64_t* key = kKeys.key[(done + s) % BlockChecksum::kStripesPerScramble];
    const __m256i k0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(key));
    const __m256i k1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(key + 4));
    a0 = Accumulate(a0, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)), k0);
    a1 = Accumulate(a1, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32)), k1);
    if ((done + s + 1) % BlockChecksum::kStripesPerScramble == 0) {
      a0 = Scramble(a0, s0);
      a1 = Scramble(a1, s1);
    }
  }
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(lanes), a0);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(lanes + 4), a1);
}

bool HasAvx2() {
  static const bool has = __builtin_cpu_supports("avx2");
  return has;
}
#endif

std::atomic<bool> force_portable{false};

void Run(uint64_t* lanes, const unsigned char* p, size_t count, uint64_t done) {
#if defined(__x86_64__)
  if (HasAvx2() && !force_portable.load(std::memory_order_relaxed)) {
    RunAvx2(lanes, p, count, done);
    return;
  }
#endif
  RunPortable(lanes, p, count, done);
}

uint64_t Mix(uint64_t x) {
  x ^= x >> 33;
  x *= kPrime64b;
  x ^= x >> 29;
  return x;
}

}  // namespace

BlockChecksum::BlockChecksum() {
  for (int i = 0; i < 8; ++i) lanes_[i] = kKey[(i + 3) % 8] ^ kPrime64c;
}

void BlockChecksum::UsePortableForTesting(bool portable) {
  force_portable.store(portable, std::memory_order_relaxed);
}

void BlockChecksum::Stripes(const unsigned char* p, size_t count) {
  Run(lanes_, p, count, stripes_);
  stripes_ += count;
}

void BlockChecksum::Update(const void* data, size_t n) {
  if (n == 0) return;  // empty arrays may pass a null pointer
  const auto* p = static_cast<const unsigned char*>(data);
  total_ += n;
  if (fill_ > 0) {
    const size_t take = n < kStripe - fill_ ? n : kStripe - fill_;
    std::memcpy(buf_ + fill_, p, take);
    fill_ += take;
    p += take;
    n -= take;
    if (fill_ < kStripe) return;
    Stripes(buf_, 1);
    fill_ = 0;
  }
  const size_t whole = n / kStripe;
  if (whole > 0) Stripes(p, whole);
  p += whole * kStripe;
  n -= whole * kStripe;
  std::memcpy(buf_, p, n);
  fill_ = n;
}

uint64_t BlockChecksum::Final() const {
  uint64_t h = total_ * kPrime64a;
  // The tail (fewer than 64 bytes), as 8-byte words padded with zeros.
  unsigned char tail[kStripe] = {};
  std::memcpy(tail, buf_, fill_);
  for (size_t i = 0; i < fill_; i += 8) {
    h ^= Mix(Load64(tail + i) ^ kKey[i / 8]);
    h = std::rotl(h, 27) * kPrime64a + kPrime64c;
  }
  for (int i = 0; i < 8; ++i) {
    h ^= Mix(lanes_[i]);
    h = std::rotl(h, 31) * kPrime64b;
  }
  h ^= h >> 29;
  h *= kPrime64c;
  h ^= h >> 32;
  return h;
}

}  // namespace flowrag
