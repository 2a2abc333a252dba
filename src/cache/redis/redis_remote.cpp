// The shared tier of [[cache]] on Redis (redis://, redis+cluster://,
// redis+sentinel://) through the store layer: one GET per read, one script per
// fill / write / eviction (src/cache/scripts/), invalidations on one Pub/Sub
// channel whose subscription is kept by a thread of its own (docs/cache.md).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <random>
#include <string>
#include <thread>

#include "cache/cache_runtime.h"
#include "cache/remote_tier.h"
#include "cache/scripts.h"
#include "store/open.h"
#include "weave/cache.h"
#include "weave/error.h"

namespace WEAVE_NAMESPACE::detail {
namespace {

using std::chrono::milliseconds;

std::string entry_key(std::string_view prefix, std::string_view name, std::string_view key) {
  std::string k;
  k.reserve(prefix.size() + name.size() + key.size() + 3);
  k += '{';
  k += prefix;
  k += name;
  k += ':';
  k += key;
  k += '}';
  return k;
}

// "<sender>|k|<name size>|<name><key>" or "<sender>|a|<name size>|<name>".
std::string invalidation(std::string_view sender, std::string_view name, const std::string_view* key) {
  std::string m(sender);
  m += key ? "|k|" : "|a|";
  m += std::to_string(name.size());
  m += '|';
  m += name;
  if (key) m += *key;
  return m;
}

struct Parsed {
  std::string_view sender, name, key;
  bool all = false;
};
std::optional<Parsed> parse_invalidation(std::string_view m) {
  Parsed p;
  const auto bar = m.find('|');
  if (bar == std::string_view::npos || m.size() < bar + 4) return std::nullopt;
  p.sender = m.substr(0, bar);
  p.all = m[bar + 1] == 'a';
  std::string_view rest = m.substr(bar + 3);
  const auto bar2 = rest.find('|');
  if (bar2 == std::string_view::npos) return std::nullopt;
  std::size_t n = 0;
  for (char c : rest.substr(0, bar2)) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + static_cast<std::size_t>(c - '0');
  }
  rest = rest.substr(bar2 + 1);
  if (n > rest.size()) return std::nullopt;
  p.name = rest.substr(0, n);
  p.key = rest.substr(n);
  return p;
}

std::string process_id() {
  std::random_device rd;
  return std::to_string(rd()) + std::to_string(rd());
}

class RedisRemote final : public RemoteTier {
 public:
  RedisRemote(std::shared_ptr<store::Executor> exec, const CacheOptions& o)
      : exec_(std::move(exec)),
        prefix_(o.key_prefix),
        channel_("{" + o.key_prefix + "}invalidations"),
        fill_guard_(std::to_string(o.fill_guard.count())),
        sender_(process_id()),
        feed_lag_(o.feed_lag) {}

  ~RedisRemote() override {
    {
      std::lock_guard g(mutex_);
      stop_ = true;
    }
    cv_.notify_all();
    if (keeper_.joinable()) keeper_.join();
  }

  RemoteRead get(std::string_view name, std::string_view key) override {
    const std::string k = entry_key(prefix_, name, key);
    store::Reply r = exec_->command(store::Command{"GET", k}, k, "cache get");
    RemoteRead read;
    if (r->type == REDIS_REPLY_NIL) return read;
    if (r->type != REDIS_REPLY_STRING) store::bad_reply(r.get(), "cache get");
    const std::string_view entry(r->str, r->len);
    const auto colon = entry.find(':');
    std::uint64_t v = 0;
    if (colon == std::string_view::npos) return read;  // not written by Weave: a miss (a fill will be refused)
    for (char c : entry.substr(0, colon)) v = v * 10 + static_cast<std::uint64_t>(c - '0');
    read.version = v;
    if (colon + 1 < entry.size()) read.json = std::string(entry.substr(colon + 1));
    return read;
  }

  bool fill(std::string_view name, std::string_view key, std::string_view json, milliseconds ttl,
            std::uint64_t read_version) override {
    const std::string k = entry_key(prefix_, name, key);
    const std::string ms = std::to_string(std::max<long long>(1, ttl.count())), v = std::to_string(read_version);
    return integer(run({cache_redis::scripts::fill, {k}, {json, ms, v}}, "cache fill")) == 1;
  }

  void put(std::string_view name, std::string_view key, std::string_view json, milliseconds ttl) override {
    const std::string k = entry_key(prefix_, name, key);
    const std::string ms = std::to_string(std::max<long long>(1, ttl.count()));
    run({cache_redis::scripts::put, {k}, {json, ms}}, "cache put");
    exec_->publish(channel_, invalidation(sender_, name, &key));
  }

  void evict(std::string_view name, const std::string_view* key) override {
    if (key) {
      const std::string k = entry_key(prefix_, name, *key);
      run({cache_redis::scripts::evict, {k}, {fill_guard_}}, "cache evict");
    } else {
      evict_all(name);
    }
    exec_->publish(channel_, invalidation(sender_, name, key));
  }

  void listen(Listener listener) override {
    {
      std::lock_guard g(mutex_);
      listener_ = std::move(listener);
    }
    // The first subscription is made here, so a cache is live from its first
    // call when Redis is up; the keeper takes over from then on.
    try {
      subscribe_now();
    } catch (const std::exception&) {
      // Redis is down: not live; the keeper retries.
    }
    keeper_ = std::thread([this] { keep_feed(); });
  }

