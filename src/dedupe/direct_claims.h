// A ClaimStore whose claim and finish a coroutine can await without a thread
// hop: the Redis claim store (dedupe/redis/claim_redis.cpp, through
// store/async_run.h). The asynchronous dedupe (dedupe/asio/) uses it when the
// runtime's store is one; every other store call runs on the store pool.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <optional>
#include <string_view>

#include "dedupe/claim_store.h"

namespace WEAVE_NAMESPACE::detail {

class DirectClaimStore {
 public:
  // claim() / finish() from the awaiting coroutine's thread, the same
  // results and errors; nullopt when left undone (call claim() / finish()
  // where blocking is allowed).
  virtual boost::asio::awaitable<std::optional<ClaimOutcome>> claim_direct(std::string_view key,
                                                                           std::string_view owner,
                                                                           std::string_view match,
                                                                           std::chrono::milliseconds lease) = 0;
  virtual boost::asio::awaitable<std::optional<bool>> finish_direct(std::string_view key, std::string_view owner,
                                                                    std::string_view match,
                                                                    const DedupeRecord& outcome,
                                                                    std::chrono::milliseconds window) = 0;

 protected:
  ~DirectClaimStore() = default;
};

}  // namespace weave::detail
