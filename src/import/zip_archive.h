// Read access to the entries of a TorchScript archive's zip container, as
// torch.jit.save writes it (entries stored uncompressed; deflate is read too).
#ifndef TORCHCOST_SRC_IMPORT_ZIP_ARCHIVE_H_
#define TORCHCOST_SRC_IMPORT_ZIP_ARCHIVE_H_

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "import/zip_check.h"
#include "torchcost/status.h"

namespace torchcost::import {

// An opened zip archive: its checked directory and the bytes behind it.
class ZipArchive {
 public:
  // Opens the archive in the file at `path`, checked as CheckZipArchive does;
  // reads only its headers.
  static Result<ZipArchive> OpenFile(const std::string& path);
  // Opens an archive held in memory (a copy is kept).
  static Result<ZipArchive> OpenBytes(std::string bytes);

  // Returns the directory all entries of a TorchScript archive sit in, with its
  // slash ("resnet50/").
  const std::string& root() const { return root_; }
  // Returns the entries in central-directory order.
  const std::vector<ZipEntry>& entries() const { return entries_; }
  // Returns true if an entry is named `name` (the full name, root included).
  bool Contains(const std::string& name) const {
    return index_.count(name) > 0;
  }
  // Returns the entry `name`, or null.
  const ZipEntry* Find(const std::string& name) const {
    auto it = index_.find(name);
    return it == index_.end() ? nullptr : &entries_[it->second];
  }
  // Reads the whole entry `name`, inflating it if needed and checking its
  // CRC-32.
  Result<std::string> Read(const std::string& name) const;

 private:
  std::shared_ptr<const ByteSource> source_;
  std::vector<ZipEntry> entries_;
  std::unordered_map<std::string, size_t> index_;
  std::string root_;
};

}  // namespace torchcost::import

#endif  // TORCHCOST_SRC_IMPORT_ZIP_ARCHIVE_H_