  bool live(std::chrono::steady_clock::time_point now) const noexcept override {
    return live_.load(std::memory_order_acquire) &&
           now.time_since_epoch().count() - drained_->load(std::memory_order_acquire) <= feed_lag_.count();
  }

 private:
  store::Reply run(store::ScriptCall call, const char* what) {
    std::vector<store::ScriptCall> calls;
    calls.push_back(std::move(call));
    return std::move(exec_->run(calls, what).front());
  }
  static long long integer(const store::Reply& r) { return r->type == REDIS_REPLY_INTEGER ? r->integer : -1; }

  // Tombstones every key of `name` on every master (SCAN; rare).
  void evict_all(std::string_view name) {
    std::string pattern = "{";
    for (char c : prefix_ + std::string(name) + ":") {
      if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') pattern += '\\';
      pattern += c;
    }
    pattern += '*';
    exec_->for_each_master([&](store::NodeExecutor& node) {
      std::string cursor = "0";
      do {
        store::Reply r = node.command(store::Command{"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"});
        if (r->type != REDIS_REPLY_ARRAY || r->elements != 2) store::bad_reply(r.get(), "cache evict all");
        cursor.assign(r->element[0]->str, r->element[0]->len);
        std::vector<store::ScriptCall> calls;
        for (std::size_t i = 0; i < r->element[1]->elements; ++i) {
          const redisReply* k = r->element[1]->element[i];
          calls.push_back({cache_redis::scripts::evict, {std::string_view(k->str, k->len)}, {fill_guard_}});
        }
        if (!calls.empty()) node.run(calls, "cache evict all");
      } while (cursor != "0");
    });
  }

  // A fresh subscription with a feed of its own: only the current feed's
  // events count (an older one may still hear from a node that stopped
  // publishing, e.g. the master before a failover).
  void subscribe_now() {
    auto feed = std::make_shared<store::Feed>();
    feed->drained_at = drained_;
    const std::uint64_t id = ++feed_id_;
    feed->on_message = [this, id](std::string_view payload) {
      if (id != feed_id_.load()) return;
      auto p = parse_invalidation(payload);
      if (!p || p->sender == sender_ || !listener_.on_invalidate) return;
      listener_.on_invalidate(p->name, p->all ? nullptr : &p->key);
    };
    feed->on_state = [this, id](bool up) {
      if (id != feed_id_.load()) return;
      if (up) came_up();
      else went_down();
    };
    auto interest = exec_->subscribe(channel_, nullptr, feed);
    {
      std::lock_guard g(mutex_);
      interest_ = std::move(interest);
    }
    came_up();
  }

  void went_down() {
    live_.store(false, std::memory_order_release);
    if (listener_.on_gap) listener_.on_gap();  // local tiers start over
    cv_.notify_all();
  }

  // Before going live, drop the local tiers once more: a load stamped while
  // the feed was down may have missed an invalidation, and must not install.
  void came_up() {
    if (listener_.on_gap) listener_.on_gap();
    live_.store(true, std::memory_order_release);
  }

  void keep_feed() {
    int backoff_ms = 50;
    for (;;) {
      {
        std::unique_lock g(mutex_);
        cv_.wait(g, [&] { return stop_ || !live_.load(); });
        if (stop_) return;
        cv_.wait_for(g, milliseconds(backoff_ms), [&] { return stop_; });
        if (stop_) return;
      }
      if (live_.load()) continue;  // the subscriber reconnected by itself
      try {
        subscribe_now();
        backoff_ms = 50;
      } catch (const std::exception&) {
        backoff_ms = std::min(backoff_ms * 2, 1000);
      }
    }
  }

  std::shared_ptr<store::Executor> exec_;
  std::string prefix_, channel_, fill_guard_, sender_;
  Listener listener_;
  std::chrono::nanoseconds feed_lag_;  // how far behind the reader may be (CacheOptions::feed_lag)
  std::atomic<bool> live_{false};
  std::shared_ptr<std::atomic<std::int64_t>> drained_ = std::make_shared<std::atomic<std::int64_t>>(0);
  std::atomic<std::uint64_t> feed_id_{0};
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::unique_ptr<store::Subscriber::Interest> interest_;
  std::thread keeper_;
};

}  // namespace

std::shared_ptr<RemoteTier> make_redis_remote(const CacheOptions& options) {
  store::ConnectionSettings settings{.connect_timeout = options.connect_timeout,
                                     .command_timeout = options.command_timeout,
                                     .pool_size = options.pool_size};
  return std::make_shared<RedisRemote>(store::open_executor(options.url, settings), options);
}

}  // namespace weave::detail

namespace WEAVE_NAMESPACE {
// Registers the Redis schemes for [[cache]] when Weave::cache_redis is linked:
// cmake/link/weave_link_cache_redis.cpp refers to weave_link_cache_redis.
extern "C" WEAVE_API const char weave_link_cache_redis = 0;
namespace {
[[maybe_unused]] const bool cache_redis_registered = [] {
  for (const char* scheme : {"redis", "redis+cluster", "redis+sentinel"})
    detail::register_cache_remote(scheme, [](const CacheOptions& o) { return detail::make_redis_remote(o); });
  return true;
}();
}  // namespace
}  // namespace weave
