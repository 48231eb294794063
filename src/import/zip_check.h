// A structural check of a TorchScript archive's zip container, run before
// LibTorch reads it, so that a truncated or corrupt file is a one-line error
// of ours rather than something LibTorch's zip reader (miniz) meets first.
#ifndef TORCHCOST_SRC_IMPORT_ZIP_CHECK_H_
#define TORCHCOST_SRC_IMPORT_ZIP_CHECK_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "torchcost/status.h"

namespace torchcost::import {

// Random access to the bytes of an archive.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Returns the number of bytes.
  virtual uint64_t size() const = 0;
  // Reads `n` bytes at `offset` (within size()) into `out`; returns false on an
  // I/O error.
  virtual bool Read(uint64_t offset, size_t n, std::string* out) const = 0;
};

// One entry of a zip archive's central directory, zip64 fields resolved.
struct ZipEntry {
  std::string name;
  uint16_t method = 0;  // 0 stored, 8 deflate.
  uint32_t crc32 = 0;
  uint64_t compressed = 0, uncompressed = 0, local_offset = 0;
  // Where the entry's (compressed) bytes start, after its local header.
  uint64_t data_offset = 0;
  uint64_t data_end = 0;  // data_offset + compressed.
};

// Checks `src` as CheckZipArchive does and returns its entries in
// central-directory order.
Result<std::vector<ZipEntry>> ListZipArchive(const ByteSource& src);

// Checks that `src` is a zip archive as LibTorch reads one: an end-of-central-
// directory record (zip64 where its fields overflow), a central directory
// inside the file, and for every entry a sane name (non-empty, no NUL, not
// absolute, no ".." component, not repeated), no encryption, method stored or
// deflate (stored: equal sizes; deflate: a size at most deflate's 1032:1
// expansion), a local header that agrees with the central one, and data that
// lies before the central directory and overlaps no other entry's. The first
// entry must sit in a directory ("archive/...") and the archive must hold that
// directory's "version" (or ".data/version") and "data.pkl".
// Errors are one line without the file's name: "truncated: no
// end-of-central-directory record".
Status CheckZipArchive(const ByteSource& src);

// Checks the bytes of an archive held in memory.
Status CheckZipBytes(std::string_view bytes);

// Checks the archive in the file at `path`, reading only its headers.
Status CheckZipFile(const std::string& path);

}  // namespace torchcost::import

#endif  // TORCHCOST_SRC_IMPORT_ZIP_CHECK_H_
