// The shared tier of [[cache]] on Redis (redis://, redis+cluster://,
// redis+sentinel://) through the store layer: one GET per read, one script per
// fill / write / eviction (src/cache/scripts/), invalidations on one Pub/Sub
// channel whose subscription is kept by a thread of its own (docs/cache.md).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "cache/cache_runtime.h"
#include "core/process.h"
#include "core/unique_token.h"
#include "cache/remote_tier.h"
#include "cache/scripts.h"
#include "store/open.h"
#include "store/reply.h"
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

// "<sender>|k|<name size>|<name><key>" (drop the key), "<sender>|a|<name
// size>|<name>" (drop the name), or kind 'f' (a fill lease was released with a
// waiter: wake it; an older Weave reads it as 'k', which only drops a copy).
// A batch of several keys of one name is kind 'a' followed by
// "<key size>:<key>" for each key: an older Weave drops the whole name.
std::string invalidation(std::string_view sender, std::string_view name, const std::string_view* key,
                         char kind = 'k') {
  std::string m(sender);
  m += '|';
  m += key ? kind : 'a';
  m += '|';
  m += std::to_string(name.size());
  m += '|';
  m += name;
  if (key) m += *key;
  return m;
}

std::string invalidation(std::string_view sender, std::string_view name, const std::vector<std::string>& keys,
                         bool all) {
  if (all || keys.empty()) return invalidation(sender, name, nullptr);
  if (keys.size() == 1) {
    const std::string_view key = keys.front();
    return invalidation(sender, name, &key);
  }
  std::string m = invalidation(sender, name, nullptr);
  for (const std::string& k : keys) {
    m += std::to_string(k.size());
    m += ':';
    m += k;
  }
  return m;
}

std::optional<std::size_t> size_prefix(std::string_view& rest, char end) {
  const auto stop = rest.find(end);
  if (stop == std::string_view::npos || stop == 0) return std::nullopt;
  std::size_t n = 0;
  for (char c : rest.substr(0, stop)) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + static_cast<std::size_t>(c - '0');
  }
  rest.remove_prefix(stop + 1);
  if (n > rest.size()) return std::nullopt;
  return n;
}

struct Parsed {
  std::string_view sender, name;
  std::vector<std::string_view> keys;  // empty with `all`
  bool all = false;
  bool wake_only = false;  // 'f'
};
std::optional<Parsed> parse_invalidation(std::string_view m) {
  Parsed p;
  const auto bar = m.find('|');
  if (bar == std::string_view::npos || m.size() < bar + 4) return std::nullopt;
  p.sender = m.substr(0, bar);
  p.all = m[bar + 1] == 'a';
  p.wake_only = m[bar + 1] == 'f';
  std::string_view rest = m.substr(bar + 3);
  const auto n = size_prefix(rest, '|');
  if (!n) return std::nullopt;
  p.name = rest.substr(0, *n);
  rest.remove_prefix(*n);
  if (!p.all) {
    p.keys.push_back(rest);
    return p;
  }
  // A batch: its keys, or the whole name when the list does not parse.
  while (!rest.empty()) {
    const auto k = size_prefix(rest, ':');
    if (!k) {
      p.keys.clear();
      return p;
    }
    p.keys.push_back(rest.substr(0, *k));
    rest.remove_prefix(*k);
  }
  p.all = p.keys.empty();
  return p;
}

class RedisRemote final : public RemoteTier {
 public:
  RedisRemote(std::shared_ptr<store::Executor> exec, const CacheOptions& o)
      : exec_(std::move(exec)),
        prefix_(o.key_prefix),
        channel_("{" + o.key_prefix + "}invalidations"),
        fill_guard_(std::to_string(o.fill_guard.count())),
        sender_(unique_token()),
        feed_lag_(o.feed_lag) {}

  ~RedisRemote() override {
    {
      std::lock_guard g(mutex_);
      stop_ = true;
    }
    cv_.notify_all();
    keeper_.join();
  }

