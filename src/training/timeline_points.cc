#include <cstdint>
#include <optional>

#include "torchcost/training.h"

namespace torchcost {
namespace {

// Returns the number of bits set in `x`.
// NB: the SWAR count (Hacker's Delight 5-2) inline; __builtin_popcount is a
// libgcc call on baseline x86-64, and live() runs for every category of every
// point.
int PopCount(uint32_t x) {
  x = x - ((x >> 1) & 0x55555555u);
  x = (x & 0x33333333u) + ((x >> 2) & 0x33333333u);
  x = (x + (x >> 4)) & 0x0F0F0F0Fu;
  return static_cast<int>((x * 0x01010101u) >> 24);
}

}  // namespace

TimelinePoints::TimelinePoints(std::initializer_list<TimelinePoint> points) {
  reserve(points.size());
  for (const TimelinePoint& p : points) push_back(p);
}

TimelinePoint TimelinePoints::operator[](size_t i) const {
  TimelinePoint p;
  p.phase = phase(i);
  p.node = nodes_[i];
  for (int c = 0; c < kNumMemCategories; ++c) p.live[c] = live(i, c);
  p.total = totals_.at(i);
  return p;
}

sym::Expr TimelinePoints::live(size_t i, int c) const {
  const Block& b = blocks_[i / kBlock];
  // Changes of c at points 0..j of the block: the low j + 1 bits (2 << 31 wraps
  // to 0, so j = 31 keeps all 32).
  const uint32_t upto = (uint32_t{2} << (i % kBlock)) - 1;
  return values_[c].at(b.base[c] + PopCount(b.changed[c] & upto) - 1);
}

bool TimelinePoints::BackEquals(const CategoryBytes& live_now,
                                const sym::Expr& total_now) const {
  return !empty() && back_total_ == total_now && back_live_ == live_now;
}

void TimelinePoints::push_back(const TimelinePoint& p) {
  const size_t i = size();
  if (i % kBlock == 0) {
    Block b;
    for (int c = 0; c < kNumMemCategories; ++c)
      b.base[c] = static_cast<uint32_t>(values_[c].size());
    blocks_.push_back(b);
  }
  Block& b = blocks_.back();
  for (int c = 0; c < kNumMemCategories; ++c) {
    // NB: the first point stores every category, so each later point has a
    // value to refer back to; back_live_[c] is the category's last stored
    // value.
    if (i == 0 || back_live_[c] != p.live[c]) {
      values_[c].push_back(p.live[c]);
      b.changed[c] |= uint32_t{1} << (i % kBlock);
      back_live_[c] = p.live[c];
    }
  }
  nodes_.push_back(p.node);
  phases_.push_back(static_cast<uint8_t>(p.phase));
  totals_.push_back(p.total);
  back_total_ = p.total;
}

void TimelinePoints::reserve(size_t n) {
  nodes_.reserve(n);
  phases_.reserve(n);
  totals_.reserve(n);
  // NB: each category's values too, though most take fewer: pages reserved and
  // never written take no memory, while growing by doubling holds the old and
  // the new copy at once (100 bytes a node of a chain's peak).
  for (auto& v : values_) v.reserve(n);
  blocks_.reserve((n + kBlock - 1) / kBlock);
}

void TimelinePoints::clear() {
  nodes_.clear();
  phases_.clear();
  totals_.clear();
  for (auto& v : values_) v.clear();
  blocks_.clear();
}

void TimelinePoints::Exprs::push_back(const sym::Expr& e) {
  const std::optional<int64_t> constant = e.AsConstant();
  symbolic_at_.push_back(!constant);
  if (constant) {
    slots_.push_back(*constant);
  } else {
    slots_.push_back(static_cast<int64_t>(symbolic_.size()));
    symbolic_.push_back(e);
  }
}

void TimelinePoints::Exprs::reserve(size_t n) {
  slots_.reserve(n);
  symbolic_at_.reserve(n);
}

void TimelinePoints::Exprs::clear() {
  slots_.clear();
  symbolic_at_.clear();
  symbolic_.clear();
}

bool TimelinePoints::operator==(const TimelinePoints& o) const {
  // NB: equal points are stored alike (a value is stored exactly where it
  // changes), so the arrays compare.
  if (nodes_ != o.nodes_ || phases_ != o.phases_ || totals_ != o.totals_ ||
      values_ != o.values_)
    return false;
  for (size_t k = 0; k < blocks_.size(); ++k) {
    if (blocks_[k].base != o.blocks_[k].base ||
        blocks_[k].changed != o.blocks_[k].changed)
      return false;
  }
  return true;
}

}  // namespace torchcost
