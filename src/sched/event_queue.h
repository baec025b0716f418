// The event queue of the event-mode simulator (private to seedance::sched): events in time
// order; at one instant completions first (they free resources), then arrivals, node reclaims,
// node returns and consolidation wake-ups; within a kind, in the order they were pushed.
#pragma once

#include <cstdint>
#include <functional>
#include <queue>
#include <tuple>
#include <vector>

namespace seedance::sched {

enum class EventKind : int {
  kCompletion = 0,        // a job's run ends (stale when its epoch moved on)
  kArrival = 1,           // a job is submitted
  kNodeReclaimed = 2,     // a spot node is taken away
  kNodeBack = 3,          // a reclaimed spot node returns
  kConsolidationDue = 4,  // a long-tail job may be moved now (only wakes a pass)
};

struct Event {
  double time = 0;
  EventKind kind = EventKind::kArrival;
  int64_t seq = 0;
  size_t subject = 0;  // a job, or a node for kNodeReclaimed / kNodeBack
  int epoch = 0;       // the job's run this event belongs to
  bool operator>(const Event& o) const {
    return std::tie(time, kind, seq) > std::tie(o.time, o.kind, o.seq);
  }
};

class EventQueue {
 public:
  void Push(double time, EventKind kind, size_t subject, int epoch = 0) {
    heap_.push(Event{time, kind, seq_++, subject, epoch});
  }
  bool empty() const { return heap_.empty(); }
  const Event& top() const { return heap_.top(); }
  Event Pop() {
    Event e = heap_.top();
    heap_.pop();
    return e;
  }

 private:
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> heap_;
  int64_t seq_ = 0;
};

}  // namespace seedance::sched
