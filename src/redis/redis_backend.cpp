// The redis:// lock backend: one Lua script call per acquire / release, one
// pipelined round trip per watchdog tick, Pub/Sub for waiting. See docs/redis.md.
#include <algorithm>
#include <atomic>
#include <deque>
#include <mutex>
#include <string>

#include "redis/connection.h"
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

bool is_noscript(const redisReply* r) {
  return r->type == REDIS_REPLY_ERROR && r->len >= 8 && std::string_view(r->str, 8) == "NOSCRIPT";
}

[[noreturn]] void bad_reply(const redisReply* r, const char* what) {
  if (r->type == REDIS_REPLY_ERROR)
    throw IoError(std::string("weave redis: ") + what + " failed: " + std::string(r->str, r->len));
  throw IoError(std::string("weave redis: unexpected reply to ") + what);
}

long long int_at(const redisReply* r, std::size_t i) {
  const redisReply* e = r->element[i];
  if (e->type == REDIS_REPLY_INTEGER) return e->integer;
  if (e->type == REDIS_REPLY_STRING) return std::stoll(std::string(e->str, e->len));
  return 0;
}

// A script call: EVALSHA <sha> <numkeys> keys... args..., or EVAL <body> ...
struct ScriptCall {
  ScriptId id;
  std::vector<std::string_view> keys, args;
  Command build(std::string_view head, std::string_view sha_or_body, const std::string& numkeys) const {
    Command c;
    c.reserve(3 + keys.size() + args.size());
    c.add(head).add(sha_or_body).add(numkeys);
    for (auto k : keys) c.add(k);
    for (auto a : args) c.add(a);
    return c;
  }
};

class Waiter final : public LockWaiter {
 public:
  Waiter(std::shared_ptr<Subscriber> s, std::unique_ptr<Subscriber::Interest> i)
      : sub_(std::move(s)), interest_(std::move(i)) {}
  bool wait_until(std::chrono::steady_clock::time_point deadline) override {
    return interest_->wait_until(deadline);
  }

 private:
  std::shared_ptr<Subscriber> sub_;  // outlives interest_
  std::unique_ptr<Subscriber::Interest> interest_;
};

class RedisLockBackend final : public LockBackend {
 public:
  RedisLockBackend(Endpoint ep, int pool_size, std::string key_prefix)
      : pool_(ep, pool_size), sub_(std::make_shared<Subscriber>(ep)), prefix_(std::move(key_prefix)) {}

