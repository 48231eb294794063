// A plain-text table with aligned columns, in the PyTorch profiler's style.
#ifndef TORCHCOST_SRC_REPORT_TABLE_H_
#define TORCHCOST_SRC_REPORT_TABLE_H_

#include <string>
#include <vector>

namespace torchcost::report {

// Columns of cells padded to their widest cell, framed by dashed rules.
class Table {
 public:
  enum class Align { kLeft, kRight };
  struct Column {
    std::string header;
    Align align = Align::kRight;
  };

  // Creates a table with `columns`, separated by two spaces.
  explicit Table(std::vector<Column> columns) : columns_(std::move(columns)) {}

  // Appends a row; missing cells are empty and extra cells are dropped.
  void AddRow(std::vector<std::string> cells);

  // Returns the table: rule, header, rule, rows, rule; each line starts with
  // `indent`.
  std::string Render(const std::string& indent = "") const;

 private:
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

// Returns `text` padded with spaces to `width` on the right (kLeft) or left
// (kRight).
std::string Pad(const std::string& text, size_t width, Table::Align align);

// Returns the number of terminal columns `text` takes (UTF-8 code points).
size_t DisplayWidth(const std::string& text);

}  // namespace torchcost::report

#endif  // TORCHCOST_SRC_REPORT_TABLE_H_
