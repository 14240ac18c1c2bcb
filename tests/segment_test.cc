// The segment file container (src/segment/): round trips of every element
// type, alignment, crash safety of the writer, every way a file can be torn
// or altered (truncation, bit flips in the header, the table and each
// section, crafted tables with valid checksums), concurrent first reads,
// block-granular verification of ranged reads (SectionView: a damaged block
// spoils only its rows; first touches from 8 threads; sections shorter
// than, equal to and not a multiple of a block), sections of different
// block sizes in one file (damage stays in its own section's block, the
// access hint round-trips and advises MADV_RANDOM, per-entry block sizes
// and flags out of range are refused), and the committed
// fixtures (tests/testdata/segment/): versions 1 and 2, which the reader
// must still read, and version 3, which the current writer must reproduce
// byte for byte; and BlockChecksum, version 3's block checksum.
//
// FLOWRAG_REWRITE_SEGMENT_FIXTURE=1 rewrites the version-3 fixture (after a
// reviewed format change, which also bumps kSegmentFormatVersion).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <fstream>
#include <functional>
#include <latch>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "common/block_checksum.h"
#include "common/checksum.h"
#include "segment/segment_format.h"
#include "segment/segment_reader.h"
#include "segment/segment_writer.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

namespace fs = std::filesystem;

// An element type the format does not know: checked by size only.
struct Edge {
  uint32_t target;
  float weight;
  bool operator==(const Edge&) const = default;
};

class SegmentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::path(::testing::TempDir()) / "segment-test-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

bool Contains(const Status& st, const std::string& text) {
  return st.message().find(text) != std::string::npos;
}

// The sample's sections: one of every element type, an empty one, an
// empty streamed one, a streamed one fed in uneven pieces and, when
// `large`, one of 80 KB (page-aligned).
struct Sample {
  std::string tokens = "hello, segment";
  std::vector<int8_t> i8{-128, -1, 0, 1, 127};
  std::vector<uint16_t> u16;
  std::vector<int16_t> i16{-32768, -2, 3, 32767};
  std::vector<uint32_t> offsets;
  std::vector<int32_t> deltas{-7, 0, 7, 1 << 30};
  std::vector<uint64_t> ids{0, 1, UINT64_MAX};
  std::vector<int64_t> counts{INT64_MIN, -1, 0, INT64_MAX};
  std::vector<float> weights{0.5f, -1.25f, 3.0e38f};
  std::vector<double> scores{1.0 / 3, -2.5e300};
  std::vector<Edge> edges{{1, 0.25f}, {7, 1.5f}, {UINT32_MAX, -0.0f}};
  std::vector<uint32_t> empty;
  std::vector<float> streamed;
  std::vector<float> big;
  std::vector<uint32_t> rows;  // 10,400 bytes: 2.5 blocks of 4 KiB

  explicit Sample(bool large, bool with_rows = false) {
    if (with_rows) {
      for (uint32_t i = 0; i < 2600; ++i) rows.push_back(i * 2654435761u);
    }
    for (uint16_t i = 0; i < 10; ++i) u16.push_back(static_cast<uint16_t>(i * 6553));
    for (uint32_t i = 0; i < 100; ++i) offsets.push_back(i * i);
    for (int i = 0; i < 300; ++i) streamed.push_back(static_cast<float>(i) * 0.5f);
    if (large) {
      for (int i = 0; i < 20000; ++i) big.push_back(static_cast<float>(i % 977) / 977.0f);
    }
  }
};

Status WriteSample(const std::string& path, const Sample& s,
                   const SegmentWriterOptions& options = {}, const SectionOptions& rows = {}) {
  auto w = SegmentWriter::Create(path, "sample", 42, 7, options);
  if (!w.ok()) return w.status();
  SegmentWriter& writer = **w;
  FLOWRAG_RETURN_IF_ERROR(writer.AddSection("tokens", s.tokens));
  FLOWRAG_RETURN_IF_ERROR(writer.AddSection("i8", s.i8));
  FLOWRAG_RETURN_IF_ERROR(writer.AddSection("u16", s.u16));
  FLOWRAG_RETURN_IF_ERROR(writer.AddSection("i16", s.i16));
  FLOWRAG_RETURN_IF_ERROR(writer.AddSection("offsets", s.offsets));
  FLOWRAG_RETURN_IF_ERROR(writer.AddSection("deltas", s.deltas));
  FLOWRAG_RETURN_IF_ERROR(writer.AddSection("ids", s.ids));
  FLOWRAG_RETURN_IF_ERROR(writer.AddSection("counts", s.counts));
  FLOWRAG_RETURN_IF_ERROR(writer.AddSection("weights", s.weights));
  FLOWRAG_RETURN_IF_ERROR(writer.AddSection("scores", s.scores));
  FLOWRAG_RETURN_IF_ERROR(writer.AddSection("edges", s.edges));
  FLOWRAG_RETURN_IF_ERROR(writer.AddSection("empty", s.empty));
  FLOWRAG_RETURN_IF_ERROR(writer.BeginSection<uint64_t>("empty_streamed"));
  FLOWRAG_RETURN_IF_ERROR(writer.EndSection());
  FLOWRAG_RETURN_IF_ERROR(writer.BeginSection<float>("streamed"));
  // Pieces that split elements: the section is whole elements at the end.
  const char* bytes = reinterpret_cast<const char*>(s.streamed.data());
  const size_t total = s.streamed.size() * sizeof(float);
  for (size_t at = 0, piece = 1; at < total; at += piece, piece = piece * 3 + 1) {
    FLOWRAG_RETURN_IF_ERROR(writer.Append(bytes + at, std::min(piece, total - at)));
  }
  FLOWRAG_RETURN_IF_ERROR(writer.EndSection());
  if (!s.rows.empty()) FLOWRAG_RETURN_IF_ERROR(writer.AddSection("rows", s.rows, rows));
  if (!s.big.empty()) FLOWRAG_RETURN_IF_ERROR(writer.AddSection("big", s.big));
  return writer.Finish();
}

template <typename T>
std::vector<T> Read(const SegmentReader& r, const std::string& name) {
  auto span = r.Section<T>(name);
  EXPECT_TRUE(span.ok()) << span.status().ToString();
  if (!span.ok()) return {};
  EXPECT_EQ(reinterpret_cast<uintptr_t>(span->data()) % kSectionAlignment, 0u) << name;
  return std::vector<T>(span->begin(), span->end());
}

void ExpectSample(const SegmentReader& r, const Sample& s) {
  auto tokens = Read<char>(r, "tokens");
  EXPECT_EQ(std::string(tokens.begin(), tokens.end()), s.tokens);
  EXPECT_EQ(Read<int8_t>(r, "i8"), s.i8);
  EXPECT_EQ(Read<uint16_t>(r, "u16"), s.u16);
  EXPECT_EQ(Read<int16_t>(r, "i16"), s.i16);
  EXPECT_EQ(Read<uint32_t>(r, "offsets"), s.offsets);
  EXPECT_EQ(Read<int32_t>(r, "deltas"), s.deltas);
  EXPECT_EQ(Read<uint64_t>(r, "ids"), s.ids);
  EXPECT_EQ(Read<int64_t>(r, "counts"), s.counts);
  EXPECT_EQ(Read<float>(r, "weights"), s.weights);
  EXPECT_EQ(Read<double>(r, "scores"), s.scores);
  EXPECT_EQ(Read<Edge>(r, "edges"), s.edges);
  EXPECT_EQ(Read<uint32_t>(r, "empty"), s.empty);
  EXPECT_EQ(Read<float>(r, "streamed"), s.streamed);
  EXPECT_TRUE(Read<uint64_t>(r, "empty_streamed").empty());
  if (!s.rows.empty()) {
    EXPECT_EQ(Read<uint32_t>(r, "rows"), s.rows);
  }
  if (!s.big.empty()) {
    EXPECT_EQ(Read<float>(r, "big"), s.big);
  }
}

// Every element of section `name` read back one by one through a view (a
// ranged read per row), against `want`.
template <typename T>
void ExpectRows(const SegmentReader& r, const std::string& name, const std::vector<T>& want) {
  auto view = r.View<T>(name);
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  ASSERT_EQ(view->size(), want.size()) << name;
  for (size_t i = 0; i < want.size(); ++i) {
    auto value = view->at(i);
    ASSERT_TRUE(value.ok()) << name << " " << i << ": " << value.status().ToString();
    ASSERT_EQ(*value, want[i]) << name << " " << i;
  }
  auto all = view->span(0, want.size());
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE(std::equal(all->begin(), all->end(), want.begin())) << name;
}

// Byte ranges of a written file, from its own header and table.
SegmentHeader HeaderOf(const std::string& bytes) {
  SegmentHeader h;
  std::memcpy(&h, bytes.data(), sizeof(h));
  return h;
}
SectionEntry EntryOf(const std::string& bytes, size_t index) {
  SectionEntry e;
  std::memcpy(&e, bytes.data() + HeaderOf(bytes).table_offset + index * sizeof(e), sizeof(e));
  return e;
}
void PutEntry(std::string& bytes, size_t index, const SectionEntry& e) {
  std::memcpy(bytes.data() + HeaderOf(bytes).table_offset + index * sizeof(e), &e, sizeof(e));
}
void PutHeader(std::string& bytes, const SegmentHeader& h) {
  std::memcpy(bytes.data(), &h, sizeof(h));
}
// Recomputes the table and header checksums (a crafted file a checksum
// cannot catch: a writer's bug or a hostile file).
void Rechecksum(std::string& bytes) {
  SegmentHeader h = HeaderOf(bytes);
  const uint64_t table_bytes = uint64_t{h.section_count} * sizeof(SectionEntry);
  if (h.table_offset <= bytes.size() && bytes.size() - h.table_offset >= table_bytes) {
    h.table_checksum = StreamChecksum::Of(bytes.data() + h.table_offset, table_bytes);
  }
  h.header_checksum = StreamChecksum::Of(&h, kHeaderChecksummedBytes);
  PutHeader(bytes, h);
}

