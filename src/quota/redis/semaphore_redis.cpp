// Semaphores on Redis: for key K, five keys in one slot around
// S = "{<prefix>sem:<K>}" (holders; :fence, :tokens, :line, :line:until) and
// the channel S:free, on which a release announces its grant to the first
// waiter ("<owner> <token>") or wakes the line ("1"). Every step is one
// script (src/quota/scripts/permit_*.lua) on the server's clock.
#include <algorithm>
#include <charconv>
#include <string>
#include <vector>

#include "quota/redis/redis_stores.h"
#include "quota/scripts.h"
#include "store/open.h"
#include "store/reply.h"

namespace WEAVE_NAMESPACE::detail {
namespace {

// A semaphore's key names (a ScriptCall views them: keep this while sent).
struct SemaphoreKeys {
  SemaphoreKeys(std::string_view prefix, std::string_view key) {
    holders.reserve(prefix.size() + key.size() + 7);
    holders.append("{").append(prefix).append("sem:").append(key).append("}");
    fence = holders + ":fence";
    tokens = holders + ":tokens";
    line = holders + ":line";
    places = holders + ":line:until";
    channel = holders + ":free";
  }
  std::string holders, fence, tokens, line, places, channel;
};

// A waiter over the key's channel. A message granting its owner a permit is
// taken as the grant (no request); one granting another waiter is no
// reason to ask (waited through). Anything else wakes it: a wake-up of the
// line, several messages at once, a reconnection (a grant may have been
// missed: the next acquire() returns it).
class PermitSubscription final : public store::SubscriptionWaiter<PermitWaiter> {
 public:
  PermitSubscription(std::shared_ptr<store::Executor> exec, const std::string& channel, std::string_view owner)
      : SubscriptionWaiter(std::move(exec), channel), owner_(owner) {}

  bool wait_until(std::chrono::steady_clock::time_point deadline) override {
    for (;;) {
      std::string message;
      if (!interest().wait_until(deadline, &message)) return false;
      if (!someone_elses_grant(message)) return true;
    }
  }
  bool wake_on_change(std::function<void()> wake) override {
    interest().on_change(std::move(wake));
    return true;
  }
  std::optional<std::uint64_t> take_grant() override {
    // The change that woke a coroutine (wake_on_change) is still unread.
    std::string message;
    if (interest().wait_until(std::chrono::steady_clock::now(), &message)) someone_elses_grant(message);
    return std::exchange(grant_, std::nullopt);
  }

 private:
  // Keeps the token of a grant to this owner; true for a grant to another.
  bool someone_elses_grant(std::string_view message) {
    const std::size_t space = message.rfind(' ');
    if (space == std::string_view::npos) return false;
    if (message.substr(0, space) != owner_) return true;
    std::uint64_t token = 0;
    const std::string_view digits = message.substr(space + 1);
    if (std::from_chars(digits.data(), digits.data() + digits.size(), token).ec == std::errc()) grant_ = token;
    return false;
  }
  std::string owner_;
  std::optional<std::uint64_t> grant_;
};

class RedisSemaphores final : public SemaphoreStore {
 public:
  RedisSemaphores(std::shared_ptr<store::Executor> exec, std::string prefix)
      : exec_(std::move(exec)), prefix_(std::move(prefix)) {}

  PermitGrant acquire(const PermitRequest& r) override {
    const SemaphoreKeys k(prefix_, r.key);
    const store::NumberArg permits(r.permits), lease(r.lease.count()), place(r.place.count());
    const store::Reply reply = store::run_one(
        *exec_,
        {quota_redis::scripts::permit_acquire, {k.holders, k.fence, k.tokens, k.line, k.places},
         {r.owner, permits.view(), lease.view(), place.view(), k.channel}},
        "semaphore acquire");
    const store::ReplyView v(reply, "semaphore acquire");
    PermitGrant g;
    g.granted = v[0].integer() == 1;
    if (g.granted)
      g.fencing_token = static_cast<std::uint64_t>(v[1].integer());
    else
      g.retry_in = std::chrono::milliseconds(std::max<long long>(1, v[1].integer()));
    g.reclaimed = static_cast<std::uint32_t>(v[2].integer());
    return g;
  }

