// Records the events of some kinds that reach the process's handler while
// it lives (weave::set_event_handler), then puts the default handler back.
//
//   EventRecorder failovers({weave::EventKind::failover_followed});
//   ... c.failover(replica) ...
//   CHECK(failovers.keys() == std::vector<std::string>{c.name(replica)});
#pragma once

#include <algorithm>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "weave/event.h"

class EventRecorder {
 public:
  struct Recorded {
    weave::EventKind kind;
    std::string feature, key, cause;
  };

  // (The handler shares the state: an event still being handled on another
  // thread when the recorder goes finds it alive.)
  explicit EventRecorder(std::initializer_list<weave::EventKind> kinds) : state_(std::make_shared<State>()) {
    state_->kinds = kinds;
    weave::set_event_handler([state = state_](const weave::Event& e) {
      if (std::find(state->kinds.begin(), state->kinds.end(), e.kind) == state->kinds.end()) return;
      std::lock_guard g(state->mutex);
      state->seen.push_back({e.kind, std::string(e.feature), std::string(e.key), std::string(e.cause)});
    });
  }
  ~EventRecorder() { weave::set_event_handler(weave::write_event_to_stderr); }
  EventRecorder(const EventRecorder&) = delete;
  EventRecorder& operator=(const EventRecorder&) = delete;

  std::vector<Recorded> events() const {
    std::lock_guard g(state_->mutex);
    return state_->seen;
  }
  // The keys of the recorded events, in order.
  std::vector<std::string> keys() const {
    std::vector<std::string> out;
    for (const Recorded& r : events()) out.push_back(r.key);
    return out;
  }
  // How many of `kind` came from `feature`.
  long count(weave::EventKind kind, std::string_view feature) const {
    const auto all = events();
    return std::count_if(all.begin(), all.end(), [&](const Recorded& r) { return r.kind == kind && r.feature == feature; });
  }

 private:
  struct State {
    std::vector<weave::EventKind> kinds;
    std::mutex mutex;
    std::vector<Recorded> seen;
  };
  std::shared_ptr<State> state_;
};