// ---- the checksum shared with the snapshot parts

TEST(StreamChecksumTest, ValuesAreTheSnapshotPartsOnesAndIndependentOfTheSplit) {
  // Values of the checksum as graph/graph_io.cc computed them before it
  // moved to common/ (the stored parts' and segments' checksums).
  std::string b;
  for (int i = 0; i < 1000; ++i) b.push_back(static_cast<char>((i * 131 + 7) & 0xff));
  const std::pair<size_t, uint64_t> golden[] = {
      {0, 0x8b33da42087d349cull},   {1, 0x0072cbad2268b363ull},  {31, 0x9905da244ebad12eull},
      {32, 0x708f5382ac3490c3ull},  {33, 0xf2b05f28ed36dc57ull}, {100, 0xd4f6c2a9b267e1eaull},
      {1000, 0x312da2fe03d30dd6ull}};
  for (const auto& [n, value] : golden) {
    EXPECT_EQ(StreamChecksum::Of(b.data(), n), value) << n;
    StreamChecksum pieces;
    for (size_t at = 0, step = 1; at < n; at += step, step = step % 37 + 5) {
      pieces.Update(b.data() + at, std::min(step, n - at));
    }
    EXPECT_EQ(pieces.Final(), value) << n;
  }
}

// BlockChecksum (format 3's blocks): pinned values, the same in any split,
// the same by the AVX2 and the portable paths, and every single-bit flip,
// zeroed range and swap of two stripes of a block changes it.
TEST(BlockChecksumTest, PinnedValuesAnySplitBothPathsAndDamageDetected) {
  std::string b;
  for (int i = 0; i < 5000; ++i) b.push_back(static_cast<char>((i * 131 + 7) & 0xff));
  std::map<size_t, uint64_t> values;
  for (size_t n : {size_t{0}, size_t{1}, size_t{63}, size_t{64}, size_t{65}, size_t{1023},
                   size_t{1024}, size_t{1088}, size_t{5000}}) {
    values[n] = BlockChecksum::Of(b.data(), n);
    BlockChecksum pieces;
    for (size_t at = 0, step = 1; at < n; at += step, step = step % 97 + 3) {
      pieces.Update(b.data() + at, std::min(step, n - at));
    }
    EXPECT_EQ(pieces.Final(), values[n]) << n;
    BlockChecksum::UsePortableForTesting(true);
    EXPECT_EQ(BlockChecksum::Of(b.data(), n), values[n]) << n;
    BlockChecksum::UsePortableForTesting(false);
  }
  // The values are the format: a change of BlockChecksum breaks them (and
  // the version-3 fixture).
  const std::pair<size_t, uint64_t> golden[] = {
      {0, 0x48975bb00147b527ull}, {1, 0xbf1681d6c600f399ull}, {63, 0xbadfdd2da3cb44beull},
      {64, 0x30ecb32198e29f72ull}, {1024, 0x3a3806d72164209bull}, {5000, 0x4a609112ffd14eb4ull}};
  for (const auto& [n, value] : golden) EXPECT_EQ(values[n], value) << std::hex << values[n];
  std::set<uint64_t> distinct;
  for (const auto& [n, value] : values) distinct.insert(value);
  EXPECT_EQ(distinct.size(), values.size());

  const std::string block = b.substr(0, 4096);
  const uint64_t good = BlockChecksum::Of(block.data(), block.size());
  for (size_t bit = 0; bit < block.size() * 8; ++bit) {
    std::string flipped = block;
    flipped[bit / 8] = static_cast<char>(flipped[bit / 8] ^ (1 << (bit % 8)));
    ASSERT_NE(BlockChecksum::Of(flipped.data(), flipped.size()), good) << bit;
  }
  for (size_t from : {size_t{0}, size_t{100}, size_t{2048}, size_t{4000}}) {
    std::string zeroed = block;
    std::fill(zeroed.begin() + from, zeroed.begin() + std::min<size_t>(from + 96, 4096), '\0');
    EXPECT_NE(BlockChecksum::Of(zeroed.data(), zeroed.size()), good) << from;
  }
  std::string swapped = block;
  std::swap_ranges(swapped.begin(), swapped.begin() + 64, swapped.begin() + 64);
  EXPECT_NE(BlockChecksum::Of(swapped.data(), swapped.size()), good);
  EXPECT_NE(BlockChecksum::Of(block.data(), block.size() - 1), good);  // truncated
}

// ---- round trips

TEST_F(SegmentTest, RoundTripsEveryElementTypeAndAlignsEverySection) {
  const Sample sample(/*large=*/true);
  const std::string path = Path("sample.seg");
  ASSERT_TRUE(WriteSample(path, sample).ok());
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  auto reader = SegmentReader::Open(path);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  const SegmentReader& r = **reader;
  EXPECT_EQ(r.info().kind, "sample");
  EXPECT_EQ(r.info().creator, "flowrag");
  EXPECT_EQ(r.info().generation, 42);
  EXPECT_EQ(r.info().segment_id, 7u);
  EXPECT_EQ(r.info().format_version, kSegmentFormatVersion);
  EXPECT_EQ(r.info().file_bytes, fs::file_size(path));
  ASSERT_EQ(r.sections().size(), 15u);
  for (const SectionInfo& s : r.sections()) {
    EXPECT_EQ(s.offset % kSectionAlignment, 0u) << s.name;
    EXPECT_EQ(s.length, s.element_count * s.element_size) << s.name;
  }
  EXPECT_EQ(r.FindSection("big")->offset % kPageAlignment, 0u);
  EXPECT_EQ(r.FindSection("streamed")->offset % kPageAlignment, 0u);
  EXPECT_EQ(r.FindSection("edges")->element_type, ElementType::kOpaque);
  EXPECT_EQ(r.FindSection("edges")->element_size, sizeof(Edge));
  EXPECT_EQ(r.FindSection("weights")->element_type, ElementType::kF32);
  EXPECT_EQ(r.FindSection("empty")->element_count, 0u);
  EXPECT_EQ(r.FindSection("streamed")->element_count, sample.streamed.size());
  ExpectSample(r, sample);
  // Read again (verified once; the same bytes in place).
  ExpectSample(r, sample);
  EXPECT_TRUE(r.VerifyAll().ok());
  auto bytes = r.SectionBytes("edges");
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(bytes->size(), sample.edges.size() * sizeof(Edge));
}

TEST_F(SegmentTest, ASegmentWithoutSectionsIsValid) {
  const std::string path = Path("none.seg");
  auto w = SegmentWriter::Create(path, "tombstones", -1, 0, {.creator = "test 1.0"});
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Finish().ok());
  EXPECT_EQ(fs::file_size(path), sizeof(SegmentHeader));
  auto r = SegmentReader::Open(path);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE((*r)->sections().empty());
  EXPECT_EQ((*r)->info().generation, -1);
  EXPECT_EQ((*r)->info().creator, "test 1.0");
  EXPECT_TRUE((*r)->VerifyAll().ok());
}

TEST_F(SegmentTest, ReadingASectionAsAnotherTypeOrAMissingOneIsAnError) {
  const std::string path = Path("sample.seg");
  ASSERT_TRUE(WriteSample(path, Sample(false)).ok());
  auto reader = SegmentReader::Open(path);
  ASSERT_TRUE(reader.ok());
  const SegmentReader& r = **reader;
  auto missing = r.Section<uint32_t>("nope");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(Contains(missing.status(), path)) << missing.status().ToString();
  EXPECT_EQ(r.FindSection("nope"), nullptr);
  // Same size, other type; other size; a struct of another size.
  auto as_i32 = r.Section<int32_t>("offsets");
  EXPECT_EQ(as_i32.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(as_i32.status(), "offsets")) << as_i32.status().ToString();
  EXPECT_TRUE(Contains(as_i32.status(), "u32")) << as_i32.status().ToString();
  EXPECT_EQ(r.Section<uint32_t>("weights").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.Section<uint64_t>("offsets").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.Section<uint64_t>("edges").status().code(), StatusCode::kInvalidArgument);
  struct Wide {
    uint64_t a, b;
  };
  EXPECT_EQ(r.Section<Wide>("edges").status().code(), StatusCode::kInvalidArgument);
  // Raw bytes of any type.
  auto raw = r.SectionBytes("offsets");
  ASSERT_TRUE(raw.ok());
  EXPECT_EQ(raw->size(), 400u);
}

