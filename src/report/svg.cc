#include "report/svg.h"

#include <cmath>
#include <cstdio>
#include <string>

namespace torchcost::report::svg {

std::string Num(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, v);
  std::string s = buf;
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s == "-0" ? "0" : s;
}

std::string Escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string Text(double x, double y, const std::string& text, int size,
                 const std::string& extra) {
  return "<text x=\"" + Num(x) + "\" y=\"" + Num(y) + "\" font-size=\"" +
         std::to_string(size) + "\"" + (extra.empty() ? "" : " " + extra) +
         ">" + Escape(text) + "</text>\n";
}

std::string Line(double x1, double y1, double x2, double y2,
                 const std::string& style) {
  return "<line x1=\"" + Num(x1) + "\" y1=\"" + Num(y1) + "\" x2=\"" + Num(x2) +
         "\" y2=\"" + Num(y2) + "\" " + style + "/>\n";
}

std::string Rect(double x, double y, double w, double h,
                 const std::string& style) {
  return "<rect x=\"" + Num(x) + "\" y=\"" + Num(y) + "\" width=\"" + Num(w) +
         "\" height=\"" + Num(h) + "\" " + style + "/>\n";
}

double NiceStep(double raw) {
  if (raw <= 0) return 1;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * p >= raw * (1 - 1e-9)) return m * p;
  }
  return 10 * p;
}

const char* CategoryColour(int category) {
  static constexpr const char* kColours[] = {"#4e79a7", "#76b7b2", "#f28e2b",
                                             "#e15759", "#edc948", "#b07aa1",
                                             "#bab0ac"};
  return category >= 0 && category < 7 ? kColours[category] : "#000000";
}

}  // namespace torchcost::report::svg
