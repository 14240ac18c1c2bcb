// Segment open cost (src/segment/, issue 34): writes one segment of 8
// sections (1 GiB of floats by default), then, RUNS times, opens it
// (SegmentReader::Open: header and table only), reads every section for
// the first time (each verified by its checksum) and a second time
// (verified already: a lookup). Each phase is timed twice: with the file's
// pages in the page cache (warm), and after they were dropped from it with
// posix_fadvise(DONTNEED) on this file alone (cold: read from disk). Prints
// the median and range of each.
//
// Usage: segment_open [DIR=/tmp] [MIB=1024] [RUNS=5]
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
#include <string>
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

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : "/tmp";
  const size_t mib = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1024;
  const int runs = argc > 3 ? std::atoi(argv[3]) : 5;
  const std::string path = dir + "/segment_open_bench.seg";
  const size_t floats = mib * (size_t{1} << 20) / kSections / sizeof(float);

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
  return 0;
}
