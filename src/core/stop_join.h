// A stop source that stops when any token it follows does: how the running
// call's stop token (weave::current_stop_token()) joins its leases' tokens
// and its [[timeout]] deadlines into one.
#pragma once

#include <atomic>
#include <list>
#include <stop_token>

#include "weave/abi.h"

namespace WEAVE_NAMESPACE::detail {

class StopJoin {
 public:
  StopJoin() = default;
  StopJoin(const StopJoin&) = delete;
  StopJoin& operator=(const StopJoin&) = delete;

  // Stops this one when `t` stops (at once if it has). Before token() is
  // shared: follows are not guarded.
  void follow(const std::stop_token& t) {
    if (t.stop_possible()) follows_.emplace_back(t, Forward{source_});
  }
  std::stop_token token() const noexcept { return source_.get_token(); }
  // Its source, for whoever stops it (a deadline's timer).
  std::stop_source source() const noexcept { return source_; }
  void stop() noexcept { source_.request_stop(); }

 private:
  struct Forward {
    std::stop_source to;
    void operator()() noexcept { to.request_stop(); }
  };
  std::stop_source source_;
  std::list<std::stop_callback<Forward>> follows_;  // (a stop_callback cannot move)
};

// A StopJoin made on first use and kept with what owns the cache (a context
// link): threads may race to make it; one wins, the others' are dropped. A
// copy starts empty (a copied link is a new link).
class StopJoinCache {
 public:
  StopJoinCache() = default;
  StopJoinCache(const StopJoinCache&) noexcept {}
  StopJoinCache& operator=(const StopJoinCache&) noexcept {
    reset();
    return *this;
  }
  ~StopJoinCache() { reset(); }

  // The join, or null before the first get().
  const StopJoin* peek() const noexcept { return join_.load(std::memory_order_acquire); }
  template <class Make>
  const StopJoin& get(Make&& make) const {
    if (StopJoin* j = join_.load(std::memory_order_acquire)) return *j;
    StopJoin* mine = make();  // new StopJoin, following what it should
    StopJoin* expected = nullptr;
    if (join_.compare_exchange_strong(expected, mine, std::memory_order_acq_rel)) return *mine;
    delete mine;
    return *expected;
  }

 private:
  // (no exchange when none was made, the common case: an owner resets its
  // link only once nobody else reads it)
  void reset() noexcept {
    if (join_.load(std::memory_order_acquire)) delete join_.exchange(nullptr, std::memory_order_acq_rel);
  }
  mutable std::atomic<StopJoin*> join_{nullptr};
};

}  // namespace weave::detail
