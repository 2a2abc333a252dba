// The `cache` interceptor of asynchronous methods: the blocking
// interceptor's steps (cache_interceptor.cpp, read_through.h) driven by
// suspension. A local hit completes the call on the caller's executor, as
// fast as a synchronous hit. A miss whose key another call of this process
// is loading waits, suspended, for that flight to land; the leader's
// sync=true wait for another process's fill lease is suspended too, woken by
// the fill (FillWaiter::wake_on_change). Store calls run on the store pool
// (mem:// inline); the method runs as the rest of the call's coroutines.
#include <exception>
#include <memory>
#include <string>

#include "async/async_call.h"
#include "async/blocking_pool.h"
#include "async/wakeup.h"
#include "cache/read_through.h"
#include "weave/asio.h"
#include "weave/async_interceptor.h"

namespace WEAVE_NAMESPACE::detail {
namespace {

// Steps 3 and 4 by the leader of the key's flight.
net::awaitable<void> read_through(cache::ReadThrough& r, AsyncInvocation& inv, bool in_process) {
  for (;;) {
    const cache::ReadThrough::Step step = co_await store_call(in_process, [&r] { return r.look(); });
    if (step.kind == cache::ReadThrough::Step::done) co_return;
    if (step.kind == cache::ReadThrough::Step::load) break;
    co_await wait_for_change(*r.waiter(), step.until);
  }
  const auto started = cache::Clock::now();
  std::exception_ptr error;
  co_await proceed_before_cleanup(inv, error);
  if (error) {
    co_await store_call(in_process, [&r] { r.load_failed(); });
    std::rethrow_exception(error);
  }
  co_await store_call(in_process, [&r, started] { r.loaded(started); });
}

// Until the leader of `flight` landed (holding no thread).
net::awaitable<void> landed(Flight& flight) {
  auto wakeup = std::make_shared<Wakeup>();
  flight.wake_when_done(wakeup.get(), [wakeup] { wakeup->notify(); });
  co_await wakeup->wait_until(Wakeup::Clock::time_point::max());
}

class AsyncCacheInterceptor final : public AsyncBuiltin {
 public:
  using AsyncBuiltin::AsyncBuiltin;

  net::awaitable<void> around_async(AsyncInvocation& inv) override {
    Invocation& call = AsyncCallAccess::invocation(inv);
    const cache::Settings& s = *call.prepared<cache::Settings>();
    const ResultCodec& codec = cache::codec_of(call);
    std::string key_storage;
    const std::string_view key = cache::key_of(call, s, key_storage);
    const auto now = cache::Clock::now();
    {
      // 1. the local tier. No suspension in this scope: a CacheRuntimeRef
      // counts on its thread (and costs no shared count).
      const CacheRuntimeRef rt;
      const CacheNameRef held = cache::cache_of(*rt, call, s);
      if (cache::complete_from_local(call, s, codec, *rt, *held, key, now, /*count_miss=*/true)) co_return;
    }
    // 2. one load per key in this process; the others wait, suspended, for its value
    const std::shared_ptr<CacheRuntime> rt = cache_runtime();
    const CacheNameRef held = cache::cache_of(*rt, call, s);  // kept across suspensions
    CacheName& name = *held;
    const bool in_process = rt->remote().in_process() || s.tier == cache::Tier::local;
    for (int attempt = 0;; ++attempt) {
      auto joined = name.join(std::string(key));
      const std::shared_ptr<Flight> flight = std::move(joined.first);
      if (joined.second) {
        cache::ReadThrough r(call, s, codec, *rt, name, key, flight);
        co_await read_through(r, inv, in_process);
        co_return;
      }
      co_await landed(*flight);
      switch (cache::after_flight(call, codec, *rt, name, key, *flight, now, attempt)) {
        case cache::AfterFlight::taken: co_return;
        case cache::AfterFlight::load_self: co_await inv.proceed(); co_return;
        case cache::AfterFlight::join_again: break;
      }
    }
  }
};

}  // namespace
}  // namespace weave::detail

namespace WEAVE_NAMESPACE {
// -u weave_link_asio_cache keeps this object in a static link (REGISTERS in
// src/CMakeLists.txt).
extern "C" const char weave_link_asio_cache = 0;

namespace {
[[maybe_unused]] const bool async_cache_registered = [] {
  detail::register_async_builtin<detail::AsyncCacheInterceptor>("cache");
  return true;
}();
}  // namespace
}  // namespace WEAVE_NAMESPACE
