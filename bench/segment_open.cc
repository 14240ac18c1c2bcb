// Segment open cost (src/segment/, issue 34): writes one segment of 8
// sections (1 GiB of floats by default), then, RUNS times, opens it
// (SegmentReader::Open: header and table only), reads every section for
// the first time (each verified by its checksum) and a second time
// (verified already: a lookup). Each phase is timed twice: with the file's
// pages in the page cache (warm), and after they were dropped from it with
// posix_fadvise(DONTNEED) on this file alone (cold: read from disk). Prints
// the median and range of each.
//
// Then ranged reads (format version 2, block checksums): a second segment
// of one section of ROW_MIB MiB (1 GiB by default) of 4 KiB rows, checksummed
// in blocks of BLOCK_KIB KiB and written with the random-access hint (the
// reader advises MADV_RANDOM on its pages at Open); RUNS times, warm and cold, a fresh reader
// reads 10,000 random rows (the same rows each run) through a SectionView
// (verifying the blocks they lie in on first touch), then the same rows
// again (verified: the per-row cost of span()); against the whole-section
// verify: Section<float>() (every block) then the same rows. After each,
// the process's RSS growth since before the Open (the mapped pages
// brought in). MIB=0 skips the first part.
//
// Usage: segment_open [DIR=/tmp] [MIB=1024] [RUNS=5] [ROW_MIB=1024]
//        [BLOCK_KIB=4]
//
// Ranged reads measured at commit of this change (`segment_open /tmp 0 3
// 1024 64` and `... 1024 4`, release build, same machine, load ~1), medians
// of 3, 10,000 random 4 KiB rows of a 1 GiB section, a fresh reader each:
//
//   blocks | rows' blocks    | first touch warm / cold | whole verify + rows warm / cold | RSS
//   growth ranged / whole 64 KiB | 7,470 (467 MiB) | 158 ms / 1.56 s         | 278 ms / 0.99 s |
//   720 / 1024 MiB
//    4 KiB | 10,000 (39 MiB) |  52 ms / 1.05 s         | 280 ms / 0.85 s                 | 468 /
//    1026 MiB
//
// With per-section block sizes and the access hint (the section written
// with 4 KiB blocks and SectionAccess::kRandom, so the reader advises
// MADV_RANDOM on its pages at Open; `segment_open /tmp 0 3 1024 4`,
// release build, same machine, load ~1.0), medians of 3:
//
//   blocks         | rows' blocks   | first touch warm / cold | whole verify + rows warm / cold | RSS growth ranged / whole
//    4 KiB, random | 9,812 (38 MiB) |  57 ms / 0.86 s         | 401 ms / 1.05 s                 | 45 / 1026 MiB
//
// RSS after the 10,000 first-touch rows is 45 MiB warm and cold (was 468
// MiB without the hint): each fault maps its page alone. The whole verify
// of a random section keeps the advice (it reads ahead with MADV_WILLNEED
// per 8 MiB window); across three reruns its medians were 321-401 ms warm
// and 1.05-1.22 s cold, against 280 ms / 0.85 s without the hint; switching
// the range to MADV_SEQUENTIAL during the verify measured 386 ms / 1.04 s,
// within that noise, so the reader does not switch.
//
// The same rows again (verified): 0.53-0.66 ms, ~60 ns per row (bounds
// check, one atomic load, one value of the row read). At 64 KiB blocks 4 KiB
// rows at random touch almost half the blocks; at 4 KiB the checksums are
// ~6 ms of the 52, the rest is mapping pages. RSS grows by more than the
// verified bytes because the kernel maps the cached pages around each
// fault (fault-around, 64 KiB) and reads ahead on a cold miss: a cold random
// first touch is then slower than one sequential whole verify.
//
// Measured at commit of this file (`segment_open /tmp 1024 7`, release
// build, ext4 on a virtual disk, 2 cores shared, load ~2.7), medians: Open
// 0.056 ms warm, 16 ms cold (two page reads: header and table); first read
// of all 8 sections 282 ms warm (1 GiB checksummed; the checksum alone runs
// at ~145 ms/GiB, the rest is mapping the pages), 1.22 s cold; second read
// 0.006 ms. Writing the segment (fsync included): 4.0 s.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "segment/segment_reader.h"
#include "segment/segment_writer.h"

namespace {

constexpr int kSections = 8;

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

struct Phases {
  std::vector<double> open, first, second;
};

bool WriteSegment(const std::string& path, size_t floats_per_section) {
  std::vector<float> values(floats_per_section);
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (float& v : values) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    v = static_cast<float>(x >> 40) / static_cast<float>(1 << 24);
  }
  auto writer = flowrag::SegmentWriter::Create(path, "bench", 1, 1);
  if (!writer.ok()) {
    std::fprintf(stderr, "%s\n", writer.status().ToString().c_str());
    return false;
  }
  for (int s = 0; s < kSections; ++s) {
    values[0] = static_cast<float>(s);
    flowrag::Status st = (*writer)->AddSection("vectors_" + std::to_string(s), values);
    if (!st.ok()) {
      std::fprintf(stderr, "%s\n", st.ToString().c_str());
      return false;
    }
  }
  flowrag::Status st = (*writer)->Finish();
  if (!st.ok()) std::fprintf(stderr, "%s\n", st.ToString().c_str());
  return st.ok();
}

