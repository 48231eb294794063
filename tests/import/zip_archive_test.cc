// Tests of reading entries of a zip archive: archives written here byte by
// byte after PKWARE's APPNOTE.TXT (6.3; 4.3.7 local header, 4.3.12 central
// header, 4.3.16 end record) with zlib's CRC-32 and raw deflate, and the
// archives torch.jit.save writes (tools/make_fixtures.py).
#include "import/zip_archive.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "testing/fixtures.h"
#include "testing/little_endian.h"

namespace torchcost::import {
namespace {

using testing::Put16;
using testing::Put32;

using ::testing::HasSubstr;

uint32_t Crc(const std::string& data) {
  return static_cast<uint32_t>(
      crc32(crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(data.data()),
            static_cast<uInt>(data.size())));
}

// Raw deflate (no zlib header), as zip's method 8 holds it.
std::string Deflate(const std::string& data) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, 9, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY),
            Z_OK);
  std::string out(deflateBound(&z, static_cast<uLong>(data.size())), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

struct Entry {
  std::string name, data;
  bool deflate = false;
  uint32_t crc_xor = 0;  // Flips bits of the recorded CRC-32.
};

std::string MakeZip(const std::vector<Entry>& entries) {
  std::string bytes;
  std::vector<size_t> local;
  std::vector<std::string> stored;
  for (const Entry& e : entries) {
    const std::string body = e.deflate ? Deflate(e.data) : e.data;
    stored.push_back(body);
    local.push_back(bytes.size());
    Put32(bytes, 0x04034b50);
    Put16(bytes, 20);
    Put16(bytes, 0);
    Put16(bytes, e.deflate ? 8 : 0);
    Put32(bytes, 0);
    Put32(bytes, Crc(e.data) ^ e.crc_xor);
    Put32(bytes, static_cast<uint32_t>(body.size()));
    Put32(bytes, static_cast<uint32_t>(e.data.size()));
    Put16(bytes, static_cast<uint16_t>(e.name.size()));
    Put16(bytes, 0);
    bytes += e.name + body;
  }
  const size_t cd = bytes.size();
  for (size_t i = 0; i < entries.size(); ++i) {
    const Entry& e = entries[i];
    Put32(bytes, 0x02014b50);
    Put16(bytes, 20);
    Put16(bytes, 20);
    Put16(bytes, 0);
    Put16(bytes, e.deflate ? 8 : 0);
    Put32(bytes, 0);
    Put32(bytes, Crc(e.data) ^ e.crc_xor);  // CRC-32 (offset 16).
    Put32(bytes, static_cast<uint32_t>(stored[i].size()));
    Put32(bytes, static_cast<uint32_t>(e.data.size()));
    Put16(bytes, static_cast<uint16_t>(e.name.size()));
    Put16(bytes, 0);
    Put16(bytes, 0);
    Put16(bytes, 0);
    Put16(bytes, 0);
    Put32(bytes, 0);
    Put32(bytes, static_cast<uint32_t>(local[i]));
    bytes += e.name;
  }
  const size_t eocd = bytes.size();
  Put32(bytes, 0x06054b50);
  Put16(bytes, 0);
  Put16(bytes, 0);
  Put16(bytes, static_cast<uint16_t>(entries.size()));
  Put16(bytes, static_cast<uint16_t>(entries.size()));
  Put32(bytes, static_cast<uint32_t>(eocd - cd));
  Put32(bytes, static_cast<uint32_t>(cd));
  Put16(bytes, 0);
  return bytes;
}

std::vector<Entry> TorchArchive() {
  return {{"net/data.pkl", "\x80\x02N.", false, 0},
          {"net/code/__torch__.py",
           std::string(300, 'a') + "class Net(Module):\n", true, 0},
          {"net/version", "3\n", false, 0}};
}

TEST(ZipArchiveTest, ReadsStoredAndDeflatedEntries) {
  Result<ZipArchive> zip = ZipArchive::OpenBytes(MakeZip(TorchArchive()));
  ASSERT_TRUE(zip.ok()) << zip.status().message();
  EXPECT_EQ(zip->root(), "net/");
  ASSERT_EQ(zip->entries().size(), 3u);
  EXPECT_TRUE(zip->Contains("net/version"));
  EXPECT_FALSE(zip->Contains("version"));
  ASSERT_NE(zip->Find("net/version"), nullptr);
  EXPECT_EQ(zip->Find("net/version")->uncompressed, 2u);
  EXPECT_EQ(zip->Find("version"), nullptr);
  Result<std::string> version = zip->Read("net/version");
  ASSERT_TRUE(version.ok()) << version.status().message();
  EXPECT_EQ(*version, "3\n");
  Result<std::string> code = zip->Read("net/code/__torch__.py");
  ASSERT_TRUE(code.ok()) << code.status().message();
  EXPECT_EQ(*code, std::string(300, 'a') + "class Net(Module):\n");
  // 300 repeated bytes deflate to far fewer: the entry really was compressed.
  EXPECT_LT(zip->entries()[1].compressed, 100u);
}

TEST(ZipArchiveTest, AMissingEntryIsNotFound) {
  Result<ZipArchive> zip = ZipArchive::OpenBytes(MakeZip(TorchArchive()));
  ASSERT_TRUE(zip.ok());
  Result<std::string> r = zip->Read("net/constants.pkl");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kNotFound);
}

TEST(ZipArchiveTest, AWrongCrcIsCorruption) {
  std::vector<Entry> entries = TorchArchive();
  entries[2].crc_xor = 1;
  Result<ZipArchive> zip = ZipArchive::OpenBytes(MakeZip(entries));
  ASSERT_TRUE(zip.ok());
  EXPECT_TRUE(zip->Read("net/data.pkl").ok());
  Result<std::string> r = zip->Read("net/version");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(),
              HasSubstr("entry 'net/version' fails its CRC-32 check"));
}

TEST(ZipArchiveTest, OpeningChecksTheArchive) {
  std::string bytes = MakeZip(TorchArchive());
  Result<ZipArchive> cut =
      ZipArchive::OpenBytes(bytes.substr(0, bytes.size() - 5));
  ASSERT_FALSE(cut.ok());
  EXPECT_THAT(cut.status().message(),
              HasSubstr("no end-of-central-directory record"));
  Result<ZipArchive> no_pickle =
      ZipArchive::OpenBytes(MakeZip({{"net/version", "3\n", false, 0}}));
  ASSERT_FALSE(no_pickle.ok());
  EXPECT_THAT(no_pickle.status().message(),
              HasSubstr("no 'net/data.pkl' record"));
  EXPECT_FALSE(ZipArchive::OpenFile("/nonexistent/model.pt").ok());
}

TEST(ZipArchiveTest, ReadsWhatTorchJitSaveWrote) {
  ASSERT_TRUE(testing::EnsureFixtures("tiny"));
  Result<ZipArchive> zip =
      ZipArchive::OpenFile(testing::FixturePath("tiny.pt"));
  ASSERT_TRUE(zip.ok()) << zip.status().message();
  Result<std::string> data = zip->Read(zip->root() + "data.pkl");
  ASSERT_TRUE(data.ok()) << data.status().message();
  // A protocol-2 pickle: PROTO 2 first, STOP last.
  ASSERT_GE(data->size(), 3u);
  EXPECT_EQ(static_cast<uint8_t>((*data)[0]), 0x80);
  EXPECT_EQ((*data)[1], 2);
  EXPECT_EQ(data->back(), '.');
}

}  // namespace
}  // namespace torchcost::import
