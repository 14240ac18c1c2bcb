// ArraySink / ArraySource over segment files (segment/segment_arrays.h).
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "segment/segment_arrays.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

namespace fs = std::filesystem;

class SegmentArraysTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::path(::testing::TempDir()) / "segment-arrays-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/a.seg";
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Writes u32 "ids" (random access), f32 "vals", a u64 scalar and strings.
  void WriteSample() {
    auto writer = SegmentWriter::Create(path_, "test", 1, 1);
    ASSERT_TRUE(writer.ok()) << writer.status().ToString();
    SegmentArraySink sink(writer->get());
    ASSERT_TRUE(sink.Put<uint32_t>("ids", ids_, /*random=*/true).ok());
    ASSERT_TRUE(sink.Put<float>("vals", vals_).ok());
    ASSERT_TRUE(sink.PutScalar<uint64_t>("count", 7).ok());
    ASSERT_TRUE(sink.PutStrings("names", StringArena(names_)).ok());
    ASSERT_TRUE((*writer)->Finish().ok());
  }

  std::string dir_, path_;
  std::vector<uint32_t> ids_ = std::vector<uint32_t>(5000, 3);
  std::vector<float> vals_ = {1.5f, -2.0f, 0.25f};
  std::vector<std::string> names_ = {"Ada Lovelace", "", "Ødegaard"};
};

TEST_F(SegmentArraysTest, ArraysComeBackInPlaceFromTheMappedFile) {
  WriteSample();
  auto reader = SegmentReader::Open(path_);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  SegmentArraySource source(*reader);
  Result<FlatArray<uint32_t>> ids = source.Get<uint32_t>("ids");
  ASSERT_TRUE(ids.ok()) << ids.status().ToString();
  EXPECT_EQ(std::vector<uint32_t>(ids->begin(), ids->end()), ids_);
  EXPECT_TRUE(ids->borrowed());
  const SectionInfo* info = (*reader)->FindSection("ids");
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->block_bytes, 4096u);  // random arrays: small blocks, random hint
  EXPECT_EQ(info->access, SectionAccess::kRandom);
  EXPECT_EQ((*reader)->FindSection("vals")->access, SectionAccess::kSequential);
  EXPECT_EQ(source.GetScalar<uint64_t>("count").value(), 7u);
  Result<StringArena> names = source.GetStrings("names");
  ASSERT_TRUE(names.ok());
  ASSERT_EQ(names->size(), 3u);
  EXPECT_EQ((*names)[2], "Ødegaard");
  EXPECT_TRUE(source.Has("vals"));
  EXPECT_FALSE(source.Has("nothing"));

  // The arrays keep the mapping alive after the source and reader go.
  Result<FlatArray<float>> vals = source.Get<float>("vals");
  ASSERT_TRUE(vals.ok());
  reader->reset();
  EXPECT_EQ(std::vector<float>(vals->begin(), vals->end()), vals_);
}

TEST_F(SegmentArraysTest, WrongKindMissingAndDamagedArraysAreRefused) {
  WriteSample();
  {
    auto reader = SegmentReader::Open(path_);
    ASSERT_TRUE(reader.ok());
    SegmentArraySource source(*reader);
    EXPECT_EQ(source.Get<int32_t>("ids").status().code(), StatusCode::kInvalidArgument);
    Result<FlatArray<float>> missing = source.Get<float>("nope");
    EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
    EXPECT_NE(missing.status().message().find("nope"), std::string::npos);
  }
  // One byte of "vals" changed in place: its checksum no longer matches.
  const SectionInfo vals = *(*SegmentReader::Open(path_))->FindSection("vals");
  {
    std::fstream f(path_, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(vals.offset));
    f.put('\x7f');
  }
  auto reader = SegmentReader::Open(path_);
  ASSERT_TRUE(reader.ok());
  SegmentArraySource source(*reader);
  EXPECT_EQ(source.Get<float>("vals").status().code(), StatusCode::kCorruption);
  EXPECT_TRUE(source.Get<uint32_t>("ids").ok());  // other arrays still read
}

