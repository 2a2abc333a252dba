// [[dedupe]] records on Redis (redis://, redis+cluster://, redis+sentinel://)
// through the store layer: the claim is one SET NX GET (or the claim script),
// every other step one script (src/dedupe/scripts/); a release channel per
// key in the record's slot for waiting duplicates.
#include <atomic>
#include <string>

#include "dedupe/claim_store.h"
#include "dedupe/dedupe_runtime.h"
#include "dedupe/direct_claims.h"
#include "dedupe/redis/claim_redis.h"
#include "dedupe/scripts.h"
#include "store/open.h"
#include "store/reply.h"
#include "weave/error.h"

namespace WEAVE_NAMESPACE::detail {
namespace {

using std::chrono::milliseconds;

// Appends "{<prefix><key>}". Its channel is the same + ":done": in the
// record's slot, so a cluster publishes and subscribes on its node.
void record_key(std::string& out, std::string_view prefix, std::string_view key) {
  if (out.capacity() < out.size() + prefix.size() + key.size() + 2)
    out.reserve(out.size() + prefix.size() + key.size() + 2 + 5);
  out.append("{").append(prefix).append(key).append("}");
}
void running_record(std::string& out, std::string_view owner, std::string_view match) {
  DedupeRecord::encode_to(out, 'r', match, owner);
}
// Where finish() keeps when the record's outcome was written, and by which claim.
std::string written_at_key(std::string_view record_key) { return std::string(record_key) + ":at"; }

// A claim's key, running record and lease: SET NX GET's arguments, and the
// claim script's call (views into this: build it in place, keep it while sent).
struct ClaimArgs {
  ClaimArgs(std::string_view prefix, std::string_view key, std::string_view owner, std::string_view match,
            milliseconds lease)
      : ms(lease.count()) {
    record_key(k, prefix, key);
    running_record(running, owner, match);
  }
  ClaimArgs(const ClaimArgs&) = delete;
  store::ScriptCall call() const { return {dedupe_redis::scripts::claim, {k}, {running, ms.view()}}; }
  static ClaimOutcome parse(const store::Reply& reply) {
    const store::ReplyView r(reply, "dedupe claim");
    ClaimOutcome out;
    if (r[0].integer() == 1) {
      out.claimed = true;
      return out;
    }
    out.readable = DedupeRecord::decode(r[1].text(), out.existing);
    // PTTL 0 (its last millisecond) or below: about to run out, look again soon.
    out.ttl_left = milliseconds(std::max<long long>(1, r[2].integer()));
    return out;
  }
  std::string k, running;
  store::NumberArg ms;
};

// The finish script's call (views into this: build it in place).
class FinishCall {
 public:
  FinishCall(std::string_view prefix, std::string_view key, std::string_view owner, std::string_view match,
             const DedupeRecord& outcome, milliseconds window)
      : ms_(window.count()) {
    // One buffer for the key, its channel, the running record and the outcome.
    const std::size_t key_size = prefix.size() + key.size() + 2;
    b_.reserve(2 * key_size + 5 + owner.size() + 2 * match.size() + outcome.rest.size() + 2 * 24);
    record_key(b_, prefix, key);
    b_ += ":done";
    const std::size_t running_at = b_.size();
    running_record(b_, owner, match);
    const std::size_t outcome_at = b_.size();
    DedupeRecord::encode_to(b_, outcome.kind, outcome.match, outcome.rest);
    const std::string_view all(b_);
    k_ = all.substr(0, key_size);
    channel_ = all.substr(0, running_at);
    running_ = all.substr(running_at, outcome_at - running_at);
    text_ = all.substr(outcome_at);
    written_at_ = written_at_key(k_);
  }
  FinishCall(const FinishCall&) = delete;
  store::ScriptCall call() const {
    return {dedupe_redis::scripts::finish, {k_, written_at_}, {running_, text_, ms_.view(), channel_}};
  }
  static bool parse(const store::Reply& reply) { return store::ReplyView(reply, "dedupe finish").integer() == 1; }

 private:
  std::string b_, written_at_;
  std::string_view k_, channel_, running_, text_;
  store::NumberArg ms_;
};

class RedisClaims final : public ClaimStore, public DirectClaimStore {
 public:
  RedisClaims(std::shared_ptr<store::Executor> exec, std::string prefix, bool claim_by_script)
      : exec_(std::move(exec)), prefix_(std::move(prefix)), by_script_(claim_by_script) {}

  // One atomic step, one round trip: SET <record> <running> NX PX <lease> GET
  // (Redis 7: sets the claim only when there is no record, returns the record
  // found). A server that refuses it (before 7.0) gets the claim script from
  // then on.
  ClaimOutcome claim(std::string_view key, std::string_view owner, std::string_view match,
                     milliseconds lease) override {
    const ClaimArgs a(prefix_, key, owner, match, lease);
    if (!by_script_.load(std::memory_order_relaxed)) {
      try {
        const store::Reply reply = exec_->command(
            store::Command{"SET", a.k, a.running, "NX", "PX", a.ms.view(), "GET"}, a.k, "dedupe claim");
        const store::ReplyView r(reply, "dedupe claim");
        ClaimOutcome out;
        if (r.nil()) {
          out.claimed = true;
          return out;
        }
        out.readable = DedupeRecord::decode(r.text(), out.existing);
        return out;  // ttl_left 0: ttl_left(key) asks, only for a duplicate that waits
      } catch (const ReplyError& e) {
        if (e.code() != "ERR" || e.reply().find("syntax") == std::string::npos) throw;
        by_script_.store(true, std::memory_order_relaxed);  // SET NX GET needs Redis 7.0
      }
    }
    return ClaimArgs::parse(store::run_one(*exec_, a.call(), "dedupe claim"));
  }

