// The `cache` interceptor of asynchronous methods. A local hit completes the
// call on the caller's executor, as fast as a synchronous hit; anything else
// (the shared tier, single flight, the load and the fill) is the blocking
// interceptor's, run on the interceptor pool (its proceed() runs the rest of
// the call as coroutines and waits): correct, but a pool thread per miss in
// flight, until the read-through is made suspending (docs/async.md).
#include <boost/asio/awaitable.hpp>
#include <memory>
#include <string>

#include "async/async_call.h"
#include "cache/read_through.h"

namespace WEAVE_NAMESPACE::detail {
namespace {

namespace asio = boost::asio;

class AsyncCacheInterceptor final : public AsyncBuiltin {
 public:
  using AsyncBuiltin::AsyncBuiltin;

  asio::awaitable<void> around_async(AsyncInvocation& inv) override {
    Invocation& call = AsyncCallAccess::invocation(inv);
    {
      // No suspension in this scope: a CacheRuntimeRef counts on its thread.
      const cache::Settings& s = *call.prepared<cache::Settings>();
      const ResultCodec& codec = cache::codec_of(call);
      const CacheRuntimeRef rt;
      auto& name = rt->name(cache::cache_name_of(call, s));
      std::string key_storage;
      const std::string_view key = cache::key_of(call, s, key_storage);
      if (cache::complete_from_local(call, s, codec, *rt, name, key, cache::Clock::now(), /*count_miss=*/false)) co_return;
    }
    co_await run_blocking(inv);
  }
};

}  // namespace
}  // namespace weave::detail

namespace WEAVE_NAMESPACE {
// cmake/link/weave_link_asio.cpp keeps this object in a static link.
extern "C" WEAVE_API const char weave_link_asio_cache = 0;

namespace {
[[maybe_unused]] const bool async_cache_registered = [] {
  detail::register_async_builtin<detail::AsyncCacheInterceptor>("cache");
  return true;
}();
}  // namespace
}  // namespace WEAVE_NAMESPACE
