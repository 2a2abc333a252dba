// A ClaimStore whose claim and finish a coroutine can send without a thread
// hop: the Redis claim store (dedupe/redis/claim_redis.cpp). The store builds
// each request's script call and reads its reply (store/direct_request.h);
// the asynchronous dedupe (dedupe/asio/) sends it from the coroutine's thread
// (store/asio/async_run.h) when the runtime's store is one; every other store
// call runs on the store pool. No Asio here: the Redis stores do not depend on it.
#pragma once

#include <chrono>
#include <memory>
#include <string_view>

#include "dedupe/claim_store.h"
#include "store/direct_request.h"

namespace WEAVE_NAMESPACE::detail {

class DirectClaimStore {
 public:
  // claim() (by the claim script) / finish() as a request to send: the same
  // results and errors once its replies are read.
  virtual std::unique_ptr<store::DirectRequest<ClaimOutcome>> direct_claim(std::string_view key,
                                                                           std::string_view owner,
                                                                           std::string_view match,
                                                                           std::chrono::milliseconds lease) = 0;
  virtual std::unique_ptr<store::DirectRequest<bool>> direct_finish(std::string_view key, std::string_view owner,
                                                                    std::string_view match,
                                                                    const DedupeRecord& outcome,
                                                                    std::chrono::milliseconds window) = 0;

 protected:
  ~DirectClaimStore() = default;
};

}  // namespace weave::detail