  RemoteRead get(std::string_view name, std::string_view key) override {
    const std::string k = entry_key(prefix_, name, key);
    const store::Reply reply = exec_->command(store::Command{"GET", k}, k, "cache get");
    const store::ReplyView r(reply, "cache get");
    RemoteRead read;
    if (r.nil()) return read;
    // "<version>[@<written ms>]:<json>" (scripts/_entry.lua)
    const std::string_view entry = r.text();
    const auto colon = entry.find(':');
    if (colon == std::string_view::npos) return read;  // not written by Weave: a miss (a fill will be refused)
    const std::string_view head = entry.substr(0, colon);
    const auto at = head.find('@');
    read.version = digits<std::uint64_t>(head.substr(0, at));
    if (at != std::string_view::npos) read.written_ms = digits<std::int64_t>(head.substr(at + 1));
    if (colon + 1 < entry.size()) read.json = std::string(entry.substr(colon + 1));
    return read;
  }

  bool fill(std::string_view name, std::string_view key, std::string_view json, milliseconds ttl,
            std::uint64_t read_version, std::string_view token) override {
    const std::string k = entry_key(prefix_, name, key), fill_lease = k + "fill", refresh_claim = k + "refresh";
    const std::string ms = std::to_string(std::max<long long>(1, ttl.count())), v = std::to_string(read_version),
                      now = std::to_string(wall_ms());
    const long long r = integer(
        run({cache_redis::scripts::fill, {k, fill_lease, refresh_claim}, {json, ms, v, now, token}}, "cache fill"));
    if (r >= 2) wake_waiters(name, key);
    return r >= 0 && (r & 1);
  }

  bool put(std::string_view name, std::string_view key, std::string_view json, milliseconds ttl) override {
    const std::string k = entry_key(prefix_, name, key);
    const std::string ms = std::to_string(std::max<long long>(1, ttl.count())), now = std::to_string(wall_ms());
    run({cache_redis::scripts::put, {k}, {json, ms, now}}, "cache put");
    const bool sent = publish_invalidation(name, &key);
    woken(k);  // this process's waiters at once, not through the feed
    return sent;
  }

  FillClaim claim_fill(std::string_view name, std::string_view key, std::string_view token, milliseconds lease,
                       std::uint64_t read_version, std::chrono::steady_clock::time_point deadline) override {
    const std::string k = entry_key(prefix_, name, key), fill_lease = k + "fill";
    // Registered before the claim: a wake published after the script ran is not lost.
    Waiting waiting(*this, k);
    const std::string ms = std::to_string(std::max<long long>(1, lease.count())), v = std::to_string(read_version);
    const long long r =
        integer(run({cache_redis::scripts::claim_fill, {k, fill_lease}, {token, ms, v}}, "cache claim fill"));
    if (r == 1) return FillClaim::load;
    if (r >= 0) return FillClaim::read_again;
    // Held by another caller for -r ms more: wait for its wake, or for its
    // lease to run out (a crashed loader, or no feed to hear the wake on).
    const auto now = std::chrono::steady_clock::now();
    const auto lease_end = now + milliseconds(-r);
    if (waiting.wait(std::min(deadline, lease_end))) return FillClaim::waited;
    return lease_end < deadline ? FillClaim::waited : FillClaim::gave_up;
  }

  bool claim_refresh(std::string_view name, std::string_view key, const RemoteRead& read, std::string_view token,
                     milliseconds lease) override {
    const std::string k = entry_key(prefix_, name, key), refresh_claim = k + "refresh";
    const std::string v = std::to_string(read.version), written = std::to_string(read.written_ms),
                      ms = std::to_string(std::max<long long>(1, lease.count()));
    return integer(run({cache_redis::scripts::claim_refresh, {k, refresh_claim}, {v, written, token, ms}},
                       "cache claim refresh")) == 1;
  }

  void release(std::string_view name, std::string_view key, std::string_view token) override {
    const std::string k = entry_key(prefix_, name, key), fill_lease = k + "fill", refresh_claim = k + "refresh";
    if (integer(run({cache_redis::scripts::release, {fill_lease, refresh_claim}, {token}}, "cache release")) >= 2)
      wake_waiters(name, key);
  }

