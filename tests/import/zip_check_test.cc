// Tests of the zip check run before LibTorch reads a TorchScript archive:
// archives written here byte by byte after PKWARE's APPNOTE.TXT (6.3, 4.3.7
// local header, 4.3.12 central header, 4.3.16 end record), each corrupted in
// one place; and the archives torch.jit.save writes (tools/make_fixtures.py).
#include "import/zip_check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "testing/little_endian.h"
#include "torchcost/import.h"

namespace torchcost::import {
namespace {

using testing::Put16;
using testing::Put32;

using ::testing::HasSubstr;
using ::testing::StartsWith;

void Set16(std::string& s, size_t at, uint16_t v) {
  s[at] = static_cast<char>(v & 0xFF);
  s[at + 1] = static_cast<char>(v >> 8);
}
void Set32(std::string& s, size_t at, uint32_t v) {
  Set16(s, at, static_cast<uint16_t>(v & 0xFFFF));
  Set16(s, at + 2, static_cast<uint16_t>(v >> 16));
}

// A stored (uncompressed) zip archive and where its records start.
struct Zip {
  std::string bytes;
  std::vector<size_t> local;    // Local header of each entry.
  std::vector<size_t> central;  // Central header of each entry.
  size_t eocd = 0;              // End-of-central-directory record.
};

// Writes `entries` (name, data) stored, as APPNOTE lays them out.
Zip MakeStoredZip(
    const std::vector<std::pair<std::string, std::string>>& entries) {
  Zip z;
  for (const auto& [name, data] : entries) {
    z.local.push_back(z.bytes.size());
    Put32(z.bytes, 0x04034b50);  // Local header signature.
    Put16(z.bytes, 20);          // Version needed.
    Put16(z.bytes, 0);           // Flags.
    Put16(z.bytes, 0);           // Method: stored.
    Put32(z.bytes, 0);           // Time, date.
    Put32(z.bytes, 0);           // CRC-32 (not checked).
    Put32(z.bytes, static_cast<uint32_t>(data.size()));
    Put32(z.bytes, static_cast<uint32_t>(data.size()));
    Put16(z.bytes, static_cast<uint16_t>(name.size()));
    Put16(z.bytes, 0);  // Extra length.
    z.bytes += name + data;
  }
  const size_t cd = z.bytes.size();
  for (size_t i = 0; i < entries.size(); ++i) {
    const auto& [name, data] = entries[i];
    z.central.push_back(z.bytes.size());
    Put32(z.bytes, 0x02014b50);  // Central header signature.
    Put16(z.bytes, 20);          // Version made by.
    Put16(z.bytes, 20);          // Version needed.
    Put16(z.bytes, 0);           // Flags (offset 8).
    Put16(z.bytes, 0);           // Method (offset 10).
    Put32(z.bytes, 0);           // Time, date.
    Put32(z.bytes, 0);           // CRC-32.
    // Compressed (offset 20).
    Put32(z.bytes, static_cast<uint32_t>(data.size()));
    // Uncompressed (offset 24).
    Put32(z.bytes, static_cast<uint32_t>(data.size()));
    // Name length (offset 28).
    Put16(z.bytes, static_cast<uint16_t>(name.size()));
    Put16(z.bytes, 0);  // Extra length.
    Put16(z.bytes, 0);  // Comment length.
    Put16(z.bytes, 0);  // Disk number start (offset 34).
    Put16(z.bytes, 0);  // Internal attributes.
    Put32(z.bytes, 0);  // External attributes.
    // Local header offset (offset 42).
    Put32(z.bytes, static_cast<uint32_t>(z.local[i]));
    z.bytes += name;
  }
  z.eocd = z.bytes.size();
  Put32(z.bytes, 0x06054b50);
  Put16(z.bytes, 0);  // This disk.
  Put16(z.bytes, 0);  // Disk of the central directory.
  Put16(z.bytes, static_cast<uint16_t>(entries.size()));
  Put16(z.bytes, static_cast<uint16_t>(entries.size()));
  // Central directory size (offset 12).
  Put32(z.bytes, static_cast<uint32_t>(z.eocd - cd));
  // Central directory offset (offset 16).
  Put32(z.bytes, static_cast<uint32_t>(cd));
  Put16(z.bytes, 0);  // Comment length.
  return z;
}

// The records of a torch.jit.save archive named "archive".
Zip Good() {
  return MakeStoredZip({{"archive/data.pkl", "pickle"},
                        {"archive/constants.pkl", "c"},
                        {"archive/version", "3\n"}});
}

std::string ErrorOf(const std::string& bytes) {
  Status s = CheckZipBytes(bytes);
  return s.ok() ? "" : s.message();
}

TEST(ZipCheckTest, AcceptsAWellFormedArchive) {
  EXPECT_EQ(ErrorOf(Good().bytes), "");
}

TEST(ZipCheckTest, RefusesEveryTruncation) {
  const std::string bytes = Good().bytes;
  for (size_t n = 0; n < bytes.size(); ++n)
    EXPECT_NE(ErrorOf(bytes.substr(0, n)), "") << n << " bytes";
}

TEST(ZipCheckTest, NotAZip) {
  EXPECT_THAT(ErrorOf("hello"), HasSubstr("not a zip archive"));
  EXPECT_THAT(ErrorOf(std::string(100, 'x')),
              HasSubstr("no end-of-central-directory record"));
}

TEST(ZipCheckTest, CentralDirectoryOutsideTheFile) {
  Zip z = Good();
  Set32(z.bytes, z.eocd + 16, 1u << 30);
  EXPECT_THAT(ErrorOf(z.bytes), HasSubstr("central directory"));
  z = Good();
  Set32(z.bytes, z.eocd + 12, 0xFFFFFF00u);  // A size that wraps a 32-bit sum.
  EXPECT_THAT(ErrorOf(z.bytes), HasSubstr("central directory"));
}

TEST(ZipCheckTest, MoreEntriesThanTheDirectoryHolds) {
  Zip z = Good();
  Set16(z.bytes, z.eocd + 8, 1000);
  Set16(z.bytes, z.eocd + 10, 1000);
  EXPECT_THAT(ErrorOf(z.bytes), HasSubstr("cannot fit"));
}

TEST(ZipCheckTest, Zip64MarkerWithoutLocator) {
  Zip z = Good();
  Set32(z.bytes, z.eocd + 16, 0xFFFFFFFFu);
  EXPECT_THAT(ErrorOf(z.bytes), HasSubstr("zip64"));
}

TEST(ZipCheckTest, BadNames) {
  EXPECT_THAT(
      ErrorOf(MakeStoredZip({{"archive/../x", ""}, {"archive/data.pkl", ""}})
                  .bytes),
      HasSubstr("'..'"));
  EXPECT_THAT(ErrorOf(MakeStoredZip({{"/archive/data.pkl", ""}}).bytes),
              HasSubstr("absolute"));
  EXPECT_THAT(ErrorOf(MakeStoredZip({{std::string("a\0b", 3), ""}}).bytes),
              HasSubstr("NUL"));
  EXPECT_THAT(ErrorOf(MakeStoredZip({{"archive/data.pkl", "a"},
                                     {"archive/data.pkl", "b"}})
                          .bytes),
              HasSubstr("appears twice"));
}

TEST(ZipCheckTest, EncryptionAndMethods) {
  Zip z = Good();
  Set16(z.bytes, z.central[0] + 8, 1);
  EXPECT_THAT(ErrorOf(z.bytes), HasSubstr("encrypted"));
  z = Good();
  Set16(z.bytes, z.central[0] + 10, 12);  // bzip2.
  EXPECT_THAT(ErrorOf(z.bytes), HasSubstr("compression method 12"));
  z = Good();
  // Stored, but 6 bytes compressed and 7 uncompressed.
  Set32(z.bytes, z.central[0] + 24, 7);
  EXPECT_THAT(ErrorOf(z.bytes), HasSubstr("two sizes differ"));
}

TEST(ZipCheckTest, DeflateCannotExpandBeyondItsBound) {
  // A deflated entry of 6 bytes claiming 1 GiB: deflate expands a byte to at
  // most 1032.
  Zip z = Good();
  Set16(z.bytes, z.local[0] + 8, 8);
  Set16(z.bytes, z.central[0] + 10, 8);
  Set32(z.bytes, z.central[0] + 24, 1u << 30);
  EXPECT_THAT(ErrorOf(z.bytes),
              HasSubstr("claims 1073741824 bytes from 6 compressed"));
  // 6 compressed bytes may expand to 6 * 1032 = 6192.
  Set32(z.bytes, z.central[0] + 24, 6192);
  EXPECT_EQ(ErrorOf(z.bytes), "");
}

TEST(ZipCheckTest, LocalHeaderMustAgree) {
  Zip z = Good();
  Set32(z.bytes, z.local[1], 0x12345678);
  EXPECT_THAT(ErrorOf(z.bytes), HasSubstr("bad local header signature"));
  z = Good();
  z.bytes[z.local[0] + 30] = 'X';  // The local copy of the name.
  EXPECT_THAT(ErrorOf(z.bytes),
              HasSubstr("local header names 'Xrchive/data.pkl'"));
  z = Good();
  // Points into the directory.
  Set32(z.bytes, z.central[2] + 42, static_cast<uint32_t>(z.central[0]));
  EXPECT_THAT(ErrorOf(z.bytes), HasSubstr("not before the central directory"));
}

TEST(ZipCheckTest, OverlappingEntries) {
  // The first entry's data (6 bytes) grown to 40 runs over the second's local
  // header.
  Zip z = Good();
  Set32(z.bytes, z.central[0] + 20, 40);
  Set32(z.bytes, z.central[0] + 24, 40);
  EXPECT_THAT(ErrorOf(z.bytes), HasSubstr("overlap"));
}

TEST(ZipCheckTest, TorchScriptRecords) {
  EXPECT_THAT(ErrorOf(MakeStoredZip({{"archive/data.pkl", ""}}).bytes),
              HasSubstr("no 'archive/version' record"));
  EXPECT_THAT(ErrorOf(MakeStoredZip({{"archive/version", "3"}}).bytes),
              HasSubstr("no 'archive/data.pkl' record"));
  EXPECT_THAT(ErrorOf(MakeStoredZip({{"data.pkl", ""}}).bytes),
              HasSubstr("not in a directory"));
  EXPECT_EQ(
      ErrorOf(
          MakeStoredZip({{"m/data.pkl", ""}, {"m/.data/version", "3"}}).bytes),
      "");
}

const char kFixtureDir[] = TORCHCOST_BINARY_DIR "/fixtures";

// The archives torch.jit.save wrote pass; the same, cut short, fail with our
// error before LibTorch reads them.
TEST(ZipCheckFixtureTest, TorchJitSaveArchivesPassAndTruncatedOnesFail) {
  const std::string make = std::string("/usr/bin/python3 \"") +
                           TORCHCOST_SOURCE_DIR +
                           "/tools/make_fixtures.py\" \"" + kFixtureDir +
                           "\" --models lenet5,tiny,scripted";
  ASSERT_EQ(std::system(make.c_str()), 0);
  int checked = 0;
  for (const auto& f : std::filesystem::directory_iterator(kFixtureDir)) {
    const std::string path = f.path().string();
    const std::string name = f.path().filename().string();
    if (f.path().extension() != ".pt" || name == "corrupt.pt" ||
        name == "not_torchscript.pt")
      continue;
    Status s = CheckZipFile(path);
    EXPECT_TRUE(s.ok()) << path << ": " << s.message();
    ++checked;
  }
  EXPECT_GE(checked, 3);
  std::ifstream in(std::string(kFixtureDir) + "/lenet5.pt", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)),
                    std::istreambuf_iterator<char>());
  ASSERT_GT(bytes.size(), 1000u);
  const std::string cut = ::testing::TempDir() + "/zip_check_cut_" +
                          std::to_string(::getpid()) + ".pt";
  std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() - 30);
  EXPECT_THAT(CheckZipFile(cut).message(),
              HasSubstr("no end-of-central-directory record"));
  if (TORCHCOST_WITH_LIBTORCH) {
    // ImportTorchScript checks before it loads the plugin: the error is ours.
    Result<ir::Graph> g = ImportTorchScript(cut);
    ASSERT_FALSE(g.ok());
    EXPECT_EQ(g.status().message(),
              cut +
                  ": cannot read TorchScript archive: not a zip archive (no "
                  "end-of-central-directory record)");
  }
  std::filesystem::remove(cut);
}

}  // namespace
}  // namespace torchcost::import
