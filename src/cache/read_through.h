// The leader's path of one [[cache]] read (steps 3 and 4 of docs/cache.md,
// "One read"): the shared tier, sync=true's fill lease, the method, the fill
// and the local install (read_through.cpp), and refresh_after's reload of an
// aged value in the background (background_reload.cpp).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "cache/cache_settings.h"

namespace WEAVE_NAMESPACE::detail::cache {

// Step 1 of a read, at `now`: the local tier's value, while the
// invalidation feed is complete. True when it completed the call (a local
// hit, counted). `count_miss`: count a miss too (a caller that goes on to the
// rest of the read, which counts it otherwise, passes false).
bool complete_from_local(Invocation& inv, const Settings& s, const ResultCodec& codec, CacheRuntime& rt,
                                   CacheName& cache, std::string_view key, Clock::time_point now, bool count_miss);

// Step 2, for a caller that waited for another caller's load of its key in
// this process (single flight) until it landed: take its value, load for
// itself (the leader failed, or writes keep coming: `attempt` 2), or join
// the key's next flight. `began`: when the call began.
enum class AfterFlight { taken, load_self, join_again };
AfterFlight after_flight(Invocation& inv, const ResultCodec& codec, CacheRuntime& rt, CacheName& cache,
                                   std::string_view key, Flight& flight, Clock::time_point began, int attempt);

// Steps 3 and 4, by the leader of a flight, as steps, so that the blocking
// interceptor (run()) and the suspending one (src/cache/asio/) drive one set
// of rules:
//
//   for (;;) {
//     ReadThrough::Step s = r.look();             // store calls
//     if (s.kind == Step::done) return;           // a shared hit completed the call
//     if (s.kind == Step::load) break;
//     wait on r.waiter() until s.until;           // another caller's fill lease (sync=true)
//   }
//   started = now; run the method; r.loaded(started) or r.load_failed()   // store calls
class ReadThrough {
 public:
  ReadThrough(Invocation& inv, const Settings& s, const ResultCodec& codec, CacheRuntime& rt,
              CacheName& cache, std::string_view key, std::shared_ptr<Flight> flight)
      : inv_(inv), s_(s), codec_(codec), rt_(rt), cache_(cache), count_(cache.counters()), key_(key),
        land_{cache, std::string(key), std::move(flight), &codec, nullptr, {}, false},
        held_{rt, cache, key, {}, nullptr} {}

  // The steps below, waiting on this thread.
  void run();

  struct Step {
    enum Kind { done, load, wait } kind = load;
    Clock::time_point until{};  // wait: look again by then (woken earlier by the holder's fill)
  };
  // Reads the shared tier and, sync=true, claims the fill lease.
  Step look();
  // After a wait step: woken when the lease's holder filled or gave up.
  FillWaiter* waiter() const noexcept { return waiter_.get(); }
  // The method returned (it started at `started`): count, fill, install.
  void loaded(Clock::time_point started, bool refreshing = false);
  // The method threw: counted, and a fill lease given back at once.
  void load_failed() noexcept;

  // A reload queued by reload_in_background: the fill of load(true), with
  // what the claimer read, on the background thread.
  struct Reload {
    std::shared_ptr<CacheRuntime> rt;
    std::shared_ptr<CacheName> cache;  // kept while the reload runs (a rendered name could go otherwise)
    Settings settings;
    const ResultCodec* codec;
    std::string key;
    std::uint64_t stamp;
    std::optional<std::uint64_t> read_version;
    std::shared_ptr<CacheLease> lease;  // the refresh claim, renewed until the fill
    Detached call;
    void run();
  };

 private:
  // A value in the shared tier: true when the call is completed with it.
  bool shared_hit(const RemoteRead& stored);
  // A value older than refresh_after, already completing the call
  // (background_reload.cpp).
  void refresh(const RemoteRead& stored);
  void reload_in_background();
  // 4. the method, then the fill (which also drops a lease this call holds).
  void load(bool refreshing);
  // sync=true: when the wait for other processes' loads ends, in all.
  Clock::time_point fill_deadline_{};
  bool waited_ = false;
  std::unique_ptr<FillWaiter> waiter_;
  void install(const std::shared_ptr<const void>& value, std::size_t weight, std::int64_t written_ms,
               std::optional<milliseconds> ttl = std::nullopt);

  struct Land {  // every way out of the leader's path wakes the waiters, once
    CacheName& cache;
    std::string key;
    std::shared_ptr<Flight> flight;
    const ResultCodec* codec;
    std::shared_ptr<const void> value;
    std::string json;
    std::uint64_t stamp = 0;  // of the read that made `value` / `json`, and when it was taken
    Clock::time_point read_at{};
    bool landed = false;
    void now() {
      if (landed || !flight) return;  // no flight: a background reload
      landed = true;
      cache.land(key, flight, std::move(value), codec, stamp, read_at, std::move(json));
    }
    ~Land() { now(); }
  };
  // A fill lease or refresh claim this call holds, renewed while it loads
  // (a load slower than fill_lease keeps it). Given back on every way out
  // that did not fill (the method threw, nothing to keep), so that a waiter
  // loads at once instead of waiting for the lease to run out.
  struct Held {
    CacheRuntime& rt;
    CacheName& cache;
    std::string_view key;
    std::string token;
    std::shared_ptr<CacheLease> lease;  // while held
    bool holds() const noexcept { return lease != nullptr; }
    // The store gave this call the lease (claim sent at `sent`).
    void take(Clock::time_point sent) { lease = rt.hold_lease(cache, key, token, sent); }
    // No longer renewed, and left in the store: the fill dropped it, or a
    // failed reload keeps its claim to its end (one failing reload per lease).
    void stop_renewing() noexcept {
      if (lease) lease->drop_hold();
      lease.reset();
    }
    // Given back in the store (store call).
    void give_back() noexcept {
      if (!lease) return;
      stop_renewing();
      try {
        rt.remote().release(cache.name(), key, token);
      } catch (const std::exception& e) {
        rt.report(cache, key, e);  // the lease runs out by itself
      }
    }
    ~Held() { give_back(); }
  };

  Invocation& inv_;
  const Settings& s_;
  const ResultCodec& codec_;
  CacheRuntime& rt_;
  CacheName& cache_;
  CacheCounters& count_;
  std::string_view key_;
  Land land_;
  Held held_;
  std::uint64_t stamp_ = 0;
  std::optional<std::uint64_t> read_version_;  // set when the shared tier was read
};


}  // namespace weave::detail::cache
