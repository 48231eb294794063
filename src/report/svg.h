// Small builders of SVG elements as text, for the report's pictures.
#ifndef TORCHCOST_SRC_REPORT_SVG_H_
#define TORCHCOST_SRC_REPORT_SVG_H_

#include <string>

namespace torchcost::report::svg {

// Returns `v` with at most `decimals` decimals, trailing zeros dropped
// ("12.5").
std::string Num(double v, int decimals = 1);

// Returns `text` with XML's special characters (&, <, >, ") escaped.
std::string Escape(const std::string& text);

// Returns a <text> element at (x, y) of font size `size`; `extra` holds more
// attributes ("text-anchor=\"end\"").
std::string Text(double x, double y, const std::string& text, int size,
                 const std::string& extra = "");

// Returns a <line> element from (x1, y1) to (x2, y2) with `style` attributes.
std::string Line(double x1, double y1, double x2, double y2,
                 const std::string& style);

// Returns a <rect> element with `style` attributes.
std::string Rect(double x, double y, double w, double h,
                 const std::string& style);

// Returns the smallest of 1, 2, 5 times a power of ten that is >= `raw`: an
// axis's tick spacing.
double NiceStep(double raw);

// Returns the fill colour of a memory category (MemCategory's int value):
// Tableau 10, one per category, shared by every chart.
const char* CategoryColour(int category);

// The fill colour of a generation's KV cache (Tableau 10's green, which no
// category uses).
inline constexpr const char* kKvCacheColour = "#59a14f";

}  // namespace torchcost::report::svg

#endif  // TORCHCOST_SRC_REPORT_SVG_H_
