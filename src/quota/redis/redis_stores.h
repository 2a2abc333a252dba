// The quota stores on the Redis URLs (redis://, redis+cluster://,
// redis+sentinel://), registered by register_stores.cpp.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "quota/rate_store.h"
#include "quota/semaphore_store.h"
#include "store/executor.h"
#include "weave/quota.h"

namespace WEAVE_NAMESPACE::detail {

std::shared_ptr<RateStore> make_redis_rates(const QuotaOptions& o);
std::shared_ptr<SemaphoreStore> make_redis_semaphores(const QuotaOptions& o);

// The keys K whose "{<prefix><kind>:K}" is stored and K matches the glob
// `pattern`, sorted and unique (a SCAN of every master; a resharding
// cluster may name one twice): what a listing then inspects.
std::vector<std::string> stored_quota_keys(store::Executor& exec, std::string_view prefix, std::string_view kind,
                                           std::string_view pattern, const char* what);

}  // namespace weave::detail