// Above 2^31 bytes: a sparse section (a hole, no disk written), then a
// small section whose offset needs 64 bits; its bytes and the big one's
// metadata read back. The big section's checksum is verified too when
// FLOWRAG_SEGMENT_VERIFY_LARGE is set (it faults in 2 GiB of zero pages).
TEST_F(SegmentTest, SectionsBeyondTwoGibibytes) {
  const std::string path = Path("large.seg");
  const uint64_t big = (uint64_t{1} << 31) + 12345 * 4;
  const std::vector<uint32_t> tail{1, 2, 3, 0xdeadbeef};
  {
    auto w = SegmentWriter::Create(path, "large", 1, 1);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->BeginSection<uint32_t>("zeros").ok());
    ASSERT_TRUE((*w)->AppendZeros(big).ok());
    ASSERT_TRUE((*w)->EndSection().ok());
    ASSERT_TRUE((*w)->AddSection("tail", tail).ok());
    ASSERT_TRUE((*w)->Finish().ok());
  }
  auto reader = SegmentReader::Open(path);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  const SegmentReader& r = **reader;
  ASSERT_EQ(r.sections().size(), 2u);
  EXPECT_EQ(r.sections()[0].length, big);
  EXPECT_EQ(r.sections()[0].element_count, big / 4);
  EXPECT_GT(r.sections()[1].offset, uint64_t{1} << 31);
  EXPECT_EQ(Read<uint32_t>(r, "tail"), tail);
  // Its block checksums: every 64 KiB block of zeros, then the last,
  // shorter one.
  EXPECT_EQ(r.sections()[0].block_count, big / 65536 + 1);
  EXPECT_EQ(r.sections()[0].checksum, [&] {
    const std::vector<char> zeros(65536);
    std::vector<uint64_t> sums(big / 65536, BlockChecksum::Of(zeros.data(), zeros.size()));
    sums.push_back(BlockChecksum::Of(zeros.data(), big % 65536));
    return StreamChecksum::Of(sums.data(), sums.size() * sizeof(uint64_t));
  }());
  // A ranged read at its end verifies one block, not 2 GiB.
  auto last = r.Rows<uint32_t>("zeros", big / 4 - 1, 1);
  ASSERT_TRUE(last.ok()) << last.status().ToString();
  EXPECT_EQ((*last)[0], 0u);
  if (std::getenv("FLOWRAG_SEGMENT_VERIFY_LARGE") != nullptr) {
    auto zeros = r.Section<uint32_t>("zeros");
    ASSERT_TRUE(zeros.ok()) << zeros.status().ToString();
    EXPECT_EQ(zeros->size(), big / 4);
    EXPECT_EQ((*zeros)[zeros->size() - 1], 0u);
  }
}

// ---- the writer's crash safety and errors

TEST_F(SegmentTest, AWriterDestroyedBeforeFinishLeavesNoFile) {
  const std::string path = Path("unfinished.seg");
  {
    auto w = SegmentWriter::Create(path, "sample", 1, 1);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->AddSection("offsets", std::vector<uint32_t>(1000, 7)).ok());
    EXPECT_TRUE(fs::exists(path + ".tmp"));
  }
  EXPECT_FALSE(fs::exists(path));
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  EXPECT_EQ(SegmentReader::Open(path).status().code(), StatusCode::kNotFound);
}

// A process killed before Finish: no segment, and the temporary file it
// leaves is no valid segment either (its header is written last).
TEST_F(SegmentTest, AProcessKilledBeforeFinishLeavesNoSegment) {
  const std::string path = Path("killed.seg");
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto w = SegmentWriter::Create(path, "sample", 1, 1);
    if (!w.ok()) _exit(2);
    if (!(*w)->AddSection("offsets", std::vector<uint32_t>(300000, 7)).ok()) _exit(3);
    if (!(*w)->BeginSection<float>("streamed").ok()) _exit(4);
    if (!(*w)->Append(std::span<const float>(std::vector<float>(1000, 1.0f))).ok()) _exit(5);
    _exit(0);  // no destructor, no Finish: as killed
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);
  EXPECT_FALSE(fs::exists(path));
  EXPECT_EQ(SegmentReader::Open(path).status().code(), StatusCode::kNotFound);
  ASSERT_TRUE(fs::exists(path + ".tmp"));
  auto tmp = SegmentReader::Open(path + ".tmp");
  EXPECT_EQ(tmp.status().code(), StatusCode::kCorruption);
  EXPECT_TRUE(Contains(tmp.status(), "magic")) << tmp.status().ToString();
  // The next writer of the path starts over.
  const Sample sample(false);
  ASSERT_TRUE(WriteSample(path, sample).ok());
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  auto r = SegmentReader::Open(path);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectSample(**r, sample);
}

// Finish replaces a segment at the path atomically; a reader that mapped
// the old file keeps reading it.
TEST_F(SegmentTest, FinishReplacesAnOldSegmentWhoseReadersKeepIt) {
  const std::string path = Path("replaced.seg");
  auto write = [&](uint32_t value) {
    auto w = SegmentWriter::Create(path, "sample", value, value);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->AddSection("values", std::vector<uint32_t>(100, value)).ok());
    ASSERT_TRUE((*w)->Finish().ok());
  };
  write(1);
  auto old_reader = SegmentReader::Open(path);
  ASSERT_TRUE(old_reader.ok());
  write(2);
  auto new_reader = SegmentReader::Open(path);
  ASSERT_TRUE(new_reader.ok());
  EXPECT_EQ(Read<uint32_t>(**old_reader, "values"), std::vector<uint32_t>(100, 1));
  EXPECT_EQ(Read<uint32_t>(**new_reader, "values"), std::vector<uint32_t>(100, 2));
  EXPECT_EQ((*new_reader)->info().generation, 2);
}

