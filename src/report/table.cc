#include "report/table.h"

#include <algorithm>
#include <utility>

namespace torchcost::report {

size_t DisplayWidth(const std::string& text) {
  // Count bytes that start a code point (not UTF-8 continuation bytes
  // 10xxxxxx).
  return std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  });
}

std::string Pad(const std::string& text, size_t width, Table::Align align) {
  const size_t w = DisplayWidth(text);
  if (w >= width) return text;
  const std::string fill(width - w, ' ');
  return align == Table::Align::kLeft ? text + fill : fill + text;
}

void Table::AddRow(std::vector<std::string> cells) {
  cells.resize(columns_.size());
  rows_.push_back(std::move(cells));
}

std::string Table::Render(const std::string& indent) const {
  std::vector<size_t> widths(columns_.size());
  for (size_t c = 0; c < columns_.size(); ++c) {
    widths[c] = DisplayWidth(columns_[c].header);
    for (const auto& row : rows_)
      widths[c] = std::max(widths[c], DisplayWidth(row[c]));
  }
  auto line = [&](auto cell_of) {
    std::string out = indent;
    for (size_t c = 0; c < columns_.size(); ++c) {
      if (c > 0) out += "  ";
      out += cell_of(c);
    }
    // Trailing spaces of a left-aligned last column help nobody.
    out.erase(out.find_last_not_of(' ') + 1);
    return out + "\n";
  };
  const std::string rule =
      line([&](size_t c) { return std::string(widths[c], '-'); });
  std::string out = rule;
  out += line([&](size_t c) {
    return Pad(columns_[c].header, widths[c], columns_[c].align);
  });
  out += rule;
  for (const auto& row : rows_) {
    out += line(
        [&](size_t c) { return Pad(row[c], widths[c], columns_[c].align); });
  }
  return out + rule;
}

}  // namespace torchcost::report
