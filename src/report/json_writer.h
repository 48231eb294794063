// A streaming JSON writer whose text is what nlohmann::ordered_json's dump(2)
// prints, for the JSON report (src/report/json.cc).
#ifndef TORCHCOST_SRC_REPORT_JSON_WRITER_H_
#define TORCHCOST_SRC_REPORT_JSON_WRITER_H_

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace torchcost::report {

// Writes JSON as nlohmann's dump(2) prints it, without building the tree: the
// report of a resnet50 step is ~300 KB, and building it as an ordered_json
// took longer than the analysis. Small parts are built as ordered_json and
// embedded.
// NB: the caller keeps the document well formed (a key before each member's
// value, every container closed); the writer does not check.
class Writer {
 public:
  // `bytes_hint`: the size expected; NB: pages of a large reservation are
  // only touched as the text reaches them.
  explicit Writer(size_t bytes_hint) { out_.reserve(bytes_hint); }
  // Returns the text, ended by a newline.
  // NB: dump(2) ends without one; the writer is spent afterwards.
  std::string Take() {
    out_ += '\n';
    return std::move(out_);
  }

  // Opens an object as the next value.
  void BeginObject() { Open('{'); }
  // Closes the innermost open object.
  void EndObject() { Close('}'); }
  // Opens an array as the next value.
  void BeginArray() { Open('['); }
  // Closes the innermost open array.
  void EndArray() { Close(']'); }
  // Starts the member `key` of the current object; its value follows.
  void Key(std::string_view key) {
    Separate();
    String(key);
    out_ += ": ";
    after_key_ = true;
  }
  // Writes a signed integer as the next value.
  void Int(int64_t v) {
    BeginValue();
    Number(v);
  }
  // Writes an unsigned integer as the next value.
  void UInt(uint64_t v) {
    BeginValue();
    Number(v);
  }
  // Writes true or false as the next value.
  void Bool(bool v) {
    BeginValue();
    out_ += v ? "true" : "false";
  }
  // Writes null as the next value.
  void Null() {
    BeginValue();
    out_ += "null";
  }
  // Writes a string as the next value, escaped as nlohmann does.
  void Str(std::string_view v) {
    BeginValue();
    String(v);
  }
  // Writes `j` as its dump(2) at the current depth.
  void Embed(const nlohmann::ordered_json& j);

 private:
  void Separate() {
    if (counts_.empty()) return;
    out_ += counts_.back()++ ? ",\n" : "\n";
    out_.append(2 * depth_, ' ');
  }
  void BeginValue() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    Separate();
  }
  void Open(char c) {
    BeginValue();
    out_ += c;
    counts_.push_back(0);
    ++depth_;
  }
  void Close(char c) {
    --depth_;
    if (counts_.back() > 0) {
      out_ += '\n';
      out_.append(2 * depth_, ' ');
    }
    counts_.pop_back();
    out_ += c;
  }
  template <typename T>
  void Number(T v) {
    char buf[24];  // 20 digits and a sign at most.
    const auto r = std::to_chars(buf, buf + sizeof(buf), v);
    out_.append(buf, r.ptr);
  }
  // Escapes as nlohmann does (ensure_ascii off, invalid UTF-8 replaced).
  void String(std::string_view s);

  std::string out_;
  std::vector<int> counts_;  // Members or elements written, per open container.
  int depth_ = 0;
  bool after_key_ = false;
};

// Writes the members of the object `j` into the open object.
void WriteMembers(Writer& w, const nlohmann::ordered_json& j);

}  // namespace torchcost::report

#endif  // TORCHCOST_SRC_REPORT_JSON_WRITER_H_
