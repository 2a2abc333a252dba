// mem:// rate limits: each key's theoretical arrival time in a table of this
// process, sharded by key; gcra_step() decides on steady_clock.
#include <fnmatch.h>

#include <array>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "core/feature_runtime.h"
#include "core/key_hash.h"
#include "core/process.h"
#include "quota/rate_store.h"

namespace WEAVE_NAMESPACE::detail {
namespace {

class MemRates final : public RateStore {
 public:
  RateDecision step(std::string_view key, const RateStep& s) override {
    const std::int64_t now =
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count();
    const HashedKey hashed(key);
    Shard& shard = shards_[hashed.hash % kShards];
    Guard lock(shard.mutex);
    auto it = shard.tats.find(hashed);
    if (it == shard.tats.end()) {
      std::int64_t tat = now;
      const RateDecision d = gcra_step(tat, now, s);
      if (d.admitted) {
        shard.sweep(now);
        shard.tats.emplace(std::string(key), tat);
      }
      return d;
    }
    return gcra_step(it->second, now, s);
  }
  std::vector<RateLimitState> list(std::string_view pattern) override {
    const std::int64_t now =
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count();
    const std::string glob(pattern);
    std::vector<RateLimitState> out;
    for (Shard& shard : shards_) {
      Guard lock(shard.mutex);
      for (const auto& [key, tat] : shard.tats)
        if (tat > now && ::fnmatch(glob.c_str(), key.c_str(), 0) == 0)
          out.push_back({key, std::chrono::microseconds(tat - now)});
    }
    return out;
  }
  bool in_process() const noexcept override { return true; }

 private:
  static constexpr std::size_t kShards = 16;
  struct Shard {
    Mutex mutex;
    KeyMap<std::int64_t> tats WEAVE_GUARDED_BY(mutex);
    std::size_t sweep_at WEAVE_GUARDED_BY(mutex) = 1024;
    // A key whose tat has passed holds nothing: its absence means the same.
    // Dropped once the shard doubled since the last sweep.
    void sweep(std::int64_t now) WEAVE_REQUIRES(mutex) {
      if (tats.size() < sweep_at) return;
      std::erase_if(tats, [now](const auto& e) { return e.second <= now; });
      sweep_at = std::max<std::size_t>(1024, 2 * tats.size());
    }
  };
  std::array<Shard, kShards> shards_;
};

}  // namespace

std::shared_ptr<RateStore> make_mem_rates(std::string_view table) {
  return mem_table<RateStore>(table, [] { return std::make_shared<MemRates>(); });
}

}  // namespace weave::detail
