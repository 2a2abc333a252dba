// Group commit of a cache name's invalidations: under a burst of writes one
// PUBLISH carries many keys, while a lone writer still publishes at once (no
// timer, no wait). Kept apart from Redis (it is handed a Send) because its
// whole subject is the hand-over between concurrent writers. docs/cache.md,
// "Invalidations: group commit under load".
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "cache/redis/internal.h"

namespace WEAVE_NAMESPACE::cache_redis {

bool GroupCommit::publish(std::string_view name, const std::string_view* key) {
  std::unique_lock g(mutex_);
  auto it = groups_.find(name);
  if (it == groups_.end()) it = groups_.emplace(std::string(name), Group{}).first;
  Group& group = it->second;
  if (!group.open) group.open = std::make_shared<Batch>();
  const std::shared_ptr<Batch> mine = group.open;
  if (key) mine->keys.emplace_back(*key);
  else mine->all = true;
  cv_.wait(g, [&] { return mine->done || !group.in_flight; });
  const bool leads = !mine->done;  // nothing in flight and `mine` still open: send it
  if (leads) {
    group.in_flight = true;
    group.open.reset();
    g.unlock();
    try {
      send_(name, mine->keys, mine->all);
    } catch (...) {
      mine->error = std::current_exception();
    }
    g.lock();
    mine->done = true;
    group.in_flight = false;
    g.unlock();
    cv_.notify_all();
  }
  if (mine->error) std::rethrow_exception(mine->error);
  return leads;
}

}  // namespace weave::cache_redis