TEST_F(SegmentArraysTest, ALazyArrayIsVerifiedByTheRangesItsReaderAsksFor) {
  WriteSample();  // "ids": 20,000 bytes in 4 KiB blocks
  const SectionInfo ids = *(*SegmentReader::Open(path_))->FindSection("ids");
  ASSERT_EQ(ids.block_count, 5u);
  {
    std::fstream f(path_, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(ids.offset + 4096 * 3 + 10));  // block 3
    f.put('\x7f');
  }
  auto reader = SegmentReader::Open(path_);
  ASSERT_TRUE(reader.ok());
  SegmentArraySource source(*reader);
  // Adopted without reading it; the damage is not known yet.
  Result<FlatArray<uint32_t>> lazy = source.GetLazy<uint32_t>("ids");
  ASSERT_TRUE(lazy.ok()) << lazy.status().ToString();
  EXPECT_TRUE(lazy->lazy());
  EXPECT_EQ(lazy->size(), ids_.size());
  EXPECT_TRUE(source.Damage().ok());
  const uint64_t damaged_before = SegmentDamageCount();
  // Rows in blocks 0-2 read; a range touching block 3 does not.
  EXPECT_TRUE(lazy->Verify(0, 3072).ok());
  const Status bad = lazy->Verify(3000, 100);  // bytes 12,000-12,400: block 2 and 3
  EXPECT_EQ(bad.code(), StatusCode::kCorruption);
  EXPECT_NE(bad.message().find("'ids': block 3"), std::string::npos) << bad.ToString();
  EXPECT_TRUE(lazy->Verify(4096, 904).ok());  // block 4
  EXPECT_EQ(lazy->VerifyAll().code(), StatusCode::kCorruption);
  // Recorded once, with the source and process-wide (the engine rebuilds).
  EXPECT_EQ(source.Damage().code(), StatusCode::kCorruption);
  EXPECT_EQ(SegmentDamageCount(), damaged_before + 1);
  EXPECT_EQ(SegmentDamageOf(path_).code(), StatusCode::kCorruption);
  EXPECT_TRUE(SegmentDamageOf(dir_ + "/other.seg").ok());
  // What an adopter reports of verified bytes is kept, not the first.
  lazy->ReportDamage(Status::Corruption("ids: id out of range"));
  EXPECT_EQ(source.Damage().message(), bad.message());
  // A whole read refuses it; arrays borrowed whole are never lazy.
  EXPECT_EQ(source.Get<uint32_t>("ids").status().code(), StatusCode::kCorruption);
  Result<FlatArray<float>> vals = source.Get<float>("vals");
  ASSERT_TRUE(vals.ok());
  EXPECT_FALSE(vals->lazy());
  EXPECT_TRUE(vals->Verify(0, 3).ok());
  // A source that cannot defer hands out verified arrays.
  MemoryArrays memory;
  ASSERT_TRUE(memory.Put<float>("vals", vals_).ok());
  Result<FlatArray<float>> eager = memory.GetLazy<float>("vals");
  ASSERT_TRUE(eager.ok());
  EXPECT_FALSE(eager->lazy());
  EXPECT_TRUE(memory.Damage().ok());
}

TEST_F(SegmentArraysTest, AnArrayPutTwiceFailsTheSegment) {
  auto writer = SegmentWriter::Create(path_, "test", 1, 1);
  ASSERT_TRUE(writer.ok());
  SegmentArraySink sink(writer->get());
  ASSERT_TRUE(sink.Put<float>("vals", vals_).ok());
  EXPECT_EQ(sink.Put<float>("vals", vals_).code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE((*writer)->Finish().ok());  // the writer's errors are sticky
  EXPECT_FALSE(fs::exists(path_));
}

TEST(SegmentElementTypeTest, EveryKindHasItsType) {
  EXPECT_EQ(SegmentElementType(ArrayKind::kU8), ElementType::kU8);
  EXPECT_EQ(SegmentElementType(ArrayKind::kI16), ElementType::kI16);
  EXPECT_EQ(SegmentElementType(ArrayKind::kU64), ElementType::kU64);
  EXPECT_EQ(SegmentElementType(ArrayKind::kF64), ElementType::kF64);
  for (ArrayKind kind : {ArrayKind::kU8, ArrayKind::kI8, ArrayKind::kU16, ArrayKind::kI16,
                         ArrayKind::kU32, ArrayKind::kI32, ArrayKind::kU64, ArrayKind::kI64,
                         ArrayKind::kF32, ArrayKind::kF64}) {
    EXPECT_NE(SegmentElementType(kind), ElementType::kOpaque);
  }
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
