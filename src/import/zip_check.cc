#include "import/zip_check.h"

#include <algorithm>
#include <fstream>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

namespace torchcost::import {
namespace {

// Record signatures and fixed sizes (PKWARE's APPNOTE.TXT 6.3,
// sections 4.3.7-4.3.16).
constexpr uint32_t kLocalSig = 0x04034b50, kCentralSig = 0x02014b50,
                   kEocdSig = 0x06054b50;
constexpr uint32_t kZip64EocdSig = 0x06064b50, kZip64LocatorSig = 0x07064b50;
constexpr uint64_t kLocalSize = 30, kCentralSize = 46, kEocdSize = 22;
constexpr uint64_t kZip64EocdSize = 56, kZip64LocatorSize = 20;
constexpr uint64_t kMaxComment = 0xFFFF;
constexpr uint32_t kU32Max = 0xFFFFFFFF;
constexpr uint16_t kU16Max = 0xFFFF;
// NB: a documented limit, not the format's: a TorchScript archive's central
// directory is ~100 bytes per tensor, so 256 MiB is millions of entries.
constexpr uint64_t kMaxCentralDirectory = uint64_t{256} << 20;
// Deflate emits at least one bit per 258 bytes of output, so one compressed
// byte expands to at most 8 * 258 / 2 = 1032 bytes (zlib's bound); 64 bytes of
// slack for the block headers.
constexpr uint64_t kMaxDeflateRatio = 1032, kDeflateSlack = 64;

uint16_t U16(const std::string& b, size_t at) {
  return static_cast<uint16_t>(static_cast<uint8_t>(b[at]) |
                               static_cast<uint8_t>(b[at + 1]) << 8);
}
uint32_t U32(const std::string& b, size_t at) {
  return U16(b, at) | static_cast<uint32_t>(U16(b, at + 2)) << 16;
}
uint64_t U64(const std::string& b, size_t at) {
  return U32(b, at) | static_cast<uint64_t>(U32(b, at + 4)) << 32;
}

// Returns true if [offset, offset + length) lies within [0, limit), without
// overflow.
bool Within(uint64_t offset, uint64_t length, uint64_t limit) {
  return offset <= limit && length <= limit - offset;
}

Status Corrupt(const std::string& what) {
  return Status::InvalidArgument("corrupt zip: " + what);
}

using Entry = ZipEntry;

// Where the central directory is, from the (zip64) end record.
struct Directory {
  uint64_t offset = 0, size = 0, entries = 0;
  // Where entry data must stop: the central directory's start.
  uint64_t end = 0;
};

Status ReadAt(const ByteSource& src, uint64_t offset, uint64_t n,
              std::string* out, const char* what) {
  if (!Within(offset, n, src.size())) {
    return Corrupt(std::string(what) + " at offset " + std::to_string(offset) +
                   " runs past the end of the file (" +
                   std::to_string(src.size()) + " bytes)");
  }
  if (!src.Read(offset, static_cast<size_t>(n), out))
    return Status::InvalidArgument("I/O error reading the file");
  return Status::Ok();
}

Result<Directory> FindDirectory(const ByteSource& src) {
  const uint64_t size = src.size();
  if (size < kEocdSize)
    return Status::InvalidArgument("not a zip archive (" +
                                   std::to_string(size) + " bytes)");
  // The end record is the last 22 bytes plus a comment of up to 64 KiB: search
  // that tail backwards.
  const uint64_t tail_start = size - std::min(size, kEocdSize + kMaxComment);
  std::string tail;
  TORCHCOST_RETURN_IF_ERROR(
      ReadAt(src, tail_start, size - tail_start, &tail, "end record"));
  size_t at = tail.size() - kEocdSize + 1;
  bool found = false;
  while (at-- > 0) {
    if (U32(tail, at) == kEocdSig &&
        at + kEocdSize + U16(tail, at + 20) <= tail.size()) {
      found = true;
      break;
    }
  }
  if (!found)
    return Status::InvalidArgument(
        "not a zip archive (no end-of-central-directory record)");
  const uint64_t eocd = tail_start + at;
  if (U16(tail, at + 4) != 0 || U16(tail, at + 6) != 0)
    return Corrupt("multi-disk archives are not supported");
  Directory dir;
  dir.entries = U16(tail, at + 10);
  dir.size = U32(tail, at + 12);
  dir.offset = U32(tail, at + 16);
  dir.end = eocd;
  if (U16(tail, at + 8) != dir.entries)
    return Corrupt("entry counts of the end record disagree");
  if (dir.entries == kU16Max || dir.size == kU32Max || dir.offset == kU32Max) {
    // Zip64: a locator just before the end record points at the zip64 end
    // record.
    if (eocd < kZip64LocatorSize)
      return Corrupt("zip64 fields without a zip64 locator");
    std::string loc;
    TORCHCOST_RETURN_IF_ERROR(ReadAt(src, eocd - kZip64LocatorSize,
                                     kZip64LocatorSize, &loc, "zip64 locator"));
    if (U32(loc, 0) != kZip64LocatorSig)
      return Corrupt("zip64 fields without a zip64 locator");
    const uint64_t rec = U64(loc, 8);
    if (!Within(rec, kZip64EocdSize, eocd - kZip64LocatorSize)) {
      return Corrupt("zip64 end record offset " + std::to_string(rec) +
                     " lies outside the file");
    }
    std::string z;
    TORCHCOST_RETURN_IF_ERROR(
        ReadAt(src, rec, kZip64EocdSize, &z, "zip64 end record"));
    if (U32(z, 0) != kZip64EocdSig)
      return Corrupt("bad zip64 end record signature");
    if (U32(z, 16) != 0 || U32(z, 20) != 0)
      return Corrupt("multi-disk archives are not supported");
    if (U64(z, 24) != U64(z, 32))
      return Corrupt("entry counts of the zip64 end record disagree");
    dir.entries = U64(z, 32);
    dir.size = U64(z, 40);
    dir.offset = U64(z, 48);
    dir.end = rec;
  }
  if (!Within(dir.offset, dir.size, dir.end)) {
    return Corrupt("central directory [offset " + std::to_string(dir.offset) +
                   ", " + std::to_string(dir.size) +
                   " bytes] does not end before the end record at " +
                   std::to_string(dir.end));
  }
  if (dir.size > kMaxCentralDirectory)
    return Corrupt("central directory larger than 256 MiB");
  if (dir.entries == 0) return Corrupt("the archive is empty");
  if (dir.entries > dir.size / kCentralSize) {
    return Corrupt(std::to_string(dir.entries) + " entries cannot fit a " +
                   std::to_string(dir.size) + "-byte central directory");
  }
  return dir;
}

// Returns an error unless `name` is a relative path without ".." or NUL.
Status CheckName(const std::string& name, uint64_t index) {
  const std::string where = "entry " + std::to_string(index);
  if (name.empty()) return Corrupt(where + " has an empty name");
  if (name.find('\0') != std::string::npos)
    return Corrupt(where + " has a NUL in its name");
  if (name[0] == '/') return Corrupt(where + " has an absolute name");
  size_t start = 0;
  while (start <= name.size()) {
    size_t slash = name.find('/', start);
    if (slash == std::string::npos) slash = name.size();
    if (name.compare(start, slash - start, "..") == 0)
      return Corrupt(where + " has a '..' in its name");
    start = slash + 1;
  }
  return Status::Ok();
}

// Reads the zip64 extended-information field of an entry's extra data
// (APPNOTE 4.5.3).
Status ReadZip64Extra(const std::string& cd, size_t extra, size_t extra_len,
                      Entry* e, bool disk_overflow, const std::string& where) {
  const bool need_u = e->uncompressed == kU32Max,
             need_c = e->compressed == kU32Max,
             need_o = e->local_offset == kU32Max;
  if (!need_u && !need_c && !need_o && !disk_overflow) return Status::Ok();
  size_t at = extra;
  while (at + 4 <= extra + extra_len) {
    const uint16_t id = U16(cd, at), len = U16(cd, at + 2);
    if (at + 4 + len > extra + extra_len) break;
    if (id == 0x0001) {
      size_t p = at + 4, end = at + 4 + len;
      auto take = [&](uint64_t* field) {
        if (p + 8 > end) return false;
        *field = U64(cd, p);
        p += 8;
        return true;
      };
      if ((need_u && !take(&e->uncompressed)) ||
          (need_c && !take(&e->compressed)) ||
          (need_o && !take(&e->local_offset))) {
        return Corrupt(where + ": zip64 field too short");
      }
      if (disk_overflow && (p + 4 > end || U32(cd, p) != 0))
        return Corrupt("multi-disk archives are not supported");
      return Status::Ok();
    }
    at += 4 + len;
  }
  return Corrupt(where +
                 ": sizes overflow 32 bits but there is no zip64 field");
}

}  // namespace

Result<std::vector<ZipEntry>> ListZipArchive(const ByteSource& src) {
  TORCHCOST_ASSIGN_OR_RETURN(Directory dir, FindDirectory(src));
  std::string cd;
  TORCHCOST_RETURN_IF_ERROR(
      ReadAt(src, dir.offset, dir.size, &cd, "central directory"));
  std::vector<Entry> entries;
  entries.reserve(static_cast<size_t>(dir.entries));
  std::unordered_set<std::string> names;
  size_t at = 0;
  for (uint64_t i = 0; i < dir.entries; ++i) {
    const std::string where = "entry " + std::to_string(i);
    if (at + kCentralSize > cd.size())
      return Corrupt(where + " runs past the central directory");
    if (U32(cd, at) != kCentralSig)
      return Corrupt(where + ": bad central header signature");
    const uint16_t flags = U16(cd, at + 8);
    const size_t name_len = U16(cd, at + 28), extra_len = U16(cd, at + 30),
                 comment_len = U16(cd, at + 32);
    if (at + kCentralSize + name_len + extra_len + comment_len > cd.size()) {
      return Corrupt(where + " runs past the central directory");
    }
    Entry e;
    e.method = U16(cd, at + 10);
    e.crc32 = U32(cd, at + 16);
    e.compressed = U32(cd, at + 20);
    e.uncompressed = U32(cd, at + 24);
    e.local_offset = U32(cd, at + 42);
    e.name = cd.substr(at + kCentralSize, name_len);
    TORCHCOST_RETURN_IF_ERROR(CheckName(e.name, i));
    const std::string named = where + " ('" + e.name + "')";
    if (flags & 0x1) return Corrupt(named + " is encrypted");
    TORCHCOST_RETURN_IF_ERROR(
        ReadZip64Extra(cd, at + kCentralSize + name_len, extra_len, &e,
                       U16(cd, at + 34) == kU16Max, named));
    if (U16(cd, at + 34) != 0 && U16(cd, at + 34) != kU16Max)
      return Corrupt("multi-disk archives are not supported");
    if (e.method == 0) {
      if (e.compressed != e.uncompressed)
        return Corrupt(named + " is stored but its two sizes differ");
    } else if (e.method == 8) {
      if (e.uncompressed / kMaxDeflateRatio > e.compressed + kDeflateSlack) {
        return Corrupt(named + " claims " + std::to_string(e.uncompressed) +
                       " bytes from " + std::to_string(e.compressed) +
                       " compressed");
      }
    } else {
      return Corrupt(named + " uses compression method " +
                     std::to_string(e.method) + " (only stored and deflate)");
    }
    if (!names.insert(e.name).second) return Corrupt(named + " appears twice");
    entries.push_back(std::move(e));
    at += kCentralSize + name_len + extra_len + comment_len;
  }
  for (uint64_t i = 0; i < entries.size(); ++i) {
    Entry& e = entries[i];
    const std::string named =
        "entry " + std::to_string(i) + " ('" + e.name + "')";
    if (!Within(e.local_offset, kLocalSize, dir.offset)) {
      return Corrupt(named + ": local header offset " +
                     std::to_string(e.local_offset) +
                     " is not before the central directory");
    }
    std::string local;
    TORCHCOST_RETURN_IF_ERROR(
        ReadAt(src, e.local_offset, kLocalSize, &local, "local header"));
    if (U32(local, 0) != kLocalSig)
      return Corrupt(named + ": bad local header signature");
    if (U16(local, 8) != e.method)
      return Corrupt(named +
                     ": local and central headers disagree on the method");
    const uint64_t name_len = U16(local, 26), extra_len = U16(local, 28);
    // < 2^64: offset < file size.
    const uint64_t data = e.local_offset + kLocalSize + name_len + extra_len;
    if (!Within(e.local_offset + kLocalSize, name_len + extra_len,
                dir.offset) ||
        !Within(data, e.compressed, dir.offset)) {
      return Corrupt(named + ": data runs into the central directory");
    }
    std::string local_name;
    TORCHCOST_RETURN_IF_ERROR(ReadAt(src, e.local_offset + kLocalSize, name_len,
                                     &local_name, "local name"));
    if (local_name != e.name)
      return Corrupt(named + ": local header names '" + local_name + "'");
    e.data_offset = data;
    e.data_end = data + e.compressed;
  }
  std::vector<const Entry*> by_offset;
  by_offset.reserve(entries.size());
  for (const Entry& e : entries) by_offset.push_back(&e);
  std::sort(by_offset.begin(), by_offset.end(),
            [](const Entry* a, const Entry* b) {
              return a->local_offset < b->local_offset;
            });
  for (size_t i = 1; i < by_offset.size(); ++i) {
    if (by_offset[i]->local_offset < by_offset[i - 1]->data_end) {
      return Corrupt("entries '" + by_offset[i - 1]->name + "' and '" +
                     by_offset[i]->name + "' overlap");
    }
  }
  // LibTorch's reader: the archive's name is the first entry's directory.
  const std::string& first = entries[0].name;
  const size_t slash = first.find('/');
  if (slash == std::string::npos)
    return Corrupt("first entry '" + first + "' is not in a directory");
  const std::string dir_name = first.substr(0, slash + 1);
  if (!names.count(dir_name + "version") &&
      !names.count(dir_name + ".data/version")) {
    return Status::InvalidArgument("not a TorchScript archive (no '" +
                                   dir_name + "version' record)");
  }
  if (!names.count(dir_name + "data.pkl")) {
    return Status::InvalidArgument("not a TorchScript archive (no '" +
                                   dir_name + "data.pkl' record)");
  }
  return entries;
}

Status CheckZipArchive(const ByteSource& src) {
  return ListZipArchive(src).status();
}

namespace {

class MemorySource : public ByteSource {
 public:
  explicit MemorySource(std::string_view bytes) : bytes_(bytes) {}
  uint64_t size() const override { return bytes_.size(); }
  bool Read(uint64_t offset, size_t n, std::string* out) const override {
    out->assign(bytes_.substr(static_cast<size_t>(offset), n));
    return true;
  }

 private:
  std::string_view bytes_;
};

class FileSource : public ByteSource {
 public:
  FileSource(std::ifstream& file, uint64_t size) : file_(file), size_(size) {}
  uint64_t size() const override { return size_; }
  bool Read(uint64_t offset, size_t n, std::string* out) const override {
    out->resize(n);
    file_.clear();
    file_.seekg(static_cast<std::streamoff>(offset));
    file_.read(out->data(), static_cast<std::streamsize>(n));
    return static_cast<size_t>(file_.gcount()) == n;
  }

 private:
  std::ifstream& file_;
  uint64_t size_;
};

}  // namespace

Status CheckZipBytes(std::string_view bytes) {
  return CheckZipArchive(MemorySource(bytes));
}

Status CheckZipFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary | std::ios::ate);
  if (!file) return Status::InvalidArgument("permission denied or I/O error");
  const std::streamoff size = file.tellg();
  if (size < 0) return Status::InvalidArgument("I/O error reading the file");
  return CheckZipArchive(FileSource(file, static_cast<uint64_t>(size)));
}

}  // namespace torchcost::import