  AcquireResult try_acquire(std::string_view key, std::string_view owner,
                            std::chrono::milliseconds lease) override {
    std::string lock = lock_key(key);
    std::string fence = lock + ":fence";
    std::string ms = std::to_string(lease.count() > 0 ? lease.count() : 1);
    ScriptCall call{kAcquire, {lock, fence}, {owner, ms}};
    Reply r = run_one(std::move(call), "acquire");
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

  ReleaseResult release(std::string_view key, std::string_view owner) override {
    std::string lock = lock_key(key);
    std::string channel = lock + ":released";
    ScriptCall call{kRelease, {lock}, {owner, channel}};
    Reply r = run_one(std::move(call), "release");
    if (r->type != REDIS_REPLY_INTEGER) bad_reply(r.get(), "release");
    return r->integer == 1 ? ReleaseResult::released : ReleaseResult::lost;
  }

  std::vector<RenewResult> renew_batch(std::span<const RenewItem> items) override {
    std::vector<RenewResult> out;
    if (items.empty()) return out;
    std::deque<std::string> storage;  // stable addresses for the argv views
    std::vector<ScriptCall> calls;
    for (std::size_t i = 0; i < items.size(); i += kRenewChunk) {
      ScriptCall call{kRenew, {}, {}};
      std::size_t end = std::min(items.size(), i + kRenewChunk);
      for (std::size_t j = i; j < end; ++j) {
        call.keys.push_back(storage.emplace_back(lock_key(items[j].key)));
        call.args.push_back(items[j].owner_token);
        call.args.push_back(storage.emplace_back(std::to_string(std::max<long long>(1, items[j].lease.count()))));
      }
      calls.push_back(std::move(call));
    }
    std::vector<Reply> replies = run(calls, "renew");
    out.reserve(items.size());
    for (std::size_t c = 0; c < calls.size(); ++c) {
      const redisReply* r = replies[c].get();
      if (r->type != REDIS_REPLY_ARRAY || r->elements != calls[c].keys.size()) bad_reply(r, "renew");
      for (std::size_t j = 0; j < r->elements; ++j)
        out.push_back(int_at(r, j) == 1 ? RenewResult::owned : RenewResult::lost);
    }
    return out;
  }

  std::unique_ptr<LockWaiter> prepare_wait(std::string_view key) override {
    auto interest = sub_->subscribe(lock_key(key) + ":released");
    return std::make_unique<Waiter>(sub_, std::move(interest));
  }

 private:
  // "{<prefix><key>}": the braces make it a hash tag, so the fencing counter
  // ("{...}:fence") always lands in the same cluster slot.
  std::string lock_key(std::string_view key) const {
    std::string k;
    k.reserve(prefix_.size() + key.size() + 2);
    k += '{';
    k += prefix_;
    k += key;
    k += '}';
    return k;
  }

  Reply run_one(ScriptCall&& call, const char* what) {
    std::vector<ScriptCall> one;
    one.push_back(std::move(call));
    return std::move(run(one, what).front());
  }

  // All calls in one pipelined round trip on one pooled connection (plus one
  // more for EVAL when the server lost its script cache). A reused connection
  // that turns out to be dead (server restarted while it idled) is dropped
  // and the calls are sent once more on a new one.
  std::vector<Reply> run(const std::vector<ScriptCall>& calls, const char* what) {
    for (int attempt = 0;; ++attempt) {
      auto conn = pool_.borrow();
      try {
        return run_on(*conn, calls, what);
      } catch (const IoError&) {
        if (!conn->broken()) throw;
        pool_.drop_idle();
        if (attempt == 0 && !conn.fresh() && conn->last_failure() == IoFailure::closed) continue;
        throw;
      }
    }
  }

  std::vector<Reply> run_on(Connection& conn, const std::vector<ScriptCall>& calls, const char* what) {
    const std::string* shas = script_shas(conn);
    std::vector<std::string> numkeys;
    numkeys.reserve(calls.size());
    std::vector<Command> cmds;
    cmds.reserve(calls.size());
    for (const auto& c : calls) {
      numkeys.push_back(std::to_string(c.keys.size()));
      cmds.push_back(c.build("EVALSHA", shas[c.id], numkeys.back()));
    }
    std::vector<Reply> replies = conn.pipeline(cmds);
    std::vector<std::size_t> missing;
    for (std::size_t i = 0; i < replies.size(); ++i)
      if (is_noscript(replies[i].get())) missing.push_back(i);
    if (!missing.empty()) {
      // The server lost its script cache (restart, SCRIPT FLUSH): EVAL
      // caches the body again under the same SHA.
      std::vector<Command> evals;
      for (auto i : missing) evals.push_back(calls[i].build("EVAL", kScripts[calls[i].id], numkeys[i]));
      std::vector<Reply> again = conn.pipeline(evals);
      for (std::size_t j = 0; j < missing.size(); ++j) replies[missing[j]] = std::move(again[j]);
    }
    for (auto& r : replies)
      if (r->type == REDIS_REPLY_ERROR) bad_reply(r.get(), what);
    return replies;
  }

  // The scripts' SHA1s, from one SCRIPT LOAD round trip the first time.
  const std::string* script_shas(Connection& conn) {
    if (shas_loaded_.load(std::memory_order_acquire)) return shas_;
    std::lock_guard g(sha_mutex_);
    if (!shas_loaded_.load(std::memory_order_relaxed)) {
      std::vector<Command> loads;
      for (const char* body : kScripts) loads.push_back(Command{"SCRIPT", "LOAD", body});
      auto replies = conn.pipeline(loads);
      for (std::size_t i = 0; i < replies.size(); ++i) {
        if (replies[i]->type != REDIS_REPLY_STRING) bad_reply(replies[i].get(), "SCRIPT LOAD");
        shas_[i].assign(replies[i]->str, replies[i]->len);
      }
      shas_loaded_.store(true, std::memory_order_release);
    }
    return shas_;
  }

  Pool pool_;
  std::shared_ptr<Subscriber> sub_;
  std::string prefix_;
  std::mutex sha_mutex_;
  std::atomic<bool> shas_loaded_{false};
  std::string shas_[3];
};

}  // namespace
}  // namespace redis

std::shared_ptr<LockBackend> make_redis_lock_backend(const LockOptions& options) {
  LockUrl url = parse_lock_url(options.url);
  if (url.scheme != "redis") throw ConfigError("'" + options.url + "' is not a redis:// URL");
  redis::Endpoint ep;
  ep.host = url.host.empty() ? "127.0.0.1" : url.host;
  ep.port = url.port > 0 ? url.port : 6379;
  ep.user = url.user;
  ep.password = url.password;
  ep.db = url.db;
  ep.connect_timeout = options.connect_timeout;
  ep.command_timeout = options.command_timeout;
  return std::make_shared<redis::RedisLockBackend>(std::move(ep), options.pool_size, options.key_prefix);
}

}  // namespace weave
