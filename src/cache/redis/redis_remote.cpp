// The shared tier of [[cache]] on Redis (redis://, redis+cluster://,
// redis+sentinel://) through the store layer: one GET per read, one script per
// fill / write / eviction (src/cache/scripts/; a write's or an eviction's
// script publishes its invalidation itself), invalidations on one Pub/Sub
// channel whose subscription is kept by a thread of its own (docs/cache.md).
// This file is what a RemoteTier call does, in order; the parts it wires
// together (key layout, messages, waiters, feed) have a file
// each (internal.h lists them).
#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cache/cache_runtime.h"
#include "cache/redis/internal.h"
#include "cache/remote_tier.h"
#include "cache/scripts.h"
#include "core/unique_token.h"
#include "store/open.h"
#include "store/reply.h"
#include "weave/cache.h"
#include "weave/error.h"

namespace WEAVE_NAMESPACE::cache_redis {
namespace {

using std::chrono::milliseconds;
using detail::FillClaim;
using detail::RemoteRead;

class RedisRemote final : public detail::RemoteTier {
 public:
  RedisRemote(std::shared_ptr<store::Executor> exec, const CacheOptions& o)
      : exec_(std::move(exec)),
        prefix_(o.key_prefix),
        channel_(invalidation_channel(o.key_prefix)),
        fill_guard_(std::to_string(o.fill_guard.count())),
        sender_(detail::unique_token()),
        feed_(exec_, channel_, o.feed_lag) {}

  RemoteRead get(std::string_view name, std::string_view key) override {
    const std::string k = entry_key(prefix_, name, key);
    const store::Reply reply = exec_->command(store::Command{"GET", k}, k, "cache get");
    const store::ReplyView r(reply, "cache get");
    if (r.nil()) {
      RemoteRead none;
      none.absent = true;
      return none;
    }
    return read_entry(r.text());
  }

  std::optional<std::uint64_t> version_for_load(std::string_view name, std::string_view key,
                                                milliseconds guard) override {
    // 2^32 <= v < 2^46: beyond the count of writes a store restarted empty
    // reaches (puts count from 1), below the 10^14 the scripts' Lua prints
    // as an integer, and drawn from a unique token: no other load's.
    constexpr std::uint64_t kLow = std::uint64_t{1} << 32, kHigh = std::uint64_t{1} << 46;
    const std::uint64_t v = kLow + std::hash<std::string_view>{}(detail::unique_token_text().view()) % (kHigh - kLow);
    const std::string k = entry_key(prefix_, name, key);
    const std::string tombstone = std::to_string(v) + ":", ms = std::to_string(std::max<long long>(1, guard.count()));
    const store::Reply reply =
        exec_->command(store::Command{"SET", k, tombstone, "NX", "PX", ms}, k, "cache version for load");
    if (store::ReplyView(reply, "cache version for load").nil()) return std::nullopt;  // stored meanwhile
    return v;
  }

  bool fill(std::string_view name, std::string_view key, std::string_view json, milliseconds ttl,
            std::uint64_t read_version, std::string_view token) override {
    const std::string k = entry_key(prefix_, name, key);
    const std::string ms = std::to_string(std::max<long long>(1, ttl.count())), v = std::to_string(read_version),
                      now = std::to_string(detail::wall_ms());
    const long long r = integer(
        store::run_one(*exec_, {scripts::fill, {k, fill_lease_key(k), refresh_claim_key(k)}, {json, ms, v, now, token}}, "cache fill"));
    if (r >= 2) wake_waiters(name, key);
    return r >= 0 && (r & 1);
  }

  bool put(std::string_view name, std::string_view key, std::string_view json, milliseconds ttl) override {
    const std::string k = entry_key(prefix_, name, key);
    const std::string ms = std::to_string(std::max<long long>(1, ttl.count())),
                      now = std::to_string(detail::wall_ms());
    store::run_one(*exec_, {scripts::put, {k}, {json, ms, now, channel_, invalidation(sender_, name, &key)}},
                   "cache put");
    waiters_.woken(k);  // this process's waiters at once, not through the feed
    return true;
  }

