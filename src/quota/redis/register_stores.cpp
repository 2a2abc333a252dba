// What the quota's Redis stores share: their registration for the Redis
// schemes, and the walk over their stored keys.
#include <fnmatch.h>

#include <algorithm>

#include "core/glob.h"
#include "quota/quota_runtime.h"
#include "quota/redis/redis_stores.h"
#include "store/open.h"

namespace WEAVE_NAMESPACE::detail {

std::vector<std::string> stored_quota_keys(store::Executor& exec, std::string_view prefix, std::string_view kind,
                                           std::string_view pattern, const char* what) {
  const std::string glob(pattern);
  std::string head;  // "{<prefix><kind>:" (appended: g++ 12 -O3 warns (-Wrestrict) on "{" + ...)
  head.append("{").append(prefix).append(kind).append(":");
  std::string scan;
  scan.append("{").append(glob_literal(prefix)).append(kind).append(":").append(pattern).append("}");
  std::vector<std::string> keys;
  store::scan_keys(exec, scan, [&](const std::vector<std::string>& page) {
    for (const std::string& stored : page) {
      if (!stored.starts_with(head) || !stored.ends_with("}")) continue;
      std::string key = stored.substr(head.size(), stored.size() - head.size() - 1);
      if (::fnmatch(glob.c_str(), key.c_str(), 0) == 0) keys.push_back(std::move(key));
    }
  }, what);
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}

}  // namespace weave::detail

// Registers the Redis schemes for rate limits and semaphores when
// Weave::quota_redis is linked: its static targets name
// weave_link_quota_redis (-u: REGISTERS in src/CMakeLists.txt).

namespace WEAVE_NAMESPACE {
extern "C" const char weave_link_quota_redis = 0;
namespace {
[[maybe_unused]] const bool quota_redis_registered = [] {
  for (const char* scheme : store::executor_schemes) {
    detail::register_rate_store(scheme, detail::make_redis_rates);
    detail::register_semaphore_store(scheme, detail::make_redis_semaphores);
  }
  return true;
}();
}  // namespace
}  // namespace weave
