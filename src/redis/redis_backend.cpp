// The redis:// lock backend: one Lua script call per acquire / release, one
// pipelined round trip per watchdog tick, Pub/Sub for waiting. See docs/redis.md.
#include <algorithm>
#include <atomic>
#include <deque>
#include <mutex>
#include <string>

#include "redis/connection.h"
#include "redis/executor.h"
#include "redis/scripts.h"
#include "redis/subscriber.h"
#include "weave/error.h"
#include "weave/redis.h"

namespace weave {
namespace redis {
namespace {

// Items per renew script call; all calls of one batch go in one pipelined write.
constexpr std::size_t kRenewChunk = 256;

enum ScriptId { kAcquire = 0, kRelease = 1, kRenew = 2 };
constexpr const char* kScripts[] = {kAcquireScript, kReleaseScript, kRenewScript};

long long int_at(const redisReply* r, std::size_t i) {
  const redisReply* e = r->element[i];
  if (e->type == REDIS_REPLY_INTEGER) return e->integer;
  if (e->type == REDIS_REPLY_STRING) return std::stoll(std::string(e->str, e->len));
  return 0;
}

class Waiter final : public LockWaiter {
 public:
  Waiter(std::shared_ptr<Executor> e, std::unique_ptr<Subscriber::Interest> i)
      : exec_(std::move(e)), interest_(std::move(i)) {}
  bool wait_until(std::chrono::steady_clock::time_point deadline) override {
    return interest_->wait_until(deadline);
  }

 private:
  std::shared_ptr<Executor> exec_;  // its subscriber outlives interest_
  std::unique_ptr<Subscriber::Interest> interest_;
};

class RedisLockBackend final : public LockBackend {
 public:
  RedisLockBackend(std::shared_ptr<Executor> exec, std::string key_prefix)
      : exec_(std::move(exec)), prefix_(std::move(key_prefix)) {}

  AcquireResult try_acquire(std::string_view key, std::string_view owner,
                            std::chrono::milliseconds lease) override {
    std::string lock = lock_key(key);
    std::string fence = lock + ":fence";
    std::string ms = std::to_string(lease.count() > 0 ? lease.count() : 1);
    ScriptCall call{kScripts[kAcquire], {lock, fence}, {owner, ms}};
    return acquire_result(run_one(std::move(call), "acquire"));
  }

  ReleaseResult release(std::string_view key, std::string_view owner) override {
    std::string lock = lock_key(key);
    std::string channel = lock + ":released";
    ScriptCall call{kScripts[kRelease], {lock}, {owner, channel}};
    Reply r = run_one(std::move(call), "release");
    if (r->type != REDIS_REPLY_INTEGER) bad_reply(r.get(), "release");
    return r->integer == 1 ? ReleaseResult::released : ReleaseResult::lost;
  }

  std::vector<RenewResult> renew_batch(std::span<const RenewItem> items) override {
    std::vector<RenewResult> out;
    if (items.empty()) return out;
    std::deque<std::string> storage;  // stable addresses for the argv views
    // One script call touches one cluster slot: group the items by shard
    // (always 0 on a single node) and by script (read leases live in their
    // own zset), then chunk each group.
    struct Item {
      unsigned shard;
      bool read;
      std::size_t index;
    };
    std::vector<Item> order;
    std::vector<const std::string*> names(items.size());
    order.reserve(items.size());
    for (std::size_t i = 0; i < items.size(); ++i) {
      names[i] = &storage.emplace_back(lock_key(items[i].key));
      order.push_back({exec_->shard_of(*names[i]), items[i].type == LockType::read, i});
    }
    std::stable_sort(order.begin(), order.end(), [](const Item& a, const Item& b) {
      return a.shard != b.shard ? a.shard < b.shard : a.read < b.read;
    });
    std::vector<ScriptCall> calls;
    std::vector<std::vector<std::size_t>> members;  // item indexes per call
    for (std::size_t i = 0; i < order.size();) {
      const unsigned shard = order[i].shard;
      const bool read = order[i].read;
      ScriptCall call{read ? kRenewReadScript : kScripts[kRenew], {}, {}};
      std::vector<std::size_t> idx;
      for (; i < order.size() && order[i].shard == shard && order[i].read == read && idx.size() < kRenewChunk;
           ++i) {
        const std::size_t j = order[i].index;
        idx.push_back(j);
        if (read) {
          call.keys.push_back(storage.emplace_back(*names[j] + ":readers"));
          call.keys.push_back(storage.emplace_back(*names[j] + ":readers:fence"));
        } else {
          call.keys.push_back(*names[j]);
        }
        call.args.push_back(items[j].owner_token);
        call.args.push_back(storage.emplace_back(std::to_string(std::max<long long>(1, items[j].lease.count()))));
      }
      calls.push_back(std::move(call));
      members.push_back(std::move(idx));
    }
    std::vector<Reply> replies = run(calls, "renew");
    out.assign(items.size(), RenewResult::lost);
    for (std::size_t c = 0; c < calls.size(); ++c) {
      const redisReply* r = replies[c].get();
      if (r->type != REDIS_REPLY_ARRAY || r->elements != members[c].size()) bad_reply(r, "renew");
      for (std::size_t j = 0; j < r->elements; ++j)
        out[members[c][j]] = int_at(r, j) == 1 ? RenewResult::owned : RenewResult::lost;
    }
    return out;
  }