// Drops the file's pages from the page cache (clean after Finish's fsync).
void DropFromCache(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
}

// One open, first reads and second reads; false on any error.
bool Run(const std::string& path, Phases* phases) {
  auto start = std::chrono::steady_clock::now();
  auto reader = flowrag::SegmentReader::Open(path);
  phases->open.push_back(Seconds(start));
  if (!reader.ok()) {
    std::fprintf(stderr, "%s\n", reader.status().ToString().c_str());
    return false;
  }
  double sum = 0;
  for (int pass = 0; pass < 2; ++pass) {
    start = std::chrono::steady_clock::now();
    for (const flowrag::SectionInfo& s : (*reader)->sections()) {
      auto values = (*reader)->Section<float>(s.name);
      if (!values.ok()) {
        std::fprintf(stderr, "%s\n", values.status().ToString().c_str());
        return false;
      }
      sum += (*values)[values->size() / 2];  // one value used, as a lookup would
    }
    (pass == 0 ? phases->first : phases->second).push_back(Seconds(start));
  }
  return sum == sum;  // not NaN: the values were read
}

void Print(const char* cache, const char* phase, std::vector<double> secs) {
  std::sort(secs.begin(), secs.end());
  std::printf("| %s | %s | %.3f ms | %.3f - %.3f ms |\n", cache, phase, secs[secs.size() / 2] * 1e3,
              secs.front() * 1e3, secs.back() * 1e3);
}

// ---- ranged reads

constexpr size_t kRowFloats = 1024;  // 4 KiB rows
constexpr size_t kReadRows = 10000;

// One section "rows" of `mib` MiB of pseudo-random floats, streamed.
// The section is written as a random-access one: its own block size and
// the random hint (the file's default blocks stay 64 KiB).
bool WriteRowSegment(const std::string& path, size_t mib, uint64_t block_bytes) {
  auto writer = flowrag::SegmentWriter::Create(path, "bench", 1, 2);
  if (!writer.ok()) {
    std::fprintf(stderr, "%s\n", writer.status().ToString().c_str());
    return false;
  }
  std::vector<float> chunk(size_t{8} << 20 >> 2);
  uint64_t x = 0x9E3779B97F4A7C15ull;
  flowrag::Status st = (*writer)->BeginSection<float>(
      "rows", {.block_bytes = block_bytes, .access = flowrag::SectionAccess::kRandom});
  for (size_t done = 0; st.ok() && done < mib; done += 8) {
    for (float& v : chunk) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      v = static_cast<float>(x >> 40) / static_cast<float>(1 << 24);
    }
    const size_t floats = std::min<size_t>(8, mib - done) << 20 >> 2;
    st = (*writer)->Append(std::span<const float>(chunk.data(), floats));
  }
  if (st.ok()) st = (*writer)->EndSection();
  if (st.ok()) st = (*writer)->Finish();
  if (!st.ok()) std::fprintf(stderr, "%s\n", st.ToString().c_str());
  return st.ok();
}

// The process's resident set, MiB (VmRSS).
double RssMiB() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::strtod(line.c_str() + 6, nullptr) / 1024.0;
  }
  return 0;
}

struct RangedPhases {
  std::vector<double> first, again, rss;
};

// A fresh reader: `whole` verifies the section with Section<float>() first;
// then the rows, twice. False on any error.
bool RunRows(const std::string& path, const std::vector<uint64_t>& rows, bool whole,
             RangedPhases* phases) {
  const double rss_before = RssMiB();
  auto start = std::chrono::steady_clock::now();
  auto reader = flowrag::SegmentReader::Open(path);
  if (!reader.ok()) {
    std::fprintf(stderr, "%s\n", reader.status().ToString().c_str());
    return false;
  }
  if (whole) {
    auto all = (*reader)->Section<float>("rows");
    if (!all.ok()) {
      std::fprintf(stderr, "%s\n", all.status().ToString().c_str());
      return false;
    }
  }
  auto view = (*reader)->View<float>("rows");
  if (!view.ok()) {
    std::fprintf(stderr, "%s\n", view.status().ToString().c_str());
    return false;
  }
  double sum = 0;
  for (int pass = 0; pass < 2; ++pass) {
    if (pass == 1) start = std::chrono::steady_clock::now();
    for (uint64_t row : rows) {
      auto values = view->span(row * kRowFloats, kRowFloats);
      if (!values.ok()) {
        std::fprintf(stderr, "%s\n", values.status().ToString().c_str());
        return false;
      }
      sum += (*values)[row % kRowFloats];  // one value used, as a rescoring would
    }
    (pass == 0 ? phases->first : phases->again).push_back(Seconds(start));
    if (pass == 0) phases->rss.push_back(RssMiB() - rss_before);
  }
  return sum == sum;
}

