#include "memory/timeline.h"

#include <utility>

namespace torchcost::memory {

Timeline::Timeline(TimelinePoints* points) : points_(points) {
  points_->clear();
  for (auto& b : live_) b = sym::Expr(0);
  total_ = sym::Expr(0);
  for (auto& b : pending_) b = sym::Expr(0);
  for (auto& b : lump_) b = sym::Expr(0);
  lump_id_.fill(-1);
}

void Timeline::Record(int id, bool alloc, const sym::Expr& bytes,
                      MemCategory c) {
  AllocationEvent e;
  e.id = id;
  e.alloc = alloc;
  if (alloc) e.bytes = bytes;
  e.category = c;
  e.point = static_cast<int>(points_->size());
  events_->push_back(std::move(e));
}

void Timeline::Alloc(Storage* s) {
  if (s->live) return;
  s->live = true;
  const int c = static_cast<int>(s->category);
  pending_[c] = sums_.Add(pending_[c], s->bytes);
  dirty_ |= 1u << c;
  changed_ = true;
  if (events_) Record(s->id, true, s->bytes, s->category);
}

void Timeline::Free(Storage* s) {
  if (!s->live) return;
  s->live = false;
  const int c = static_cast<int>(s->category);
  pending_[c] = sums_.Sub(pending_[c], s->bytes);
  dirty_ |= 1u << c;
  changed_ = true;
  if (events_) Record(s->id, false, s->bytes, s->category);
}

void Timeline::Flush() {
  if (dirty_ == 0) return;
  sym::Expr delta(0);  // Of the total.
  for (int c = 0; c < kNumMemCategories; ++c) {
    if (!(dirty_ & (1u << c)) || pending_[c] == sym::Expr(0)) continue;
    live_[c] = sums_.Add(live_[c], pending_[c]);
    delta = sums_.Add(delta, pending_[c]);
    pending_[c] = sym::Expr(0);
  }
  dirty_ = 0;
  // NB: not through the cache: the total at a point is new almost every time
  // (95% of Mixtral's), and a remembered pair would only fill the table.
  if (delta != sym::Expr(0)) total_ += delta;
}

void Timeline::Add(MemCategory c, const sym::Expr& delta) {
  Flush();
  changed_ = true;
  live_[static_cast<int>(c)] += delta;
  total_ += delta;
  if (!events_) return;
  const int k = static_cast<int>(c);
  if (lump_id_[k] != -1) Record(lump_id_[k], false, lump_[k], c);
  lump_[k] += delta;
  lump_id_[k] = lump_[k] == sym::Expr(0) ? -1 : next_id_--;
  if (lump_id_[k] != -1) Record(lump_id_[k], true, lump_[k], c);
}

int Timeline::AddList(MemCategory c, const std::vector<int64_t>& pieces) {
  Flush();
  changed_ = true;
  const int handle = next_id_;
  int64_t sum = 0;
  for (int64_t p : pieces) {
    sum += p;
    if (events_ && p > 0) Record(next_id_, true, sym::Expr(p), c);
    --next_id_;  // NB: one id per piece, so FreeList finds them again.
  }
  live_[static_cast<int>(c)] += sym::Expr(sum);
  total_ += sym::Expr(sum);
  return handle;
}

void Timeline::FreeList(int handle, MemCategory c,
                        const std::vector<int64_t>& pieces) {
  Flush();
  changed_ = true;
  int64_t sum = 0;
  int id = handle;
  for (int64_t p : pieces) {
    sum += p;
    if (events_ && p > 0) Record(id, false, sym::Expr(p), c);
    --id;
  }
  live_[static_cast<int>(c)] -= sym::Expr(sum);
  total_ -= sym::Expr(sum);
}

void Timeline::Point(StepPhase phase, int node) {
  // NB: with nothing changed since the last point, the live bytes are those
  // of the last point recorded (or found equal to it).
  if (!changed_ && !points_->empty()) return;
  changed_ = false;
  Flush();
  if (points_->BackEquals(live_, total_)) return;
  TimelinePoint p;
  p.phase = phase;
  p.node = node;
  p.live = live_;
  p.total = total_;
  points_->push_back(p);
}

}  // namespace torchcost::memory
