#include "memory/timeline.h"

#include <utility>

namespace torchcost::memory {

Timeline::Timeline(std::vector<TimelinePoint>* points) : points_(points) {
  points_->clear();
  for (auto& b : live_) b = sym::Expr(0);
  total_ = sym::Expr(0);
}

void Timeline::Alloc(Storage* s) {
  if (s->live) return;
  s->live = true;
  live_[static_cast<int>(s->category)] += s->bytes;
  total_ += s->bytes;
}

void Timeline::Free(Storage* s) {
  if (!s->live) return;
  s->live = false;
  live_[static_cast<int>(s->category)] -= s->bytes;
  total_ -= s->bytes;
}

void Timeline::Add(MemCategory c, const sym::Expr& delta) {
  live_[static_cast<int>(c)] += delta;
  total_ += delta;
}

void Timeline::Point(StepPhase phase, int node) {
  if (!points_->empty() && points_->back().total == total_ && points_->back().live == live_) return;
  TimelinePoint p;
  p.phase = phase;
  p.node = node;
  p.live = live_;
  p.total = total_;
  points_->push_back(std::move(p));
}

}  // namespace torchcost::memory
