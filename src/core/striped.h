// Counters that many threads bump without sharing a cache line: LockStats
// and CacheStats are summed from per-thread stripes of these.
//
//   struct alignas(64) Hits { std::atomic<std::uint64_t> local{0}, remote{0}; };
//   StripedCounters<Hits> hits;
//   hits.add(&Hits::local);            // this thread's stripe
//   std::uint64_t n = hits.sum(&Hits::local);
#pragma once

#include <algorithm>
#include <atomic>
#include <type_traits>

#include "weave/abi.h"

namespace WEAVE_NAMESPACE::detail {

// 1 + this thread's slot, 0 before its first use. constinit: the common
// path of thread_slot() is one TLS load, inlined (a call there cost 6 % of
// a woven mem:// lock call, which counts in several stripes).
extern constinit thread_local unsigned t_thread_slot;
// Takes a slot for this thread (from those of exited threads first).
unsigned take_thread_slot() noexcept;

// A small number of this thread's own, distinct among live threads (0, 1,
// 2, ...; a slot freed by an exited thread is handed out again): picks the
// stripe or shard a thread works in, so threads do not write one cache line.
inline unsigned thread_slot() noexcept {
  if (const unsigned s = t_thread_slot; s != 0) return s - 1;
  return take_thread_slot();
}

// `Stripe` is a struct of std::atomic counters, aligned to a cache line. The
// first kOwnStripes threads own a stripe outright: add() is a load and a
// store there, no atomic read-modify-write. Later threads share the last
// stripe and add atomically. sum() reads every stripe (relaxed: a total
// taken while threads count is some recent total, never a torn one).
template <class Stripe, unsigned kOwnStripes = 16>
class StripedCounters {
 public:
  // Adds to one counter of this thread's stripe.
  template <class T>
  void add(std::atomic<T> Stripe::*field, std::type_identity_t<T> n = 1) noexcept {
    const unsigned slot = thread_slot();
    add_to(of(slot).*field, n, slot);
  }

  // For several counters (or an array's elements) at once, the thread's slot
  // read once: the stripe of the thread in `slot` (thread_slot()), and
  // add_to() a counter of that stripe.
  Stripe& of(unsigned slot) noexcept { return stripes_[std::min(slot, kOwnStripes)]; }
  template <class T>
  static void add_to(std::atomic<T>& counter, std::type_identity_t<T> n, unsigned slot) noexcept {
    if (slot < kOwnStripes)
      counter.store(counter.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
    else
      counter.fetch_add(n, std::memory_order_relaxed);
  }

  template <class T>
  T sum(std::atomic<T> Stripe::*field) const noexcept {
    T n{};
    for (const Stripe& s : stripes_) n += (s.*field).load(std::memory_order_relaxed);
    return n;
  }

  // Every stripe, for sums of what sum() cannot name (an array's elements).
  template <class F>
  void for_each(F&& f) const {
    for (const Stripe& s : stripes_) f(s);
  }

 private:
  Stripe stripes_[kOwnStripes + 1];
};

}  // namespace weave::detail
