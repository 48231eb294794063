// Readers of a rendered text report for tests: its lines, a line's words, and
// the first line that starts with or contains some text.
#ifndef TORCHCOST_TESTS_TESTING_TEXT_LINES_H_
#define TORCHCOST_TESTS_TESTING_TEXT_LINES_H_

#include <sstream>
#include <string>
#include <vector>

namespace torchcost::testing {

// Returns the lines of `text`, without their newlines.
inline std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Returns the words of `line`, split at white space.
inline std::vector<std::string> Words(const std::string& line) {
  std::vector<std::string> words;
  std::istringstream in(line);
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

// Returns the first line of `text` that contains `needle`, or "".
inline std::string LineWith(const std::string& text,
                            const std::string& needle) {
  for (const std::string& line : Lines(text)) {
    if (line.find(needle) != std::string::npos) return line;
  }
  return "";
}

// Returns the first line of `text` that starts with `prefix`, or "".
inline std::string LineStarting(const std::string& text,
                                const std::string& prefix) {
  for (const std::string& line : Lines(text)) {
    if (line.rfind(prefix, 0) == 0) return line;
  }
  return "";
}

}  // namespace torchcost::testing

#endif  // TORCHCOST_TESTS_TESTING_TEXT_LINES_H_