  std::vector<bool> renew(std::span<const Renewal> items) override {
    std::vector<SemaphoreKeys> keys;
    std::vector<store::NumberArg> leases;
    keys.reserve(items.size());
    leases.reserve(items.size());
    std::vector<store::ScriptCall> calls;
    for (const Renewal& r : items) {
      keys.emplace_back(prefix_, r.key);
      leases.emplace_back(r.lease.count());
    }
    for (std::size_t i = 0; i < items.size(); ++i)
      calls.push_back({quota_redis::scripts::permit_renew, {keys[i].holders, keys[i].fence, keys[i].tokens},
                       {items[i].owner, leases[i].view()}});
    const std::vector<store::Reply> replies = exec_->run(calls, "semaphore renew");  // one pipeline per node
    std::vector<bool> out;
    for (const store::Reply& r : replies) out.push_back(store::ReplyView(r, "semaphore renew").integer() == 1);
    return out;
  }

  bool release(const PermitRequest& r) override {
    return store::ReplyView(give_back(quota_redis::scripts::permit_release, r, "semaphore release"),
                            "semaphore release")
               .integer() == 1;
  }

  void leave_line(const PermitRequest& r) override {
    give_back(quota_redis::scripts::permit_leave, r, "semaphore leave line");
  }

  std::unique_ptr<PermitWaiter> prepare_wait(std::string_view key, std::string_view owner) override {
    return std::make_unique<PermitSubscription>(exec_, SemaphoreKeys(prefix_, key).channel, owner);
  }

  std::vector<SemaphoreState> list(std::string_view pattern) override {
    const std::vector<std::string> keys = stored_quota_keys(*exec_, prefix_, "sem", pattern, "list semaphores");
    std::vector<SemaphoreState> out;
    constexpr std::size_t kChunk = 500;  // inspections per pipelined round trip
    for (std::size_t from = 0; from < keys.size(); from += kChunk) {
      std::vector<SemaphoreKeys> names;  // (a ScriptCall views its keys)
      names.reserve(kChunk);
      for (std::size_t i = from; i < std::min(keys.size(), from + kChunk); ++i) names.emplace_back(prefix_, keys[i]);
      std::vector<store::ScriptCall> calls;
      for (const SemaphoreKeys& n : names)
        calls.push_back({quota_redis::scripts::permit_inspect, {n.holders, n.tokens, n.line, n.places}, {}});
      const std::vector<store::Reply> replies = exec_->run(calls, "list semaphores");
      for (std::size_t i = 0; i < replies.size(); ++i) {
        const store::ReplyView v(replies[i], "list semaphores");
        SemaphoreState st;
        st.key = keys[from + i];
        st.waiting = static_cast<std::size_t>(v[0].integer());
        for (std::size_t j = 1; j + 2 < v.size(); j += 3)  // owner, ms left, token
          st.holders.push_back({std::string(v[j].text()), static_cast<std::uint64_t>(v[j + 2].integer()),
                                std::chrono::milliseconds(v[j + 1].integer())});
        if (!st.holders.empty() || st.waiting > 0) out.push_back(std::move(st));
      }
    }
    return out;
  }

 private:
  // permit_release.lua or permit_leave.lua (the same keys and arguments).
  store::Reply give_back(const char* script, const PermitRequest& r, const char* what) {
    const SemaphoreKeys k(prefix_, r.key);
    const store::NumberArg permits(r.permits), place(r.place.count());
    return store::run_one(*exec_,
                          {script, {k.holders, k.fence, k.tokens, k.line, k.places},
                           {r.owner, permits.view(), place.view(), k.channel}},
                          what);
  }

  std::shared_ptr<store::Executor> exec_;
  std::string prefix_;
};

}  // namespace

std::shared_ptr<SemaphoreStore> make_redis_semaphores(const QuotaOptions& o) {
  return std::make_shared<RedisSemaphores>(store::open_executor(o.url, store::connection_settings(o)), o.key_prefix);
}

}  // namespace weave::detail