  std::unique_ptr<detail::FillWaiter> watch_fill(std::string_view name, std::string_view key) override {
    return std::make_unique<FillWaiters::Waiting>(waiters_, entry_key(prefix_, name, key));
  }

  detail::FillClaimed try_claim_fill(std::string_view name, std::string_view key, std::string_view token,
                                     milliseconds lease, std::uint64_t read_version) override {
    const std::string k = entry_key(prefix_, name, key);
    const std::string ms = std::to_string(std::max<long long>(1, lease.count())), v = std::to_string(read_version);
    const long long r =
        integer(store::run_one(*exec_, {scripts::claim_fill, {k, fill_lease_key(k)}, {token, ms, v}}, "cache claim fill"));
    if (r == 1) return {FillClaim::load};
    if (r >= 0) return {FillClaim::read_again};
    // Held by another caller for -r ms more: a crashed loader's lease runs
    // out then (and with no feed to hear its wake on, so does the wait).
    return {FillClaim::held, std::chrono::steady_clock::now() + milliseconds(-r)};
  }

  bool claim_refresh(std::string_view name, std::string_view key, const RemoteRead& read, std::string_view token,
                     milliseconds lease) override {
    const std::string k = entry_key(prefix_, name, key);
    const std::string v = std::to_string(read.version), written = std::to_string(read.written_ms),
                      ms = std::to_string(std::max<long long>(1, lease.count()));
    return integer(store::run_one(*exec_, {scripts::claim_refresh, {k, refresh_claim_key(k)}, {v, written, token, ms}},
                       "cache claim refresh")) == 1;
  }

  void release(std::string_view name, std::string_view key, std::string_view token) override {
    const std::string k = entry_key(prefix_, name, key);
    if (integer(store::run_one(*exec_, {scripts::release, {fill_lease_key(k), refresh_claim_key(k)}, {token}}, "cache release")) >= 2)
      wake_waiters(name, key);
  }

  std::vector<bool> renew(std::span<const LeaseRenewal> items) override {
    std::vector<std::string> keys, args;
    keys.reserve(2 * items.size());
    args.reserve(items.size());
    std::vector<store::ScriptCall> calls;
    for (const LeaseRenewal& item : items) {
      const std::string k = entry_key(prefix_, item.name, item.key);
      keys.push_back(fill_lease_key(k));
      keys.push_back(refresh_claim_key(k));
      args.push_back(std::to_string(std::max<long long>(1, item.lease.count())));
    }
    for (std::size_t i = 0; i < items.size(); ++i)
      calls.push_back({scripts::renew, {keys[2 * i], keys[2 * i + 1]}, {items[i].token, args[i]}});
    std::vector<bool> out;
    for (const store::Reply& r : exec_->run(calls, "cache renew"))  // one pipeline per node
      out.push_back(integer(r) == 1);
    return out;
  }

  bool evict(std::string_view name, const std::string_view* key) override {
    if (key) {
      const std::string k = entry_key(prefix_, name, *key);
      store::run_one(*exec_, {scripts::evict, {k}, {fill_guard_, channel_, invalidation(sender_, name, key)}},
                     "cache evict");
      waiters_.woken(k);
    } else {
      evict_all(name);
      waiters_.woken_all();
    }
    return true;
  }

  // Set once, before the feed exists: its handlers only read it.
  void listen(Listener listener) override {
    listener_ = std::move(listener);
    feed_.start({.on_message = [this](std::string_view payload) { heard(payload); },
                 .on_down =
                     [this] {
                       gap(true);
                       waiters_.woken_all();  // a wake may be lost: waiters read again
                     },
                 .on_up = [this] { gap(false); }});
  }

  bool live(std::chrono::steady_clock::time_point now) const noexcept override { return feed_.live(now); }

