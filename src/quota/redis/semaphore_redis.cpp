// Semaphores on Redis: for key K, five keys in one slot around
// S = "{<prefix>sem:<K>}" (holders; :fence, :tokens, :line, :line:until) and
// the channel S:free, on which a release announces its grant to the first
// waiter ("<owner> <token>") or wakes the line ("1"). A thread that waits on
// a connection of its own (its owner ends in '+') is told the same in its
// inbox, the list S:inbox:<owner>, and wakes straight from its BLPOP. Every
// step is one script (src/quota/scripts/permit_*.lua) on the server's clock.
#include <algorithm>
#include <atomic>
#include <charconv>
#include <string>
#include <thread>
#include <vector>

#include "quota/redis/redis_stores.h"
#include "quota/scripts.h"
#include "store/open.h"
#include "store/reply.h"
#include "weave/error.h"

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
  std::string inbox(std::string_view owner) const { return holders + ":inbox:" + std::string(owner); }
  std::string holders, fence, tokens, line, places, channel;
};

// A message of a release or a wake-up: "<owner> <token>" grants owner a
// permit (its fencing token), anything else wakes.
struct PermitMessage {
  explicit PermitMessage(std::string_view message) {
    const std::size_t space = message.rfind(' ');
    if (space == std::string_view::npos) return;
    owner = message.substr(0, space);
    const std::string_view digits = message.substr(space + 1);
    std::uint64_t t = 0;
    if (std::from_chars(digits.data(), digits.data() + digits.size(), t).ec == std::errc()) token = t;
  }
  std::string_view owner;
  std::optional<std::uint64_t> token;  // a grant to `owner`
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
    const PermitMessage m(message);
    if (m.owner.empty()) return false;
    if (m.owner != owner_) return true;
    if (m.token) grant_ = m.token;
    return false;
  }
  std::string owner_;
  std::optional<std::uint64_t> grant_;
};

// A thread's waiter on its own connection, blocked in a pop of its inbox:
// a release's grant wakes this thread directly (no reader thread, no
// subscription), and a grant pushed while no pop was pending waits in the
// list. A failed pop (a cut connection, a moved slot, a failover) is a
// wake-up: the next request learns what it missed (a grant is returned to
// the holder asking again), and the next wait pops on a new connection.
// Without one (none to be had, the ACL refuses BLPOP: a rule from before it
// was needed, or the key's slot migrating), the thread sleeps to its next
// request.
class InboxWaiter final : public PermitWaiter {
 public:
  // `pops_refused` is the store's: set here once the server refuses BLPOP,
  // so that later waiters subscribe instead.
  InboxWaiter(std::shared_ptr<store::Executor> exec, std::string inbox, std::unique_ptr<store::BlockingPop> pop,
              std::shared_ptr<std::atomic<bool>> pops_refused)
      : exec_(std::move(exec)), inbox_(std::move(inbox)), pop_(std::move(pop)), pops_refused_(std::move(pops_refused)) {}

  bool wait_until(std::chrono::steady_clock::time_point deadline) override {
    if (!pop_ && !refused_) {
      try {
        pop_ = exec_->blocking_pop(inbox_);
      } catch (const Error&) {
      }
    }
    if (!pop_) {
      std::this_thread::sleep_until(deadline);
      return false;
    }
    std::optional<std::string> message;
    try {
      message = pop_->pop_until(deadline);
    } catch (const ReplyError& e) {
      pop_.reset();
      if (e.code() == "NOPERM") {  // the ACL: not asked again
        refused_ = true;
        *pops_refused_ = true;
      } else if (e.code() == "ASK" || e.code() == "TRYAGAIN") {
        // The slot is migrating: the map still names the old node, and a
        // pop there would be sent back at once. Wait out this turn instead.
        std::this_thread::sleep_until(deadline);
        return false;
      }
      return true;  // (MOVED, a failover: routed anew at the next wait)
    } catch (const Error&) {
      pop_.reset();
      return true;
    }
    if (!message) return false;
    grant_ = PermitMessage(*message).token;
    return true;
  }
  std::optional<std::uint64_t> take_grant() override { return std::exchange(grant_, std::nullopt); }

 private:
  std::shared_ptr<store::Executor> exec_;
  std::string inbox_;
  std::unique_ptr<store::BlockingPop> pop_;
  std::shared_ptr<std::atomic<bool>> pops_refused_;
  bool refused_ = false;  // the server's ACL refuses BLPOP: not asked again
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

  std::unique_ptr<PermitWaiter> prepare_wait(std::string_view key, std::string& owner, WaitOn how) override {
    const SemaphoreKeys k(prefix_, key);
    if (how == WaitOn::this_thread && !*pops_refused_) {
      owner += '+';  // (tried first: the inbox's name has the mark)
      std::string inbox = k.inbox(owner);
      std::unique_ptr<store::BlockingPop> pop;
      try {
        pop = exec_->blocking_pop(inbox);
      } catch (const Error&) {
        // No connection now: the subscription (the next request reports the failure).
      }
      if (pop) return std::make_unique<InboxWaiter>(exec_, std::move(inbox), std::move(pop), pops_refused_);
      owner.pop_back();
    }
    return std::make_unique<PermitSubscription>(exec_, k.channel, owner);
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
  // The server refused a waiter's BLPOP (InboxWaiter): threads wait on the subscription.
  std::shared_ptr<std::atomic<bool>> pops_refused_ = std::make_shared<std::atomic<bool>>(false);
};

}  // namespace

std::shared_ptr<SemaphoreStore> make_redis_semaphores(const QuotaOptions& o) {
  return std::make_shared<RedisSemaphores>(store::open_executor(o.url, store::connection_settings(o)), o.key_prefix);
}

}  // namespace weave::detail
