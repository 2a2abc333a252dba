// [[dedupe]] records on Redis (redis://, redis+cluster://, redis+sentinel://)
// through the store layer: one script per step (src/dedupe/scripts/), a
// release channel per key in the record's slot for waiting duplicates.
#include <string>

#include "dedupe/claim_store.h"
#include "dedupe/dedupe_runtime.h"
#include "dedupe/scripts.h"
#include "store/open.h"
#include "weave/error.h"

namespace WEAVE_NAMESPACE::detail {
namespace {

using std::chrono::milliseconds;

class Waiter final : public ClaimWaiter {
 public:
  Waiter(std::shared_ptr<store::Executor> e, std::unique_ptr<store::Subscriber::Interest> i)
      : exec_(std::move(e)), interest_(std::move(i)) {}
  bool wait_until(std::chrono::steady_clock::time_point deadline) override { return interest_->wait_until(deadline); }

 private:
  std::shared_ptr<store::Executor> exec_;  // its subscriber outlives interest_
  std::unique_ptr<store::Subscriber::Interest> interest_;
};

class RedisClaims final : public ClaimStore {
 public:
  RedisClaims(std::shared_ptr<store::Executor> exec, std::string prefix)
      : exec_(std::move(exec)), prefix_(std::move(prefix)) {}

  ClaimOutcome claim(std::string_view key, std::string_view owner, std::string_view match,
                     milliseconds lease) override {
    const std::string k = record_key(key), running = running_record(owner, match);
    const std::string ms = std::to_string(lease.count());
    store::Reply r = run({dedupe_redis::scripts::claim, {k}, {running, ms}}, "dedupe claim");
    ClaimOutcome out;
    if (r->type != REDIS_REPLY_ARRAY || r->elements < 1) store::bad_reply(r.get(), "dedupe claim");
    if (r->element[0]->integer == 1) {
      out.claimed = true;
      return out;
    }
    if (r->elements < 3 || r->element[1]->type != REDIS_REPLY_STRING) store::bad_reply(r.get(), "dedupe claim");
    out.readable = DedupeRecord::decode(std::string_view(r->element[1]->str, r->element[1]->len), out.existing);
    // PTTL 0 (its last millisecond) or below: about to run out, look again soon.
    out.ttl_left = milliseconds(std::max<long long>(1, r->element[2]->integer));
    return out;
  }

  bool finish(std::string_view key, std::string_view owner, std::string_view match, const DedupeRecord& outcome,
              milliseconds window) override {
    const std::string k = record_key(key), running = running_record(owner, match), text = outcome.encode();
    const std::string ms = std::to_string(window.count()), channel = channel_of(key);
    return run({dedupe_redis::scripts::finish, {k}, {running, text, ms, channel}}, "dedupe finish")->integer == 1;
  }

  bool forget(std::string_view key, std::string_view owner, std::string_view match) override {
    const std::string k = record_key(key), running = running_record(owner, match), channel = channel_of(key);
    return run({dedupe_redis::scripts::forget, {k}, {running, channel}}, "dedupe forget")->integer == 1;
  }

  std::vector<bool> renew(std::span<const Renewal> items) override {
    std::vector<std::string> keys, records, leases;
    keys.reserve(items.size());
    records.reserve(items.size());
    leases.reserve(items.size());
    std::vector<store::ScriptCall> calls;
    for (const Renewal& r : items) {
      keys.push_back(record_key(r.key));
      records.push_back(running_record(r.owner, r.match));
      leases.push_back(std::to_string(r.lease.count()));
    }
    for (std::size_t i = 0; i < items.size(); ++i)
      calls.push_back({dedupe_redis::scripts::renew, {keys[i]}, {records[i], leases[i]}});
    std::vector<store::Reply> replies = exec_->run(calls, "dedupe renew");  // one pipeline per node
    std::vector<bool> out;
    for (auto& r : replies) out.push_back(r->type == REDIS_REPLY_INTEGER && r->integer == 1);
    return out;
  }

  std::unique_ptr<ClaimWaiter> prepare_wait(std::string_view key) override {
    return std::make_unique<Waiter>(exec_, exec_->subscribe(channel_of(key)));
  }

 private:
  store::Reply run(store::ScriptCall call, const char* what) {
    std::vector<store::ScriptCall> calls;
    calls.push_back(std::move(call));
    return std::move(exec_->run(calls, what).front());
  }
  std::string record_key(std::string_view key) const {
    std::string k;
    k.reserve(prefix_.size() + key.size() + 2);
    k.append("{").append(prefix_).append(key).append("}");
    return k;
  }
  // In the record's slot: a cluster publishes and subscribes on its node.
  std::string channel_of(std::string_view key) const { return record_key(key) + ":done"; }
  static std::string running_record(std::string_view owner, std::string_view match) {
    return DedupeRecord{'r', std::string(match), std::string(owner)}.encode();
  }

  std::shared_ptr<store::Executor> exec_;
  std::string prefix_;
};

}  // namespace

std::shared_ptr<ClaimStore> make_redis_claims(const DedupeOptions& o) {
  store::ConnectionSettings settings{
      .connect_timeout = o.connect_timeout, .command_timeout = o.command_timeout, .pool_size = o.pool_size};
  return std::make_shared<RedisClaims>(store::open_executor(o.url, settings), o.key_prefix);
}

}  // namespace weave::detail

namespace WEAVE_NAMESPACE {
// Registers the Redis schemes for [[dedupe]] when Weave::dedupe_redis is
// linked: cmake/link/weave_link_dedupe_redis.cpp refers to weave_link_dedupe_redis.
extern "C" WEAVE_API const char weave_link_dedupe_redis = 0;
namespace {
[[maybe_unused]] const bool dedupe_redis_registered = [] {
  for (const char* scheme : {"redis", "redis+cluster", "redis+sentinel"})
    detail::register_claim_store(scheme, [](const DedupeOptions& o) { return detail::make_redis_claims(o); });
  return true;
}();
}  // namespace
}  // namespace weave