TEST_F(SegmentTest, WriterMisuseIsAnErrorThatSticksAndLeavesNoFile) {
  const std::string path = Path("misuse.seg");
  EXPECT_EQ(SegmentWriter::Create(path, "Upper", 1, 1).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(SegmentWriter::Create(path, "", 1, 1).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(SegmentWriter::Create(path, std::string(24, 'k'), 1, 1).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(
      SegmentWriter::Create(path, "k", 1, 1, {.creator = std::string(24, 'c')}).status().code(),
      StatusCode::kInvalidArgument);
  auto missing_dir = SegmentWriter::Create(Path("no/such/dir.seg"), "k", 1, 1);
  EXPECT_EQ(missing_dir.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(Contains(missing_dir.status(), Path("no/such/dir.seg")))
      << missing_dir.status().ToString();

  const std::vector<uint32_t> v{1, 2, 3};
  // Each misuse on a fresh writer: the error, then the same error again.
  const std::vector<std::pair<std::string, std::function<Status(SegmentWriter&)>>> misuses = {
      {"empty name", [&](SegmentWriter& w) { return w.AddSection("", v); }},
      {"32-byte name", [&](SegmentWriter& w) { return w.AddSection(std::string(32, 'n'), v); }},
      {"space in name", [&](SegmentWriter& w) { return w.AddSection("a b", v); }},
      {"duplicate",
       [&](SegmentWriter& w) {
         FLOWRAG_RETURN_IF_ERROR(w.AddSection("a", v));
         return w.AddSection("a", v);
       }},
      {"append outside", [&](SegmentWriter& w) { return w.Append(v.data(), 4); }},
      {"end outside", [&](SegmentWriter& w) { return w.EndSection(); }},
      {"partial element",
       [&](SegmentWriter& w) {
         FLOWRAG_RETURN_IF_ERROR(w.BeginSection<uint32_t>("a"));
         FLOWRAG_RETURN_IF_ERROR(w.Append(v.data(), 6));
         return w.EndSection();
       }},
      {"nested",
       [&](SegmentWriter& w) {
         FLOWRAG_RETURN_IF_ERROR(w.BeginSection<uint32_t>("a"));
         return w.BeginSection<uint32_t>("b");
       }},
      {"size not the type's",
       [&](SegmentWriter& w) { return w.BeginSection("a", ElementType::kF32, 8); }},
      {"opaque of size 0",
       [&](SegmentWriter& w) { return w.BeginSection("a", ElementType::kOpaque, 0); }},
      {"finish with a section open",
       [&](SegmentWriter& w) {
         FLOWRAG_RETURN_IF_ERROR(w.BeginSection<uint32_t>("a"));
         return w.Finish();
       }},
  };
  for (const auto& [what, misuse] : misuses) {
    SCOPED_TRACE(what);
    {
      auto w = SegmentWriter::Create(path, "k", 1, 1);
      ASSERT_TRUE(w.ok());
      const Status st = misuse(**w);
      EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
      EXPECT_TRUE(Contains(st, path)) << st.ToString();
      const Status again = (*w)->Finish();
      EXPECT_EQ(again.code(), StatusCode::kInvalidArgument) << again.ToString();
    }
    EXPECT_FALSE(fs::exists(path));
    EXPECT_FALSE(fs::exists(path + ".tmp"));
  }
  // A finished writer takes nothing more.
  auto w = SegmentWriter::Create(path, "k", 1, 1);
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Finish().ok());
  EXPECT_EQ((*w)->AddSection("a", v).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ((*w)->Finish().code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(SegmentReader::Open(path).ok());
}

// ---- torn and altered files

class DamagedSegmentTest : public SegmentTest {
 protected:
  void SetUp() override {
    SegmentTest::SetUp();
    good_path_ = Path("good.seg");
    ASSERT_TRUE(WriteSample(good_path_, sample_).ok());
    good_ = ReadFile(good_path_);
    bad_path_ = Path("bad.seg");
  }
  // Opens `bytes` written as a file.
  Result<std::shared_ptr<const SegmentReader>> OpenBytes(const std::string& bytes) {
    fs::remove(bad_path_);  // not truncated: ext4 flushes a truncated file at close
    WriteFile(bad_path_, bytes);
    return SegmentReader::Open(bad_path_);
  }
  // Open fails with Corruption naming the file and saying `what`.
  void ExpectCorrupt(const std::string& bytes, const std::string& what) {
    auto r = OpenBytes(bytes);
    ASSERT_FALSE(r.ok()) << what;
    EXPECT_EQ(r.status().code(), StatusCode::kCorruption) << r.status().ToString();
    EXPECT_TRUE(Contains(r.status(), bad_path_)) << r.status().ToString();
    EXPECT_TRUE(Contains(r.status(), what)) << r.status().ToString();
  }

  const Sample sample_{false};
  std::string good_path_;
  std::string good_;
  std::string bad_path_;
};

TEST_F(DamagedSegmentTest, TruncationAtAnyLengthIsCorruption) {
  const SegmentHeader h = HeaderOf(good_);
  std::vector<size_t> lengths = {
      0, 1, 8, 64, 127, 128, 129, h.table_offset, h.table_offset + 1, good_.size() - 1};
  for (size_t i = 0; i < h.section_count; ++i) {
    const SectionEntry e = EntryOf(good_, i);
    lengths.push_back(e.offset);
    lengths.push_back(e.offset + e.length / 2);
  }
  for (size_t n : lengths) {
    SCOPED_TRACE(n);
    ASSERT_LT(n, good_.size());
    ExpectCorrupt(good_.substr(0, n), n < sizeof(SegmentHeader) ? "shorter than" : "truncated");
  }
  ExpectCorrupt(good_ + '\0', "extended");
}

TEST_F(DamagedSegmentTest, EveryBitFlipInTheHeaderIsCorruption) {
  for (size_t i = 0; i < sizeof(SegmentHeader); ++i) {
    SCOPED_TRACE(i);
    std::string bad = good_;
    bad[i] ^= static_cast<char>(1 << (i % 8));
    // Version 3 flipped at bit 0 is version 2, which the reader reads: its
    // header checksum then fails.
    const bool readable_version = i == 8;
    const char* what = i < 8                       ? "magic"
                       : i < 12 && !readable_version ? "format version"
                                                     : "header checksum";
    ExpectCorrupt(bad, what);
  }
}

TEST_F(DamagedSegmentTest, EveryBitFlipInTheTableIsCorruption) {
  for (size_t i = HeaderOf(good_).table_offset; i < good_.size(); ++i) {
    SCOPED_TRACE(i);
    std::string bad = good_;
    bad[i] ^= static_cast<char>(1 << (i % 8));
    ExpectCorrupt(bad, "section table checksum");
  }
}

// A flip in a section passes Open (which reads no section) and is caught at
// the section's first read: Corruption naming file and section, every time,
// and no byte of it handed out; the other sections still read.
TEST_F(DamagedSegmentTest, ABitFlipInASectionIsCaughtAtItsFirstRead) {
  const SegmentHeader h = HeaderOf(good_);
  for (size_t s = 0; s < h.section_count; ++s) {
    const SectionEntry e = EntryOf(good_, s);
    if (e.length == 0) continue;
    for (uint64_t at : {e.offset, e.offset + e.length / 2, e.offset + e.length - 1}) {
      SCOPED_TRACE(std::string(e.name) + " at " + std::to_string(at));
      std::string bad = good_;
      bad[at] ^= 0x20;
      auto reader = OpenBytes(bad);
      ASSERT_TRUE(reader.ok()) << reader.status().ToString();
      const SegmentReader& r = **reader;
      for (int attempt = 0; attempt < 2; ++attempt) {
        auto bytes = r.SectionBytes(e.name);
        ASSERT_FALSE(bytes.ok());
        EXPECT_EQ(bytes.status().code(), StatusCode::kCorruption);
        EXPECT_TRUE(Contains(bytes.status(), bad_path_)) << bytes.status().ToString();
        EXPECT_TRUE(Contains(bytes.status(), "'" + std::string(e.name) + "'"))
            << bytes.status().ToString();
      }
      const Status all = r.VerifyAll();
      EXPECT_EQ(all.code(), StatusCode::kCorruption);
      EXPECT_TRUE(Contains(all, e.name)) << all.ToString();
      for (const SectionInfo& other : r.sections()) {
        if (other.name != e.name) {
          EXPECT_TRUE(r.SectionBytes(other.name).ok()) << other.name;
        }
      }
    }
  }
  // A typed read is refused the same way.
  std::string bad = good_;
  const SectionEntry offsets = EntryOf(good_, 4);
  ASSERT_STREQ(offsets.name, "offsets");
  bad[offsets.offset + 5] ^= 1;
  auto reader = OpenBytes(bad);
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ((*reader)->Section<uint32_t>("offsets").status().code(), StatusCode::kCorruption);
}

// Tables a checksum cannot catch (recomputed after the change): each
// violation is refused at Open with what is wrong.
TEST_F(DamagedSegmentTest, CraftedTablesWithValidChecksumsAreRefused) {
  const size_t offsets_index = 4;  // "offsets": 400 bytes
  const size_t deltas_index = 5;
  struct Case {
    std::string what;
    std::function<void(std::string&)> change;
    std::string message;
  };
  auto entry = [&](size_t index, std::function<void(SectionEntry&)> f) {
    return [=](std::string& bytes) {
      SectionEntry e = EntryOf(bytes, index);
      f(e);
      PutEntry(bytes, index, e);
    };
  };
  auto header = [](std::function<void(SegmentHeader&)> f) {
    return [=](std::string& bytes) {
      SegmentHeader h = HeaderOf(bytes);
      f(h);
      PutHeader(bytes, h);
    };
  };
  const std::vector<Case> cases = {
      {"overlap", entry(deltas_index, [](SectionEntry& e) { e.offset -= 64; }), "aligned between"},
      {"misaligned", entry(deltas_index, [](SectionEntry& e) { e.offset += 4; }), "aligned"},
      {"past the table",
       entry(offsets_index, [&](SectionEntry& e) { e.offset = HeaderOf(good_).table_offset; }),
       "aligned between"},
      {"offset + length overflows",
       entry(offsets_index,
             [](SectionEntry& e) {
               e.offset = UINT64_MAX - 4095;
               e.element_count = 4096 / 4;
               e.length = 4096;
             }),
       "aligned between"},
      {"count * size overflows",
       entry(offsets_index, [](SectionEntry& e) { e.element_count = (uint64_t{1} << 62) + 100; }),
       "are not its length"},
      {"length not count * size", entry(offsets_index, [](SectionEntry& e) { e.length = 404; }),
       "are not its length"},
      {"duplicate name",
       entry(deltas_index, [](SectionEntry& e) { std::strcpy(e.name, "offsets"); }),
       "name used twice"},
      {"name without NUL",
       entry(deltas_index, [](SectionEntry& e) { std::memset(e.name, 'x', 32); }),
       "NUL-terminated"},
      {"bytes after the NUL", entry(deltas_index, [](SectionEntry& e) { e.name[20] = 'x'; }),
       "NUL-padded"},
      {"empty name", entry(deltas_index, [](SectionEntry& e) { std::memset(e.name, 0, 32); }),
       "name is not"},
      {"unknown type", entry(deltas_index, [](SectionEntry& e) { e.element_type = 11; }),
       "unknown element type"},
      {"size not the type's", entry(deltas_index, [](SectionEntry& e) { e.element_type = 7; }),
       "does not fit its type"},
      {"element size 0",
       entry(offsets_index,
             [](SectionEntry& e) {
               e.element_type = 0;
               e.element_size = 0;
             }),
       "does not fit its type"},
      {"version 4", header([](SegmentHeader& h) { h.format_version = 4; }), "format version 4"},
      {"version 1 with blocks", header([](SegmentHeader& h) { h.format_version = 1; }),
       "in a version-1 file"},
      {"block size 2 KiB", header([](SegmentHeader& h) { h.block_shift = 11; }), "block size"},
      {"block size 2 GiB", header([](SegmentHeader& h) { h.block_shift = 31; }), "block size"},
      {"block size 0", header([](SegmentHeader& h) { h.block_shift = 0; }), "block size"},
      {"section block size 2 KiB", entry(deltas_index, [](SectionEntry& e) { e.block_shift = 11; }),
       "'deltas': block size 2^11, not 4 KiB to 1 GiB"},
      {"section block size 2 GiB", entry(deltas_index, [](SectionEntry& e) { e.block_shift = 31; }),
       "'deltas': block size 2^31"},
      {"section block size 0", entry(offsets_index, [](SectionEntry& e) { e.block_shift = 0; }),
       "'offsets': block size 2^0"},
      {"section block size 255", entry(offsets_index, [](SectionEntry& e) { e.block_shift = 255; }),
       "block size 2^255"},
      {"unknown flags", entry(deltas_index, [](SectionEntry& e) { e.flags = 2; }),
       "'deltas': unknown flags"},
      {"unknown flags with the hint", entry(deltas_index, [](SectionEntry& e) { e.flags = 0x81; }),
       "unknown flags"},
      {"block checksums elsewhere", entry(deltas_index, [](SectionEntry& e) { e.block_sums += 8; }),
       "block checksums at"},
      {"block checksums overlap the table",
       entry(offsets_index, [&](SectionEntry& e) { e.block_sums = HeaderOf(good_).table_offset; }),
       "block checksums at"},
      {"a gap before the table",
       [](std::string& bytes) {
         // The table moved 64 bytes later (the header says so and the
         // file grows by 64 bytes of zeros before it).
         SegmentHeader h = HeaderOf(bytes);
         bytes.insert(h.table_offset, std::string(64, '\0'));
         h.table_offset += 64;
         h.file_bytes += 64;
         PutHeader(bytes, h);
       },
       "not after the block checksums"},
      {"header size", header([](SegmentHeader& h) { h.header_bytes = 256; }), "header of 256"},
      {"kind", header([](SegmentHeader& h) { h.kind[0] = 'S'; }), "bad segment kind"},
      {"creator", header([](SegmentHeader& h) { h.creator[23] = 'c'; }), "bad creator"},
      {"reserved header field", header([](SegmentHeader& h) { h.reserved = 9; }), "reserved"},
      {"more sections than the table holds", header([](SegmentHeader& h) { h.section_count += 1; }),
       "does not end the file"},
      {"a huge section count", header([](SegmentHeader& h) { h.section_count = UINT32_MAX; }),
       "does not end the file"},
      {"table inside the header", header([](SegmentHeader& h) { h.table_offset = 64; }),
       "does not end the file"},
      {"file length", header([](SegmentHeader& h) { h.file_bytes += 64; }), "truncated"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    std::string bad = good_;
    c.change(bad);
    Rechecksum(bad);
    ExpectCorrupt(bad, c.message);
  }
  // The helper itself changes nothing on an intact file.
  std::string same = good_;
  Rechecksum(same);
  EXPECT_EQ(same, good_);
  EXPECT_TRUE(OpenBytes(same).ok());
}

TEST_F(DamagedSegmentTest, OpenRefusesWhatIsNoSegmentFile) {
  EXPECT_EQ(SegmentReader::Open(Path("missing.seg")).status().code(), StatusCode::kNotFound);
  auto dir = SegmentReader::Open(dir_.string());
  EXPECT_EQ(dir.status().code(), StatusCode::kCorruption) << dir.status().ToString();
  ExpectCorrupt(std::string(4096, '\0'), "magic");
  ExpectCorrupt(std::string(200, 'x'), "magic");
}

// ---- threads

// Threads that read the same sections for the first time at once all get
// the same verified spans (or, for a damaged section, all get Corruption).
TEST_F(DamagedSegmentTest, ConcurrentFirstReadsVerifyOnceAndAgree) {
  std::string bad = good_;
  const SectionEntry streamed = EntryOf(good_, 13);
  ASSERT_STREQ(streamed.name, "streamed");
  bad[streamed.offset + 100] ^= 4;
  auto reader = OpenBytes(bad);
  ASSERT_TRUE(reader.ok());
  const SegmentReader& r = **reader;
  constexpr int kThreads = 8;
  std::latch start(kThreads);
  std::vector<std::vector<const void*>> seen(kThreads);
  std::vector<int> corrupt(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      for (size_t k = 0; k < r.sections().size(); ++k) {
        const SectionInfo& s = r.sections()[(k + t) % r.sections().size()];
        auto bytes = r.SectionBytes(s.name);
        if (bytes.ok()) {
          seen[t].push_back(bytes->data());
        } else {
          corrupt[t] += bytes.status().code() == StatusCode::kCorruption;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(corrupt[t], 1) << t;
    std::vector<const void*> a = seen[t], b = seen[0];
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    EXPECT_EQ(a, b) << t;
  }
  EXPECT_EQ(seen[0].size(), r.sections().size() - 1);
  EXPECT_EQ(Read<float>(r, "weights"), sample_.weights);
}

// VerifyAhead on one thread while another reads every section (an open's
// adopter): the readers get what they get without it, a damaged wanted
// section is still Corruption to its reader, a section it skips is
// verified by its first read, and a stop set before it starts verifies
// nothing it would not have.
TEST_F(DamagedSegmentTest, VerifyingAheadChangesNoReadersResult) {
  std::string bad = good_;
  const SectionEntry streamed = EntryOf(good_, 13);
  ASSERT_STREQ(streamed.name, "streamed");
  bad[streamed.offset + 100] ^= 4;
  for (const bool stop_first : {false, true}) {
    for (const std::string skipped : {"", "streamed", "weights"}) {
      SCOPED_TRACE(skipped + (stop_first ? " stopped" : ""));
      auto reader = OpenBytes(bad);
      ASSERT_TRUE(reader.ok());
      const SegmentReader& r = **reader;
      std::atomic<bool> stop{stop_first};
      size_t asked = 0;
      std::thread ahead([&] {
        r.VerifyAhead(stop, [&](std::string_view name) {
          ++asked;
          return name != skipped;
        });
      });
      size_t corrupt = 0;
      for (const SectionInfo& s : r.sections()) {
        auto bytes = r.SectionBytes(s.name);
        if (!bytes.ok()) {
          EXPECT_EQ(s.name, "streamed");
          EXPECT_EQ(bytes.status().code(), StatusCode::kCorruption);
          ++corrupt;
        }
      }
      stop = true;
      ahead.join();
      EXPECT_EQ(corrupt, 1u);
      if (stop_first) EXPECT_EQ(asked, 0u);
      EXPECT_EQ(Read<float>(r, "weights"), sample_.weights);
    }
  }
}

// ---- block-granular verification (format version 2)

class BlockTest : public SegmentTest {
 protected:
  static constexpr uint64_t kBlock = 4096;
  // Section "rows": 10 whole 4 KiB blocks of u32 and a last block of 300
  // bytes; "after": a small section behind it.
  void SetUp() override {
    SegmentTest::SetUp();
    for (uint32_t i = 0; i < 10 * 1024 + 75; ++i) rows_.push_back(i * 2654435761u);
    path_ = Path("blocks.seg");
    auto w = SegmentWriter::Create(path_, "blocks", 1, 1, {.block_bytes = kBlock});
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->AddSection("rows", rows_).ok());
    ASSERT_TRUE((*w)->AddSection("after", std::vector<uint32_t>{5, 6}).ok());
    ASSERT_TRUE((*w)->Finish().ok());
    good_ = ReadFile(path_);
  }
  // The file with byte `at` of section "rows" flipped, opened.
  std::shared_ptr<const SegmentReader> OpenFlipped(uint64_t at) {
    std::string bad = good_;
    bad[EntryOf(good_, 0).offset + at] ^= 0x10;
    const std::string path = Path("flipped-" + std::to_string(at) + ".seg");
    WriteFile(path, bad);
    auto r = SegmentReader::Open(path);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : nullptr;
  }
  uint64_t RowsPerBlock() const { return kBlock / sizeof(uint32_t); }

  std::vector<uint32_t> rows_;
  std::string path_;
  std::string good_;
};

TEST_F(BlockTest, TheWriterRecordsOneChecksumPerBlock) {
  auto reader = SegmentReader::Open(path_);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  const SegmentReader& r = **reader;
  EXPECT_EQ(r.info().format_version, 3u);
  EXPECT_EQ(r.info().block_bytes, kBlock);
  const SectionInfo& s = *r.FindSection("rows");
  ASSERT_EQ(s.block_count, 11u);
  std::vector<uint64_t> want;
  for (uint64_t b = 0; b < s.block_count; ++b) {
    const uint64_t from = b * kBlock;
    want.push_back(
        BlockChecksum::Of(good_.data() + s.offset + from, std::min(kBlock, s.length - from)));
  }
  std::vector<uint64_t> stored(s.block_count);
  std::memcpy(stored.data(), good_.data() + s.block_sums, stored.size() * sizeof(uint64_t));
  EXPECT_EQ(stored, want);
  EXPECT_EQ(s.checksum, StreamChecksum::Of(want.data(), want.size() * sizeof(uint64_t)));
  ExpectRows(r, "rows", rows_);
  ExpectRows<uint32_t>(r, "after", {5, 6});
  EXPECT_TRUE(r.VerifyAll().ok());
}

TEST_F(BlockTest, BlockSizesThatAreNoPowerOfTwoFrom4KiBTo1GiBAreRefused) {
  for (uint64_t bytes :
       {uint64_t{0}, uint64_t{2048}, uint64_t{3000}, uint64_t{3 * 4096}, uint64_t{1} << 31}) {
    auto w = SegmentWriter::Create(Path("bad.seg"), "k", 1, 1, {.block_bytes = bytes});
    EXPECT_EQ(w.status().code(), StatusCode::kInvalidArgument) << bytes;
    EXPECT_TRUE(Contains(w.status(), "block size")) << w.status().ToString();
  }
  EXPECT_FALSE(fs::exists(Path("bad.seg.tmp")));
}

// A flip in block 3: rows of every other block still read (one by one and
// in ranges up to the damaged block's edges); rows in block 3, and ranges
// that cross it, are Corruption naming the file, the section and the
// block, every time; the whole section and VerifyAll fail the same way.
TEST_F(BlockTest, AFlipInOneBlockSpoilsOnlyThatBlocksRows) {
  const uint64_t per = RowsPerBlock();
  auto reader = OpenFlipped(3 * kBlock + 17);
  ASSERT_NE(reader, nullptr);
  const SegmentReader& r = *reader;
  auto view = r.View<uint32_t>("rows");
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  auto expect_damaged = [&](const Status& st) {
    EXPECT_EQ(st.code(), StatusCode::kCorruption) << st.ToString();
    EXPECT_TRUE(Contains(st, r.path())) << st.ToString();
    EXPECT_TRUE(Contains(st, "'rows'")) << st.ToString();
    EXPECT_TRUE(Contains(st, "block 3 of 11")) << st.ToString();
  };
  for (int attempt = 0; attempt < 2; ++attempt) {
    for (uint64_t i = 0; i < rows_.size(); ++i) {
      auto value = view->at(i);
      if (i / per == 3) {
        ASSERT_FALSE(value.ok()) << i;
        expect_damaged(value.status());
      } else {
        ASSERT_TRUE(value.ok()) << i << ": " << value.status().ToString();
        EXPECT_EQ(*value, rows_[i]) << i;
      }
    }
  }
  // Ranges up to the block's edges read; one row across them does not.
  EXPECT_TRUE(view->span(0, 3 * per).ok());
  EXPECT_TRUE(view->span(4 * per, rows_.size() - 4 * per).ok());
  expect_damaged(view->span(0, 3 * per + 1).status());
  expect_damaged(view->span(4 * per - 1, 2).status());
  expect_damaged(r.Rows<uint32_t>("rows", 2 * per, 3 * per).status());
  expect_damaged(r.Section<uint32_t>("rows").status());
  expect_damaged(r.SectionBytes("rows").status());
  expect_damaged(r.VerifyAll());
  // After the whole-section failure the other blocks still read.
  auto tail = view->span(10 * per, rows_.size() - 10 * per);
  ASSERT_TRUE(tail.ok());
  EXPECT_EQ(tail->back(), rows_.back());
  EXPECT_EQ(Read<uint32_t>(r, "after"), (std::vector<uint32_t>{5, 6}));
}

// The last, partial block (300 bytes) is checked over its own bytes only.
TEST_F(BlockTest, TheLastPartialBlockIsVerifiedAlone) {
  const uint64_t per = RowsPerBlock();
  auto reader = OpenFlipped(rows_.size() * 4 - 1);
  ASSERT_NE(reader, nullptr);
  auto view = reader->View<uint32_t>("rows");
  ASSERT_TRUE(view.ok());
  EXPECT_TRUE(view->span(0, 10 * per).ok());
  auto last = view->at(rows_.size() - 1);
  EXPECT_EQ(last.status().code(), StatusCode::kCorruption);
  EXPECT_TRUE(Contains(last.status(), "block 10 of 11 (bytes [40960, +300))"))
      << last.status().ToString();
  EXPECT_EQ(view->at(10 * per).status().code(), StatusCode::kCorruption);
  EXPECT_TRUE(view->at(10 * per - 1).ok());
}

// A flip in a section's block checksums: its view (and every read of it)
// is Corruption; the other sections read.
TEST_F(BlockTest, AFlipInTheBlockChecksumsSpoilsTheirSection) {
  std::string bad = good_;
  bad[EntryOf(good_, 0).block_sums + 8 * 5 + 2] ^= 1;
  WriteFile(Path("sums.seg"), bad);
  auto reader = SegmentReader::Open(Path("sums.seg"));
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  for (const Status& st : {(*reader)->View<uint32_t>("rows").status(),
                           (*reader)->Rows<uint32_t>("rows", 0, 1).status(),
                           (*reader)->Section<uint32_t>("rows").status(), (*reader)->VerifyAll()}) {
    EXPECT_EQ(st.code(), StatusCode::kCorruption) << st.ToString();
    EXPECT_TRUE(Contains(st, "'rows': block checksums mismatch")) << st.ToString();
  }
  EXPECT_EQ(Read<uint32_t>(**reader, "after"), (std::vector<uint32_t>{5, 6}));
}

TEST_F(BlockTest, RangesOutsideTheSectionAndWrongTypesAreInvalidArguments) {
  auto reader = SegmentReader::Open(path_);
  ASSERT_TRUE(reader.ok());
  auto view = (*reader)->View<uint32_t>("rows");
  ASSERT_TRUE(view.ok());
  const uint64_t n = rows_.size();
  EXPECT_TRUE(view->span(n, 0).ok());
  EXPECT_TRUE(view->span(0, 0).ok());
  for (auto [first, count] : std::vector<std::pair<uint64_t, uint64_t>>{
           {n, 1}, {n + 1, 0}, {0, n + 1}, {n - 1, 2}, {1, UINT64_MAX}, {UINT64_MAX, 1}}) {
    const Status st = view->span(first, count).status();
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << first << "+" << count;
    EXPECT_TRUE(Contains(st, "'rows'")) << st.ToString();
  }
  EXPECT_EQ(view->at(n).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ((*reader)->View<float>("rows").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ((*reader)->View<uint32_t>("nope").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(SectionView<uint32_t>().span(1, 0).status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(SectionView<uint32_t>().span(0, 0).ok());
}

// Sections shorter than a block, of exactly one block, of one block and a
// byte, of whole blocks, and empty: every row reads through a view, the
// block counts are right, and a flip in the last byte of each is caught
// in its last block and no other.
TEST_F(BlockTest, SectionsShorterThanEqualToAndJustOverABlock) {
  const std::vector<std::pair<std::string, uint64_t>> sizes = {
      {"one_byte", 1},      {"short", kBlock - 1},      {"one_block", kBlock},
      {"over", kBlock + 1}, {"two_blocks", 2 * kBlock}, {"empty", 0}};
  const std::string path = Path("sizes.seg");
  std::vector<std::vector<uint8_t>> data;
  {
    auto w = SegmentWriter::Create(path, "sizes", 1, 1, {.block_bytes = kBlock});
    ASSERT_TRUE(w.ok());
    for (const auto& [name, bytes] : sizes) {
      std::vector<uint8_t> d(bytes);
      for (size_t i = 0; i < bytes; ++i) d[i] = static_cast<uint8_t>(i * 7 + name.size());
      ASSERT_TRUE((*w)->AddSection(name, d).ok());
      data.push_back(std::move(d));
    }
    ASSERT_TRUE((*w)->Finish().ok());
  }
  const std::string good = ReadFile(path);
  auto reader = SegmentReader::Open(path);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  for (size_t k = 0; k < sizes.size(); ++k) {
    const auto& [name, bytes] = sizes[k];
    SCOPED_TRACE(name);
    EXPECT_EQ((*reader)->FindSection(name)->block_count, (bytes + kBlock - 1) / kBlock);
    ExpectRows(**reader, name, data[k]);
    if (bytes == 0) continue;
    std::string bad = good;
    bad[EntryOf(good, k).offset + bytes - 1] ^= 1;
    const std::string bad_path = Path("sizes-" + name + ".seg");
    WriteFile(bad_path, bad);
    auto damaged = SegmentReader::Open(bad_path);
    ASSERT_TRUE(damaged.ok());
    auto view = (*damaged)->View<uint8_t>(name);
    ASSERT_TRUE(view.ok());
    const uint64_t last_block = (bytes - 1) / kBlock;
    const Status st = view->at(bytes - 1).status();
    EXPECT_EQ(st.code(), StatusCode::kCorruption);
    EXPECT_TRUE(Contains(st, "block " + std::to_string(last_block) + " of")) << st.ToString();
    if (last_block > 0) {
      EXPECT_TRUE(view->span(0, last_block * kBlock).ok());
    }
    for (size_t other = 0; other < sizes.size(); ++other) {
      if (other != k) ExpectRows(**damaged, sizes[other].first, data[other]);
    }
  }
}

// ---- per-section block sizes and access hints

// The VmFlags of the mapping holding `address` in /proc/self/smaps ("" when
// none is found).
std::string VmFlagsAt(const void* address) {
  std::ifstream in("/proc/self/smaps");
  const uintptr_t at = reinterpret_cast<uintptr_t>(address);
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    unsigned long long from = 0, to = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx ", &from, &to) == 2 && line.find(':') > 8) {
      inside = at >= from && at < to;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line.substr(8) + " ";
    }
  }
  return "";
}

class MixedBlockTest : public SegmentTest {
 protected:
  // Three sections of one file (default blocks 64 KiB): "vectors" in 4 KiB
  // blocks read at random (100 KiB of u32: 25 blocks), "postings" in the
  // default 64 KiB blocks (200,000 bytes: 4 blocks, the last partial),
  // "links" in 16 KiB blocks read at random (40,000 bytes: 3 blocks).
  void SetUp() override {
    SegmentTest::SetUp();
    for (uint32_t i = 0; i < 25 * 1024; ++i) vectors_.push_back(i * 2654435761u);
    for (uint32_t i = 0; i < 200000; ++i) postings_.push_back(static_cast<uint8_t>(i * 31 + 7));
    for (uint64_t i = 0; i < 5000; ++i) links_.push_back(i * 0x9E3779B97F4A7C15ull);
    path_ = Path("mixed.seg");
    auto w = SegmentWriter::Create(path_, "mixed", 1, 1);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->AddSection("vectors", vectors_,
                                 {.block_bytes = 4096, .access = SectionAccess::kRandom})
                    .ok());
    ASSERT_TRUE((*w)->BeginSection<uint8_t>("postings").ok());
    ASSERT_TRUE((*w)->Append(std::span<const uint8_t>(postings_)).ok());
    ASSERT_TRUE((*w)->EndSection().ok());
    ASSERT_TRUE((*w)->BeginSection<uint64_t>(
                        "links", {.block_bytes = 16384, .access = SectionAccess::kRandom})
                    .ok());
    ASSERT_TRUE((*w)->Append(std::span<const uint64_t>(links_)).ok());
    ASSERT_TRUE((*w)->EndSection().ok());
    ASSERT_TRUE((*w)->Finish().ok());
    good_ = ReadFile(path_);
  }
  // The file with byte `at` of section `index` flipped, opened.
  std::shared_ptr<const SegmentReader> OpenFlipped(size_t index, uint64_t at) {
    std::string bad = good_;
    bad[EntryOf(good_, index).offset + at] ^= 0x08;
    const std::string path = Path("mixed-" + std::to_string(index) + "-" + std::to_string(at));
    WriteFile(path, bad);
    auto r = SegmentReader::Open(path);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : nullptr;
  }
  void ExpectAllRows(const SegmentReader& r) {
    ExpectRows(r, "vectors", vectors_);
    ExpectRows(r, "postings", postings_);
    ExpectRows(r, "links", links_);
  }

  std::vector<uint32_t> vectors_;
  std::vector<uint8_t> postings_;
  std::vector<uint64_t> links_;
  std::string path_;
  std::string good_;
};

// Each entry holds its own block size and hint; each section's block
// checksums are over its own blocks; every row reads.
TEST_F(MixedBlockTest, EachSectionHasItsOwnBlockSizeAndHint) {
  struct Want {
    std::string name;
    uint8_t shift;
    uint8_t flags;
    uint64_t blocks;
    SectionAccess access;
  };
  const std::vector<Want> want = {{"vectors", 12, kSectionRandomAccess, 25, SectionAccess::kRandom},
                                  {"postings", 16, 0, 4, SectionAccess::kSequential},
                                  {"links", 14, kSectionRandomAccess, 3, SectionAccess::kRandom}};
  EXPECT_EQ(HeaderOf(good_).block_shift, kDefaultBlockShift);
  auto reader = SegmentReader::Open(path_);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  const SegmentReader& r = **reader;
  EXPECT_EQ(r.info().block_bytes, uint64_t{1} << kDefaultBlockShift);
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(want[i].name);
    const SectionEntry e = EntryOf(good_, i);
    EXPECT_STREQ(e.name, want[i].name.c_str());
    EXPECT_EQ(e.block_shift, want[i].shift);
    EXPECT_EQ(e.flags, want[i].flags);
    const SectionInfo& s = r.sections()[i];
    EXPECT_EQ(s.block_shift, want[i].shift);
    EXPECT_EQ(s.block_bytes, uint64_t{1} << want[i].shift);
    EXPECT_EQ(s.block_count, want[i].blocks);
    EXPECT_EQ(s.access, want[i].access);
    std::vector<uint64_t> sums;
    for (uint64_t from = 0; from < s.length; from += s.block_bytes) {
      sums.push_back(BlockChecksum::Of(good_.data() + s.offset + from,
                                       std::min(s.block_bytes, s.length - from)));
    }
    EXPECT_EQ(sums.size(), s.block_count);
    EXPECT_EQ(std::memcmp(good_.data() + s.block_sums, sums.data(), sums.size() * 8), 0);
    EXPECT_EQ(s.checksum, StreamChecksum::Of(sums.data(), sums.size() * 8));
  }
  ExpectAllRows(r);
  EXPECT_TRUE(r.VerifyAll().ok());
}

// A flip in one section spoils the rows of its block, sized by that
// section's block size, and nothing in the other sections.
TEST_F(MixedBlockTest, DamageStaysInTheBlockOfItsOwnSection) {
  struct Flip {
    size_t index;
    std::string name;
    uint64_t at;           // byte in the section
    uint64_t block_bytes;  // the section's
    uint64_t block_count;
  };
  for (const Flip& f :
       {Flip{0, "vectors", 5 * 4096 + 3, 4096, 25}, Flip{1, "postings", 65536 + 100, 65536, 4},
        Flip{2, "links", 2 * 16384 + 8, 16384, 3}}) {
    SCOPED_TRACE(f.name);
    auto reader = OpenFlipped(f.index, f.at);
    ASSERT_NE(reader, nullptr);
    const SegmentReader& r = *reader;
    const uint64_t block = f.at / f.block_bytes;
    const std::string label =
        "block " + std::to_string(block) + " of " + std::to_string(f.block_count);
    // Byte ranges of the damaged section: the damaged block's first and
    // last byte fail, the bytes just outside it read.
    auto bytes_of = [&](uint64_t from, uint64_t n) -> Status {
      const SectionInfo& s = r.sections()[f.index];
      switch (s.element_size) {
        case 1:
          return r.Rows<uint8_t>(f.name, from, n).status();
        case 4:
          return r.Rows<uint32_t>(f.name, from / 4, n / 4).status();
        default:
          return r.Rows<uint64_t>(f.name, from / 8, n / 8).status();
      }
    };
    const uint64_t size = r.sections()[f.index].element_size;
    const uint64_t begin = block * f.block_bytes;
    const uint64_t end = std::min(begin + f.block_bytes, r.sections()[f.index].length);
    for (uint64_t inside : {begin, end - size}) {
      const Status st = bytes_of(inside, size);
      EXPECT_EQ(st.code(), StatusCode::kCorruption) << inside;
      EXPECT_TRUE(Contains(st, "'" + f.name + "': " + label)) << st.ToString();
    }
    EXPECT_TRUE(bytes_of(begin - size, size).ok());
    if (end < r.sections()[f.index].length) {
      EXPECT_TRUE(bytes_of(end, size).ok());
    }
    EXPECT_TRUE(bytes_of(0, begin).ok());
    // The other sections read whole and row by row.
    for (size_t other = 0; other < 3; ++other) {
      if (other == f.index) continue;
      const std::string name = r.sections()[other].name;
      if (name == "vectors") ExpectRows(r, name, vectors_);
      if (name == "postings") ExpectRows(r, name, postings_);
      if (name == "links") ExpectRows(r, name, links_);
      EXPECT_TRUE(r.SectionBytes(name).ok()) << name;
    }
    const Status all = r.VerifyAll();
    EXPECT_TRUE(Contains(all, label)) << all.ToString();
  }
}

// Open advises MADV_RANDOM on the random sections' pages (VmFlags "rr" in
// /proc/self/smaps) and not on the sequential one's; reading a random
// section whole leaves the advice (and reads right).
TEST_F(MixedBlockTest, OpenAdvisesRandomSectionsOnly) {
  auto reader = SegmentReader::Open(path_);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  const SegmentReader& r = **reader;
  auto vectors = r.View<uint32_t>("vectors");
  auto postings = r.View<uint8_t>("postings");
  auto links = r.View<uint64_t>("links");
  ASSERT_TRUE(vectors.ok() && postings.ok() && links.ok());
  const void* at_vectors = vectors->span(0, 0)->data();
  const void* at_postings = postings->span(100000, 0)->data();
  const void* at_links = links->span(0, 0)->data();
  if (VmFlagsAt(at_vectors).empty()) GTEST_SKIP() << "no VmFlags in /proc/self/smaps";
  EXPECT_NE(VmFlagsAt(at_vectors).find(" rr "), std::string::npos) << VmFlagsAt(at_vectors);
  EXPECT_NE(VmFlagsAt(at_links).find(" rr "), std::string::npos) << VmFlagsAt(at_links);
  EXPECT_EQ(VmFlagsAt(at_postings).find(" rr "), std::string::npos) << VmFlagsAt(at_postings);
  auto whole = r.Section<uint32_t>("vectors");
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  EXPECT_TRUE(std::equal(whole->begin(), whole->end(), vectors_.begin(), vectors_.end()));
  EXPECT_TRUE(r.VerifyAll().ok());
  EXPECT_NE(VmFlagsAt(at_vectors).find(" rr "), std::string::npos) << VmFlagsAt(at_vectors);
}

// The writer refuses a section block size that is no power of two from
// 4 KiB to 1 GiB, sticky, and leaves no file.
TEST_F(MixedBlockTest, SectionBlockSizesOutOfRangeAreRefused) {
  const std::vector<uint32_t> v{1, 2, 3};
  for (uint64_t bytes : {uint64_t{2048}, uint64_t{12288}, uint64_t{1} << 31}) {
    SCOPED_TRACE(bytes);
    const std::string path = Path("bad-block.seg");
    {
      auto w = SegmentWriter::Create(path, "k", 1, 1);
      ASSERT_TRUE(w.ok());
      const Status added = (*w)->AddSection("a", v, {.block_bytes = bytes});
      EXPECT_EQ(added.code(), StatusCode::kInvalidArgument);
      EXPECT_TRUE(Contains(added, "'a': block size")) << added.ToString();
      EXPECT_EQ((*w)->BeginSection<uint32_t>("b", {.block_bytes = bytes}).code(),
                StatusCode::kInvalidArgument);
      EXPECT_EQ((*w)->Finish().code(), StatusCode::kInvalidArgument);
    }
    EXPECT_FALSE(fs::exists(path));
    EXPECT_FALSE(fs::exists(path + ".tmp"));
  }
}

// 8 threads touch rows for the first time at once, each in its own order
// (so the same blocks and different ones concurrently), on a file with one
// damaged block: every thread sees the same values for every good row and
// Corruption for exactly the damaged block's rows.
TEST_F(BlockTest, ConcurrentFirstTouchesOfTheSameAndDifferentBlocksAgree) {
  const uint64_t per = RowsPerBlock();
  auto reader = OpenFlipped(6 * kBlock + 100);
  ASSERT_NE(reader, nullptr);
  auto view = reader->View<uint32_t>("rows");
  ASSERT_TRUE(view.ok());
  constexpr int kThreads = 8;
  const uint64_t n = rows_.size();
  std::latch start(kThreads);
  std::vector<uint64_t> wrong(kThreads, 0), corrupt(kThreads, 0), misjudged(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      // Threads 0-3 walk forward from different blocks, 4-7 stride through
      // all blocks: first touches collide on the same blocks and not.
      for (uint64_t k = 0; k < n; ++k) {
        const uint64_t i = t < 4 ? (k + t * 3 * per) % n : (k * 1031 + t) % n;
        auto value = view->at(i);
        if (!value.ok()) {
          corrupt[t] += 1;
          misjudged[t] += i / per != 6 || value.status().code() != StatusCode::kCorruption;
        } else {
          wrong[t] += i / per == 6 || *value != rows_[i];
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(wrong[t], 0u) << t;
    EXPECT_EQ(misjudged[t], 0u) << t;
    EXPECT_EQ(corrupt[t], per) << t;
  }
  EXPECT_EQ(view->span(0, 6 * per)->size(), 6 * per);
}

// ---- the committed fixtures

// The header a fixture of WriteSample has.
void ExpectSampleHeader(const SegmentReader& r, uint32_t version, uint64_t block_bytes,
                        size_t sections) {
  EXPECT_EQ(r.info().format_version, version);
  EXPECT_EQ(r.info().block_bytes, block_bytes);
  EXPECT_EQ(r.info().kind, "sample");
  EXPECT_EQ(r.info().generation, 42);
  EXPECT_EQ(r.info().segment_id, 7u);
  EXPECT_EQ(r.sections().size(), sections);
}

// tests/testdata/segment/v1_sample.seg: WriteSample(Sample(false)) by format
// version 1 (no blocks). The reader must still read it: whole sections,
// views (verified whole: version 1 has no blocks), VerifyAll; a flipped
// section is still Corruption, and the version-1 rules still hold.
TEST_F(SegmentTest, TheVersion1FixtureIsStillRead) {
  const std::string fixture = std::string(FLOWRAG_TESTDATA_DIR) + "/segment/v1_sample.seg";
  const std::string committed = ReadFile(fixture);
  ASSERT_FALSE(committed.empty()) << fixture << " missing";
  const Sample sample(false);
  {
    auto reader = SegmentReader::Open(fixture);
    ASSERT_TRUE(reader.ok()) << reader.status().ToString();
    const SegmentReader& r = **reader;
    ExpectSampleHeader(r, /*version=*/1, /*block_bytes=*/0, /*sections=*/14);
    ExpectRows(r, "offsets", sample.offsets);
    ExpectRows(r, "edges", sample.edges);
    EXPECT_TRUE(r.VerifyAll().ok());
    ExpectSample(r, sample);
  }
  // Its checksums, as stored: a change of StreamChecksum breaks them.
  EXPECT_EQ(HeaderOf(committed).header_checksum,
            StreamChecksum::Of(committed.data(), kHeaderChecksummedBytes));
  // A flipped version-1 section: its view and its reads are Corruption
  // (the whole section's checksum), the others read.
  std::string bad = committed;
  const SectionEntry offsets = EntryOf(committed, 4);
  ASSERT_STREQ(offsets.name, "offsets");
  bad[offsets.offset + 5] ^= 1;
  WriteFile(Path("v1-bad.seg"), bad);
  auto reader = SegmentReader::Open(Path("v1-bad.seg"));
  ASSERT_TRUE(reader.ok());
  for (const Status& st : {(*reader)->View<uint32_t>("offsets").status(),
                           (*reader)->Rows<uint32_t>("offsets", 99, 1).status()}) {
    EXPECT_EQ(st.code(), StatusCode::kCorruption) << st.ToString();
    EXPECT_TRUE(Contains(st, "'offsets': checksum mismatch")) << st.ToString();
  }
  ExpectRows(**reader, "deltas", sample.deltas);
  // Version 1 keeps its reserved fields: non-zero is refused.
  std::string crafted = committed;
  SectionEntry e = EntryOf(crafted, 5);
  e.block_sums = 64;
  PutEntry(crafted, 5, e);
  Rechecksum(crafted);
  WriteFile(Path("v1-crafted.seg"), crafted);
  auto refused = SegmentReader::Open(Path("v1-crafted.seg"));
  EXPECT_EQ(refused.status().code(), StatusCode::kCorruption);
  EXPECT_TRUE(Contains(refused.status(), "reserved field not zero")) << refused.status().ToString();
  // So are its entries' block size and flags (version 1's element type's
  // upper bytes).
  for (auto change :
       {std::function<void(SectionEntry&)>([](SectionEntry& x) { x.block_shift = 12; }),
        std::function<void(SectionEntry&)>([](SectionEntry& x) { x.flags = 1; })}) {
    crafted = committed;
    e = EntryOf(crafted, 5);
    change(e);
    PutEntry(crafted, 5, e);
    Rechecksum(crafted);
    WriteFile(Path("v1-crafted.seg"), crafted);
    refused = SegmentReader::Open(Path("v1-crafted.seg"));
    EXPECT_TRUE(Contains(refused.status(), "'deltas': reserved field not zero"))
        << refused.status().ToString();
  }
  crafted = committed;
  SegmentHeader h = HeaderOf(crafted);
  h.block_shift = 16;
  PutHeader(crafted, h);
  Rechecksum(crafted);
  WriteFile(Path("v1-crafted.seg"), crafted);
  refused = SegmentReader::Open(Path("v1-crafted.seg"));
  EXPECT_TRUE(Contains(refused.status(), "in a version-1 file")) << refused.status().ToString();
}

// The block checksums of section `s` of `file`, recomputed by `version`'s
// block checksum, equal the stored ones.
void ExpectBlockSumsOf(const std::string& file, const SectionInfo& s, uint32_t version) {
  std::vector<uint64_t> sums;
  for (uint64_t from = 0; from < s.length; from += s.block_bytes) {
    sums.push_back(SegmentBlockChecksum(version, file.data() + s.offset + from,
                                        std::min(s.block_bytes, s.length - from)));
  }
  ASSERT_EQ(sums.size(), s.block_count) << s.name;
  if (sums.empty()) return;  // an empty section has no blocks (and memcmp no null pointers)
  EXPECT_EQ(std::memcmp(file.data() + s.block_sums, sums.data(), sums.size() * 8), 0) << s.name;
}

// WriteSample(Sample(false, rows)) in the default blocks of 64 KiB but for
// "rows": 4 KiB blocks, read at random (the fixtures of versions 2 and 3).
Status WriteRowsSample(const std::string& path, const Sample& sample) {
  return WriteSample(path, sample, {}, {.block_bytes = 4096, .access = SectionAccess::kRandom});
}

// The reads a rows-sample fixture of `version` must give.
void ExpectRowsSampleFixture(const std::string& fixture, uint32_t version, const Sample& sample) {
  const std::string committed = ReadFile(fixture);
  ASSERT_FALSE(committed.empty()) << fixture << " missing";
  auto reader = SegmentReader::Open(fixture);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  const SegmentReader& r = **reader;
  ExpectSampleHeader(r, version, /*block_bytes=*/65536, /*sections=*/15);
  EXPECT_EQ(r.FindSection("rows")->block_bytes, 4096u);
  EXPECT_EQ(r.FindSection("rows")->block_count, 3u);
  EXPECT_EQ(r.FindSection("rows")->access, SectionAccess::kRandom);
  EXPECT_EQ(r.FindSection("offsets")->block_bytes, 65536u);
  EXPECT_EQ(r.FindSection("offsets")->access, SectionAccess::kSequential);
  for (const SectionInfo& s : r.sections()) ExpectBlockSumsOf(committed, s, version);
  ExpectRows(r, "rows", sample.rows);
  EXPECT_TRUE(r.VerifyAll().ok());
  ExpectSample(r, sample);
  EXPECT_EQ(HeaderOf(committed).header_checksum,
            StreamChecksum::Of(committed.data(), kHeaderChecksummedBytes));
}

// tests/testdata/segment/v2_sample.seg: the rows sample by format version
// 2 (StreamChecksum blocks), as the writer wrote it before version 3. The
// reader must still read it, verify its blocks by StreamChecksum, and find
// a flipped block.
TEST_F(SegmentTest, TheVersion2FixtureIsStillRead) {
  const std::string fixture = std::string(FLOWRAG_TESTDATA_DIR) + "/segment/v2_sample.seg";
  const Sample sample(false, /*with_rows=*/true);
  ExpectRowsSampleFixture(fixture, /*version=*/2, sample);
  std::string flipped = ReadFile(fixture);
  ASSERT_FALSE(flipped.empty());
  auto good = SegmentReader::Open(fixture);
  ASSERT_TRUE(good.ok());
  const SectionInfo rows = *(*good)->FindSection("rows");
  flipped[rows.offset + 4096 + 7] ^= 0x10;  // block 1 of "rows"
  WriteFile(Path("v2-flipped.seg"), flipped);
  auto reader = SegmentReader::Open(Path("v2-flipped.seg"));
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  auto damaged = (*reader)->Rows<uint32_t>("rows", 1024, 4);
  EXPECT_EQ(damaged.status().code(), StatusCode::kCorruption);
  EXPECT_TRUE(Contains(damaged.status(), "block 1")) << damaged.status().ToString();
  EXPECT_TRUE((*reader)->Rows<uint32_t>("rows", 0, 4).ok());  // block 0 is intact
}

// tests/testdata/segment/v3_sample.seg: the rows sample by format version
// 3 (BlockChecksum blocks). The writer must still produce it byte for byte
// (the format did not drift), and the reader must read it.
TEST_F(SegmentTest, TheVersion3FixtureIsWrittenAndReadByteForByte) {
  const std::string fixture = std::string(FLOWRAG_TESTDATA_DIR) + "/segment/v3_sample.seg";
  const std::string fresh = Path("fresh.seg");
  const Sample sample(false, /*with_rows=*/true);
  ASSERT_TRUE(WriteRowsSample(fresh, sample).ok());
  if (std::getenv("FLOWRAG_REWRITE_SEGMENT_FIXTURE") != nullptr) {
    fs::create_directories(fs::path(fixture).parent_path());
    fs::copy_file(fresh, fixture, fs::copy_options::overwrite_existing);
  }
  EXPECT_TRUE(ReadFile(fresh) == ReadFile(fixture)) << "the writer no longer writes " << fixture;
  ExpectRowsSampleFixture(fixture, /*version=*/3, sample);
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