  std::vector<bool> renew(std::span<const LeaseRenewal> items) override {
    std::vector<std::string> keys, args;
    keys.reserve(2 * items.size());
    args.reserve(items.size());
    std::vector<store::ScriptCall> calls;
    for (const LeaseRenewal& item : items) {
      const std::string k = entry_key(prefix_, item.name, item.key);
      keys.push_back(k + "fill");
      keys.push_back(k + "refresh");
      args.push_back(std::to_string(std::max<long long>(1, item.lease.count())));
    }
    for (std::size_t i = 0; i < items.size(); ++i)
      calls.push_back({cache_redis::scripts::renew, {keys[2 * i], keys[2 * i + 1]}, {items[i].token, args[i]}});
    std::vector<bool> out;
    for (const store::Reply& r : exec_->run(calls, "cache renew")) out.push_back(integer(r) == 1);  // one pipeline per node
    return out;
  }

  bool evict(std::string_view name, const std::string_view* key) override {
    if (key) {
      const std::string k = entry_key(prefix_, name, *key);
      run({cache_redis::scripts::evict, {k}, {fill_guard_}}, "cache evict");
    } else {
      evict_all(name);
    }
    const bool sent = publish_invalidation(name, key);
    if (key) woken(entry_key(prefix_, name, *key));
    else woken_all();
    return sent;
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
    keeper_ = detail::OwnedThread([this] { keep_feed(); });
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
  // A script's integer answer (0 for anything else).
  static long long integer(const store::Reply& r) {
    const store::ReplyView v(r, "cache script");
    return v.is_integer() ? v.integer() : 0;
  }
  template <class T>
  static T digits(std::string_view text) {
    T v = 0;
    for (char c : text) v = v * 10 + static_cast<T>(c - '0');
    return v;
  }

  // Group commit of invalidations, per cache name: a writer whose name has no
  // PUBLISH in flight publishes at once (a lone writer waits for nothing
  // more); writers that come while one is in flight queue their keys, and the
  // first of them to run once it landed publishes them all in one message.
  // Every writer returns only after the PUBLISH carrying its key was answered
  // (so D is unchanged), and every writer of a batch whose PUBLISH failed
  // throws its error. True when this call sent the message.
  struct Batch {
    std::vector<std::string> keys;
    bool all = false, done = false;
    std::exception_ptr error;
  };
  struct Group {
    std::shared_ptr<Batch> open;  // collecting keys while `in_flight`
    bool in_flight = false;
  };
  bool publish_invalidation(std::string_view name, const std::string_view* key) {
    std::unique_lock g(batch_mutex_);
    auto it = groups_.find(name);
    if (it == groups_.end()) it = groups_.emplace(std::string(name), Group{}).first;
    Group& group = it->second;
    if (!group.open) group.open = std::make_shared<Batch>();
    const std::shared_ptr<Batch> mine = group.open;
    if (key) mine->keys.emplace_back(*key);
    else mine->all = true;
    batch_cv_.wait(g, [&] { return mine->done || !group.in_flight; });
    const bool leads = !mine->done;  // nothing in flight and `mine` still open: send it
    if (leads) {
      group.in_flight = true;
      group.open.reset();
      g.unlock();
      try {
        exec_->publish(channel_, invalidation(sender_, name, mine->keys, mine->all));
      } catch (...) {
        mine->error = std::current_exception();
      }
      g.lock();
      mine->done = true;
      group.in_flight = false;
      g.unlock();
      batch_cv_.notify_all();
    }
    if (mine->error) std::rethrow_exception(mine->error);
    return leads;
  }

  // A released fill lease had waiters: wake them here and in every process.
  void wake_waiters(std::string_view name, std::string_view key) {
    woken(entry_key(prefix_, name, key));
    exec_->publish(channel_, invalidation(sender_, name, &key, 'f'));
  }

  // claim_fill's waiters of this process, per entry key: woken by any message
  // about their key (or their name, or a gap of the feed), then they read again.
  struct WaitSlot {
    int waiters = 0;
    std::uint64_t wakes = 0;
  };
  class Waiting {
   public:
    Waiting(RedisRemote& r, std::string key) : r_(r), key_(std::move(key)) {
      std::lock_guard g(r_.wait_mutex_);
      WaitSlot& slot = r_.waits_[key_];
      ++slot.waiters;
      wakes_ = slot.wakes;
      all_ = r_.wake_all_;
      r_.waiting_.fetch_add(1);
    }
    ~Waiting() {
      std::lock_guard g(r_.wait_mutex_);
      r_.waiting_.fetch_sub(1);
      auto it = r_.waits_.find(key_);
      if (--it->second.waiters == 0) r_.waits_.erase(it);
    }
    // True when woken since the registration; false once `until` passed.
    bool wait(std::chrono::steady_clock::time_point until) {
      std::unique_lock g(r_.wait_mutex_);
      return r_.wait_cv_.wait_until(g, until, [&] { return r_.waits_[key_].wakes != wakes_ || r_.wake_all_ != all_; });
    }

   private:
    RedisRemote& r_;
    std::string key_;
    std::uint64_t wakes_ = 0, all_ = 0;
  };
  void woken(const std::string& entry) {
    if (waiting_.load() == 0) return;
    {
      std::lock_guard g(wait_mutex_);
      auto it = waits_.find(entry);
      if (it == waits_.end()) return;
      ++it->second.wakes;
    }
    wait_cv_.notify_all();
  }
  void woken_all() {
    if (waiting_.load() == 0) return;
    {
      std::lock_guard g(wait_mutex_);
      ++wake_all_;
    }
    wait_cv_.notify_all();
  }

  // Tombstones every key of `name` on every master (SCAN; rare).
  void evict_all(std::string_view name) {
    std::string pattern = "{";
    for (char c : prefix_ + std::string(name) + ":") {
      if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') pattern += '\\';
      pattern += c;
    }
    pattern += "*}";  // entries end with '}', their leases ("...}fill") are not evicted
    exec_->for_each_master([&](store::NodeExecutor& node) {
      std::string cursor = "0";
      do {
        const store::Reply reply = node.command(store::Command{"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"});
        const store::ReplyView r(reply, "cache evict all");
        if (r.size() != 2) r.unexpected();
        cursor.assign(r[0].text());
        const store::ReplyView keys = r[1];
        std::vector<store::ScriptCall> calls;
        for (std::size_t i = 0; i < keys.size(); ++i)
          calls.push_back({cache_redis::scripts::evict, {keys[i].text()}, {fill_guard_}});
        // Through the executor, not `node`: on a cluster the key's slot may be
        // moving, and the executor follows the redirect.
        if (!calls.empty()) exec_->run(calls, "cache evict all");
      } while (cursor != "0");
    });
  }

  // A fresh subscription with a feed of its own: only the current feed's
  // events count (an older one may still hear from a node that stopped
  // publishing, e.g. the master before a failover).
  void subscribe_now() {
    auto feed = std::make_shared<store::Feed>();
    feed->drained_at = drained_;
    // A confirmation every half feed_lag keeps live() true on a quiet
    // connection with room for a late reply.
    feed->confirm_every = std::max(std::chrono::milliseconds(1),
                                   std::chrono::duration_cast<std::chrono::milliseconds>(feed_lag_) / 2);
    const std::uint64_t id = ++feed_id_;
    feed->on_message = [this, id](std::string_view payload) {
      if (id != feed_id_.load()) return;
      auto p = parse_invalidation(payload);
      if (!p) return;
      if (p->all) woken_all();
      for (std::string_view key : p->keys) woken(entry_key(prefix_, p->name, key));
      if (p->wake_only || p->sender == sender_ || !listener_.on_invalidate) return;
      if (p->all) listener_.on_invalidate(p->name, nullptr);
      for (const std::string_view& key : p->keys) listener_.on_invalidate(p->name, &key);
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
    woken_all();  // a wake may be lost: waiters read again
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
  std::mutex wait_mutex_;
  std::condition_variable wait_cv_;
  std::unordered_map<std::string, WaitSlot> waits_;
  std::uint64_t wake_all_ = 0;
  std::atomic<int> waiting_{0};
  struct NameHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  std::mutex batch_mutex_;
  std::condition_variable batch_cv_;
  std::unordered_map<std::string, Group, NameHash, std::equal_to<>> groups_;  // per name, kept like the names
  detail::OwnedThread keeper_;
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