 private:
  // A script's integer answer (0 for anything else).
  static long long integer(const store::Reply& r) {
    const store::ReplyView v(r, "cache script");
    return v.is_integer() ? v.integer() : 0;
  }

  // A released fill lease had waiters: wake them here and in every process.
  void wake_waiters(std::string_view name, std::string_view key) {
    waiters_.woken(entry_key(prefix_, name, key));
    exec_->publish_broadcast(channel_, invalidation(sender_, name, &key, 'f'));
  }

  std::uint64_t stored_keys(std::string_view name) override {
    std::uint64_t n = 0;
    store::scan_keys(*exec_, entries_pattern(prefix_, name), [&](const std::vector<std::string>& keys) {
      n += keys.size();
    }, "cache stored keys");
    return n;
  }

  // Tombstones every key of `name` on every master (SCAN; rare), each
  // with its own invalidation (a writer that dies half way leaves no
  // tombstone unannounced), then tells every process to drop the whole name
  // (copies of keys Redis no longer holds).
  void evict_all(std::string_view name) {
    const std::string head = entry_head(prefix_, name);
    store::scan_keys(*exec_, entries_pattern(prefix_, name), [&](const std::vector<std::string>& keys) {
      std::vector<std::string> messages;
      messages.reserve(keys.size());
      for (const std::string& entry : keys) {
        const std::string_view key = key_of_entry(entry, head);
        messages.push_back(invalidation(sender_, name, &key));
      }
      std::vector<store::ScriptCall> calls;
      for (std::size_t i = 0; i < keys.size(); ++i)
        calls.push_back({scripts::evict, {keys[i]}, {fill_guard_, channel_, messages[i]}});
      exec_->run(calls, "cache evict all");
    }, "cache evict all");
    exec_->publish_broadcast(channel_, invalidation(sender_, name, nullptr));
  }

  // A message on the channel: wakes this process's waiters of its keys, and
  // drops local copies unless this process sent it (or it only wakes).
  void heard(std::string_view payload) {
    auto p = parse_invalidation(payload);
    if (!p) return;
    if (p->all) waiters_.woken_all();
    for (std::string_view key : p->keys) waiters_.woken(entry_key(prefix_, p->name, key));
    if (p->wake_only || p->sender == sender_ || !listener_.on_invalidate) return;
    if (p->all) listener_.on_invalidate(p->name, nullptr);
    for (const std::string_view& key : p->keys) listener_.on_invalidate(p->name, &key);
  }

  // The feed went down or is coming back: a load stamped meanwhile may have
  // missed an invalidation, so the local tiers start over (before going live).
  void gap(bool down) {
    if (listener_.on_gap) listener_.on_gap(down);
  }

  std::shared_ptr<store::Executor> exec_;
  std::string prefix_, channel_, fill_guard_, sender_;
  Listener listener_;
  FillWaiters waiters_;
  store::FeedKeeper feed_;  // last: stopped, and its handlers silenced, before the rest goes
};

}  // namespace
}  // namespace weave::cache_redis

namespace WEAVE_NAMESPACE::detail {

std::shared_ptr<RemoteTier> make_redis_remote(const CacheOptions& options) {
  return std::make_shared<cache_redis::RedisRemote>(
      store::open_executor(options.url, store::connection_settings(options)), options);
}

}  // namespace weave::detail

namespace WEAVE_NAMESPACE {
// Registers the Redis schemes for [[cache]] when Weave::cache_redis is linked:
// its static targets name weave_link_cache_redis (-u: REGISTERS in src/CMakeLists.txt).
extern "C" const char weave_link_cache_redis = 0;
namespace {
[[maybe_unused]] const bool cache_redis_registered = [] {
  for (const char* scheme : store::executor_schemes)
    detail::register_cache_remote(scheme, [](const CacheOptions& o) { return detail::make_redis_remote(o); });
  return true;
}();
}  // namespace
}  // namespace weave
