#include "import/zip_archive.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <string>
#include <utility>

namespace torchcost::import {
namespace {

// A file read with pread; closed with the last archive that shares it.
class FdSource : public ByteSource {
 public:
  FdSource(int fd, uint64_t size) : fd_(fd), size_(size) {}
  ~FdSource() override { close(fd_); }
  uint64_t size() const override { return size_; }
  bool Read(uint64_t offset, size_t n, std::string* out) const override {
    out->resize(n);
    size_t done = 0;
    while (done < n) {
      const ssize_t got = pread(fd_, out->data() + done, n - done,
                                static_cast<off_t>(offset + done));
      if (got <= 0) return false;
      done += static_cast<size_t>(got);
    }
    return true;
  }

 private:
  int fd_;
  uint64_t size_;
};

class StringSource : public ByteSource {
 public:
  explicit StringSource(std::string bytes) : bytes_(std::move(bytes)) {}
  uint64_t size() const override { return bytes_.size(); }
  bool Read(uint64_t offset, size_t n, std::string* out) const override {
    out->assign(bytes_, static_cast<size_t>(offset), n);
    return true;
  }

 private:
  std::string bytes_;
};

// Inflates raw deflate data (no zlib header) of known output size.
bool Inflate(const std::string& in, uint64_t size, std::string* out) {
  out->assign(static_cast<size_t>(size), '\0');
  z_stream z{};
  if (inflateInit2(&z, -MAX_WBITS) != Z_OK) return false;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out->data());
  z.avail_out = static_cast<uInt>(out->size());
  const int rc = inflate(&z, Z_FINISH);
  const bool ok = rc == Z_STREAM_END && z.total_out == size;
  inflateEnd(&z);
  return ok;
}

}  // namespace

Result<ZipArchive> ZipArchive::OpenFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::InvalidArgument("permission denied or I/O error");
  struct stat st;
  if (fstat(fd, &st) != 0 || st.st_size < 0) {
    close(fd);
    return Status::InvalidArgument("I/O error reading the file");
  }
  ZipArchive archive;
  archive.source_ =
      std::make_shared<FdSource>(fd, static_cast<uint64_t>(st.st_size));
  TORCHCOST_ASSIGN_OR_RETURN(archive.entries_,
                             ListZipArchive(*archive.source_));
  for (size_t i = 0; i < archive.entries_.size(); ++i)
    archive.index_.emplace(archive.entries_[i].name, i);
  // ListZipArchive checked it sits in a directory.
  const std::string& first = archive.entries_[0].name;
  archive.root_ = first.substr(0, first.find('/') + 1);
  return archive;
}

Result<ZipArchive> ZipArchive::OpenBytes(std::string bytes) {
  ZipArchive archive;
  archive.source_ = std::make_shared<StringSource>(std::move(bytes));
  TORCHCOST_ASSIGN_OR_RETURN(archive.entries_,
                             ListZipArchive(*archive.source_));
  for (size_t i = 0; i < archive.entries_.size(); ++i)
    archive.index_.emplace(archive.entries_[i].name, i);
  const std::string& first = archive.entries_[0].name;
  archive.root_ = first.substr(0, first.find('/') + 1);
  return archive;
}

Result<std::string> ZipArchive::Read(const std::string& name) const {
  auto it = index_.find(name);
  if (it == index_.end())
    return Status::NotFound("no entry '" + name + "' in the archive");
  const ZipEntry& e = entries_[it->second];
  std::string raw;
  if (!source_->Read(e.data_offset, static_cast<size_t>(e.compressed), &raw)) {
    return Status::InvalidArgument("I/O error reading entry '" + name + "'");
  }
  std::string data;
  if (e.method == 0) {
    data = std::move(raw);
  } else if (!Inflate(raw, e.uncompressed, &data)) {
    return Status::InvalidArgument("corrupt zip: entry '" + name +
                                   "' does not inflate to its size");
  }
  const uLong crc =
      crc32(crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(data.data()),
            static_cast<uInt>(data.size()));
  if (static_cast<uint32_t>(crc) != e.crc32)
    return Status::InvalidArgument("corrupt zip: entry '" + name +
                                   "' fails its CRC-32 check");
  return data;
}

}  // namespace torchcost::import