  // ---- lock types: one script call each (scripts.h, docs/redis.md) ----

  bool supports(LockType) const override { return true; }

  AcquireResult try_acquire_as(LockType type, std::string_view key, std::string_view owner,
                               std::chrono::milliseconds lease, std::chrono::milliseconds entry) override {
    if (type == LockType::reentrant) return try_acquire(key, owner, lease);
    const std::string lock = lock_key(key);
    const std::string fence = lock + ":fence";
    const std::string ms = std::to_string(std::max<long long>(1, lease.count()));
    const std::string entry_ms = std::to_string(std::max<long long>(0, entry.count()));
    std::string a = lock + (type == LockType::fair ? ":line" : ":readers");
    std::string b = lock + (type == LockType::fair ? ":line:until" : ":readers:fence");
    const std::string writers = lock + ":writers";
    ScriptCall call;
    if (type == LockType::fair)
      call = {kAcquireFairScript, {lock, fence, a, b}, {owner, ms, entry_ms}};
    else if (type == LockType::read)
      call = {kAcquireReadScript, {lock, fence, a, b, writers}, {owner, ms}};
    else
      call = {kAcquireWriteScript, {lock, fence, a, b, writers}, {owner, ms, entry_ms}};
    return acquire_result(run_one(std::move(call), "acquire"));
  }

  ReleaseResult release_as(LockType type, std::string_view key, std::string_view owner) override {
    if (type != LockType::read) return release(key, owner);  // fair, write: the exclusive holder
    const std::string lock = lock_key(key);
    const std::string readers = lock + ":readers", fences = lock + ":readers:fence";
    const std::string channel = lock + ":released";
    Reply r = run_one({kReleaseReadScript, {readers, fences}, {owner, channel}}, "release");
    if (r->type != REDIS_REPLY_INTEGER) bad_reply(r.get(), "release");
    return r->integer == 1 ? ReleaseResult::released : ReleaseResult::lost;
  }

  void leave_queue(LockType type, std::string_view key, std::string_view owner) override {
    if (type != LockType::fair && type != LockType::write) return;
    const std::string lock = lock_key(key);
    const std::string channel = lock + ":released";
    const std::string line = lock + ":line";
    const std::string places = lock + (type == LockType::fair ? ":line:until" : ":writers");
    ScriptCall call{kLeaveLineScript, {places, lock}, {owner, channel}};
    if (type == LockType::fair) call.keys.push_back(line);
    run_one(std::move(call), "leave line");
  }

  std::unique_ptr<LockWaiter> prepare_wait(std::string_view key) override {
    auto interest = exec_->subscribe(lock_key(key) + ":released");
    return std::make_unique<Waiter>(exec_, std::move(interest));
  }

 private:
  // "{<prefix><key>}": the braces make it a hash tag, so the fencing counter
  // ("{...}:fence") always lands in the same cluster slot.
  std::string lock_key(std::string_view key) const { return lock_key_for(prefix_, key); }

  // {1, fencing token} or {0, ms until it may change} (every acquire script).
  static AcquireResult acquire_result(const Reply& r) {
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 2) bad_reply(r.get(), "acquire");
    AcquireResult out;
    long long flag = int_at(r.get(), 0), value = int_at(r.get(), 1);
    if (flag == 1) {
      out.acquired = true;
      out.fencing_token = static_cast<std::uint64_t>(value);
    } else {
      out.holder_ttl_left = std::chrono::milliseconds(value > 0 ? value : 0);
    }
    return out;
  }

  Reply run_one(ScriptCall&& call, const char* what) {
    std::vector<ScriptCall> one;
    one.push_back(std::move(call));
    return std::move(run(one, what).front());
  }

  std::vector<Reply> run(const std::vector<ScriptCall>& calls, const char* what) {
    return exec_->run(calls, what);
  }

  std::shared_ptr<Executor> exec_;
  std::string prefix_;
};

}  // namespace

std::shared_ptr<LockBackend> make_script_backend(std::shared_ptr<Executor> executor, std::string key_prefix) {
  return std::make_shared<RedisLockBackend>(std::move(executor), std::move(key_prefix));
}

}  // namespace redis

std::shared_ptr<LockBackend> make_redis_lock_backend(const LockOptions& options) {
  LockUrl url = parse_lock_url(options.url);
  if (url.scheme != "redis") throw ConfigError("'" + options.url + "' is not a redis:// URL");
  auto exec = std::make_shared<redis::NodeExecutor>(redis::endpoint_from(url, options), options.pool_size);
  return redis::make_script_backend(std::move(exec), options.key_prefix);
}

}  // namespace weave