  // The claim script (one round trip like SET NX GET, and it says the
  // record's time left).
  std::unique_ptr<store::DirectRequest<ClaimOutcome>> direct_claim(std::string_view key, std::string_view owner,
                                                                   std::string_view match,
                                                                   milliseconds lease) override {
    return std::make_unique<store::DirectCall<ClaimOutcome, ClaimArgs>>(*exec_, "dedupe claim", prefix_, key, owner,
                                                                        match, lease);
  }

  std::unique_ptr<store::DirectRequest<bool>> direct_finish(std::string_view key, std::string_view owner,
                                                            std::string_view match, const DedupeRecord& outcome,
                                                            milliseconds window) override {
    return std::make_unique<store::DirectCall<bool, FinishCall>>(*exec_, "dedupe finish", prefix_, key, owner, match,
                                                                 outcome, window);
  }

  std::optional<ClaimOutcome> read(std::string_view key) override {
    std::string k;
    record_key(k, key);
    const std::string written_at = written_at_key(k);
    const store::Reply reply = store::run_one(*exec_, {dedupe_redis::scripts::read, {k, written_at}, {}}, "dedupe read");
    const store::ReplyView r(reply, "dedupe read");
    if (r.size() != 3) r.unexpected();
    if (r[0].nil()) return std::nullopt;
    ClaimOutcome out;
    out.readable = DedupeRecord::decode(r[0].text(), out.existing);
    out.ttl_left = milliseconds(std::max<long long>(0, r[1].integer()));
    if (const long long age = r[2].integer(); age >= 0) out.age = milliseconds(age);
    return out;
  }

  milliseconds ttl_left(std::string_view key) override {
    std::string k;
    record_key(k, key);
    const long long pttl =
        store::ReplyView(exec_->command(store::Command{"PTTL", k}, k, "dedupe ttl"), "dedupe ttl").integer();
    if (pttl == -1) return milliseconds(0);  // no TTL: not a record of ours (unknown)
    // Gone (-2), or in its last millisecond (0): look again soon.
    return milliseconds(std::max<long long>(1, pttl));
  }

  bool finish(std::string_view key, std::string_view owner, std::string_view match, const DedupeRecord& outcome,
              milliseconds window) override {
    const FinishCall f(prefix_, key, owner, match, outcome, window);
    return FinishCall::parse(store::run_one(*exec_, f.call(), "dedupe finish"));
  }

  bool forget(std::string_view key, std::string_view owner, std::string_view match) override {
    std::string b;
    record_key(b, key);
    const std::size_t key_size = b.size();
    b += ":done";
    const std::size_t running_at = b.size();
    running_record(b, owner, match);
    const std::string_view all(b), k = all.substr(0, key_size), channel = all.substr(0, running_at),
                               running = all.substr(running_at);
    return store::ReplyView(store::run_one(*exec_, {dedupe_redis::scripts::forget, {k}, {running, channel}}, "dedupe forget"),
                            "dedupe forget")
               .integer() == 1;
  }

  std::vector<bool> renew(std::span<const Renewal> items) override {
    std::vector<std::string> keys(items.size()), records(items.size()), leases;
    leases.reserve(items.size());
    std::vector<store::ScriptCall> calls;
    for (std::size_t i = 0; i < items.size(); ++i) {
      record_key(keys[i], items[i].key);
      running_record(records[i], items[i].owner, items[i].match);
      leases.push_back(std::to_string(items[i].lease.count()));
    }
    for (std::size_t i = 0; i < items.size(); ++i)
      calls.push_back({dedupe_redis::scripts::renew, {keys[i]}, {records[i], leases[i]}});
    std::vector<store::Reply> replies = exec_->run(calls, "dedupe renew");  // one pipeline per node
    std::vector<bool> out;
    for (auto& r : replies) {
      const store::ReplyView v(r, "dedupe renew");
      out.push_back(v.is_integer() && v.integer() == 1);
    }
    return out;
  }

  std::unique_ptr<ClaimWaiter> prepare_wait(std::string_view key) override {
    std::string channel;
    record_key(channel, key);
    channel += ":done";
    return std::make_unique<store::ChangeSubscription>(exec_, channel);
  }

 private:
  void record_key(std::string& out, std::string_view key) const { detail::record_key(out, prefix_, key); }

  std::shared_ptr<store::Executor> exec_;
  std::string prefix_;
  std::atomic<bool> by_script_;  // claim with the script (SET NX GET refused, or asked for)
};

}  // namespace

std::shared_ptr<ClaimStore> make_redis_claims(const DedupeOptions& o, bool claim_by_script) {
  return std::make_shared<RedisClaims>(store::open_executor(o.url, store::connection_settings(o)), o.key_prefix,
                                       claim_by_script);
}

}  // namespace weave::detail

namespace WEAVE_NAMESPACE {
// Registers the Redis schemes for [[dedupe]] when Weave::dedupe_redis is
// linked: its static targets name weave_link_dedupe_redis (-u: REGISTERS in src/CMakeLists.txt).
extern "C" const char weave_link_dedupe_redis = 0;
namespace {
[[maybe_unused]] const bool dedupe_redis_registered = [] {
  for (const char* scheme : store::executor_schemes)
    detail::register_claim_store(scheme, [](const DedupeOptions& o) { return detail::make_redis_claims(o); });
  return true;
}();
}  // namespace
}  // namespace weave