void PrintRss(const char* cache, const char* phase, std::vector<double> mib) {
  std::sort(mib.begin(), mib.end());
  std::printf("| %s | %s | %.0f MiB | %.0f - %.0f MiB |\n", cache, phase, mib[mib.size() / 2],
              mib.front(), mib.back());
}

bool RangedBench(const std::string& dir, size_t mib, uint64_t block_kib, int runs) {
  const std::string path = dir + "/segment_rows_bench.seg";
  auto start = std::chrono::steady_clock::now();
  if (!WriteRowSegment(path, mib, block_kib << 10)) return false;
  const uint64_t row_count = (uint64_t{mib} << 20) / (kRowFloats * sizeof(float));
  std::printf(
      "\nwrote %s: one section of %zu MiB (%llu rows of 4 KiB), blocks of %llu KiB, %.2f s\n",
      path.c_str(), mib, static_cast<unsigned long long>(row_count),
      static_cast<unsigned long long>(block_kib), Seconds(start));
  std::mt19937_64 rng(34);
  std::vector<uint64_t> rows(kReadRows);
  for (uint64_t& r : rows) r = rng() % row_count;
  std::vector<uint64_t> blocks;
  for (uint64_t r : rows) blocks.push_back(r * kRowFloats * sizeof(float) / (block_kib << 10));
  std::sort(blocks.begin(), blocks.end());
  const size_t touched = std::unique(blocks.begin(), blocks.end()) - blocks.begin();
  std::printf("%zu random rows lie in %zu distinct blocks (%.0f MiB)\n", kReadRows, touched,
              touched * block_kib / 1024.0);

  RangedPhases warm, cold, warm_whole, cold_whole;
  for (int r = 0; r < runs; ++r) {
    DropFromCache(path);
    if (!RunRows(path, rows, false, &cold)) return false;
    if (!RunRows(path, rows, false, &warm)) return false;
    DropFromCache(path);
    if (!RunRows(path, rows, true, &cold_whole)) return false;
    if (!RunRows(path, rows, true, &warm_whole)) return false;
  }
  std::printf(
      "\n%d runs; median and range; a fresh reader each time\n\n| cache | phase | median | range "
      "|\n| --- | --- | --- | --- |\n",
      runs);
  for (auto [cache, ranged, whole] :
       {std::tuple{"warm", &warm, &warm_whole}, std::tuple{"cold", &cold, &cold_whole}}) {
    Print(cache, "10,000 rows, first touch (their blocks verified)", ranged->first);
    Print(cache, "whole-section verify, then 10,000 rows", whole->first);
    Print(cache, "10,000 rows again (verified)", ranged->again);
    PrintRss(cache, "RSS growth after the first-touch rows", ranged->rss);
    PrintRss(cache, "RSS growth after the whole-section verify and rows", whole->rss);
  }
  ::unlink(path.c_str());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : "/tmp";
  const size_t mib = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1024;
  const int runs = argc > 3 ? std::atoi(argv[3]) : 5;
  const size_t row_mib = argc > 4 ? std::strtoull(argv[4], nullptr, 10) : 1024;
  const uint64_t block_kib = argc > 5 ? std::strtoull(argv[5], nullptr, 10) : 4;
  const std::string path = dir + "/segment_open_bench.seg";
  const size_t floats = mib * (size_t{1} << 20) / kSections / sizeof(float);
  if (mib == 0) return RangedBench(dir, row_mib, block_kib, runs) ? 0 : 1;

  auto start = std::chrono::steady_clock::now();
  if (!WriteSegment(path, floats)) return 1;
  std::printf("wrote %s: %d sections, %zu MiB, %.2f s (Create, AddSection, Finish with fsync)\n",
              path.c_str(), kSections, mib, Seconds(start));

  Phases warm, cold;
  for (int r = 0; r < runs; ++r) {
    DropFromCache(path);
    if (!Run(path, &cold)) return 1;
    if (!Run(path, &warm)) return 1;  // the pages the cold run read are cached now
  }
  std::printf(
      "\n%d runs; median and range\n\n| cache | phase | median | range |\n| --- | --- | --- | --- "
      "|\n",
      runs);
  Print("warm", "Open", warm.open);
  Print("warm", "first read of all sections (checksums)", warm.first);
  Print("warm", "second read of all sections", warm.second);
  Print("cold", "Open", cold.open);
  Print("cold", "first read of all sections (checksums)", cold.first);
  Print("cold", "second read of all sections", cold.second);
  ::unlink(path.c_str());
  return RangedBench(dir, row_mib, block_kib, runs) ? 0 : 1;
}
