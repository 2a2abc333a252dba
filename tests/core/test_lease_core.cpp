// The one lease under every feature (src/core/lease_core.h, renewer.h): a
// group of leases is renewed in one batch per period, a lease a renewal finds
// gone is lost (its stop token fires, the loss is counted and reported once),
// a store that does not answer is retried until the lease's deadline, and a
// hold deadline stops the renewals. The group here answers from a table in
// this process, as a feature's store would.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/lease_core.h"
#include "core/renewer.h"
#include "weave/held_lease.h"
#include "eventually.h"

using namespace std::chrono_literals;
using weave::detail::LeaseCore;
using weave::detail::Renewer;

namespace {

using Clock = std::chrono::steady_clock;

// Owns the keys in `owned`; counts batches and what each held.
class TableGroup final : public weave::detail::RenewGroup, public std::enable_shared_from_this<TableGroup> {
 public:
  void renew(std::span<LeaseCore* const> leases, std::vector<bool>& owned) const override {
    {
      // Held at the gate: the batch was sent, the store has not read it yet.
      std::unique_lock g(gate_mutex_);
      ++entered_;
      gate_cv_.notify_all();
      gate_cv_.wait(g, [&] { return !gate_closed_; });
    }
    std::lock_guard g(mutex_);
    ++batches_;
    largest_batch_ = std::max(largest_batch_, leases.size());
    if (failing_) throw std::runtime_error("store unreachable");
    owned.clear();
    for (LeaseCore* l : leases) owned.push_back(owned_.count(l->terms().key) != 0);
  }
  std::string_view feature() const noexcept override { return "test"; }
  const weave::EventHook& event_hook() const noexcept override { return hook_; }
  std::shared_ptr<const RenewGroup> owning_ref() const override { return shared_from_this(); }
  // The renewal_failed events the renewer sent: "key: what".
  std::vector<std::string> renewal_failures() const {
    std::lock_guard g(mutex_);
    return renewal_failures_;
  }
  void own(const std::string& key) {
    std::lock_guard g(mutex_);
    owned_.insert(key);
  }
  void take_away(const std::string& key) {
    std::lock_guard g(mutex_);
    owned_.erase(key);
  }
  void fail(bool on) {
    std::lock_guard g(mutex_);
    failing_ = on;
  }
  void close_gate() {
    std::lock_guard g(gate_mutex_);
    gate_closed_ = true;
    entered_at_close_ = entered_;
  }
  void open_gate() {
    std::lock_guard g(gate_mutex_);
    gate_closed_ = false;
    gate_cv_.notify_all();
  }
  // Waits until a batch stands at the closed gate.
  bool batch_waiting(std::chrono::milliseconds within) {
    std::unique_lock g(gate_mutex_);
    return gate_cv_.wait_for(g, within, [&] { return entered_ > entered_at_close_; });
  }
  int batches() const {
    std::lock_guard g(mutex_);
    return batches_;
  }
  std::size_t largest_batch() const {
    std::lock_guard g(mutex_);
    return largest_batch_;
  }

 private:
  mutable std::mutex mutex_;
  std::set<std::string> owned_;
  bool failing_ = false;
  mutable int batches_ = 0;
  mutable std::size_t largest_batch_ = 0;
  mutable std::mutex gate_mutex_;
  mutable std::condition_variable gate_cv_;
  bool gate_closed_ = false;
  mutable int entered_ = 0;
  int entered_at_close_ = 0;
  std::vector<std::string> renewal_failures_;
  const weave::EventHook hook_ = [this](const weave::Event& e) {
    if (e.kind != weave::EventKind::renewal_failed || e.feature != "test") return;
    std::lock_guard g(mutex_);
    renewal_failures_.push_back(std::string(e.key) + ": " + std::string(e.cause));
  };
};

struct TestLease final : LeaseCore, weave::HeldLease {
  explicit TestLease(Terms terms)
      : LeaseCore([&](Terms& t) { t = std::move(terms); }), HeldLease(static_cast<LeaseCore&>(*this)) {}
  using LeaseCore::expires_at;
  using LeaseCore::stop_token;
  std::atomic<int> counted{0}, reported{0};
  std::function<void()> while_reporting;  // runs in the report (set before the lease can be lost)

 private:
  void count_lost() noexcept override { ++counted; }
  void report_lost() noexcept override {
    if (while_reporting) while_reporting();
    ++reported;
  }
};

// A lease with a fixed ttl (never renewed, not watched), sent at `sent`.
std::shared_ptr<TestLease> fixed_ttl(const std::string& key, std::chrono::milliseconds lease, Clock::time_point sent) {
  LeaseCore::Terms terms;
  terms.key = key;
  terms.lease_time = lease;
  terms.acquired_at = sent;
  auto l = std::make_shared<TestLease>(std::move(terms));
  l->set_expires_at(sent + lease);
  return l;
}

// `lent`: the lease borrows `group` (no count); the caller keeps it alive while it holds the lease.
std::shared_ptr<TestLease> hold(const std::shared_ptr<TableGroup>& group, const std::string& key,
                                std::chrono::milliseconds lease, std::chrono::milliseconds max_hold = 0ms,
                                bool lent = false) {
  static std::atomic<int> n{0};
  const Clock::time_point now = Clock::now();
  auto l = std::make_shared<TestLease>(LeaseCore::Terms{
      .key = key,
      .owner = "owner-" + std::to_string(n++),
      .lease_time = lease,
      .renew_every = lease / 3,
      .acquired_at = now,
      .hold_deadline = max_hold > 0ms ? now + max_hold : Clock::time_point::max(),
      .group = lent ? std::shared_ptr<const weave::detail::RenewGroup>(std::shared_ptr<const void>(), group.get())
                    : std::shared_ptr<const weave::detail::RenewGroup>(group),
      .group_lent = lent});
  l->set_expires_at(now + lease);
  group->own(key);
  Renewer::instance().watch(*l, l, /*fresh=*/true);
  return l;
}

using test_support::eventually;

}  // namespace

TEST_CASE("lease core: the leases of a group are renewed together, and outlive their lease while held", "[core][lease]") {
  auto group = std::make_shared<TableGroup>();
  std::vector<std::shared_ptr<TestLease>> leases;
  for (int i = 0; i < 20; ++i) leases.push_back(hold(group, "batch-" + std::to_string(i), 300ms));
  std::this_thread::sleep_for(900ms);  // three leases long
  for (auto& l : leases) {
    CHECK_FALSE(l->lost());
    CHECK(l->remaining() > 0ms);
  }
  CHECK(group->largest_batch() == leases.size());  // one batch for the group, not one per lease
  CHECK(group->batches() <= 12);                   // ~one per 100 ms, however many leases
  for (auto& l : leases) CHECK(l->drop_hold());     // the last hold: released, unwatched
  const int after_release = group->batches();
  std::this_thread::sleep_for(300ms);
  CHECK(group->batches() == after_release);  // nothing renews a released lease
}

TEST_CASE("lease core: a lease a renewal finds gone is lost: its stop token fires, the loss counted and reported once", "[core][lease]") {
  auto group = std::make_shared<TableGroup>();
  auto l = hold(group, "gone", 150ms);
  const std::stop_token token = l->stop_token();
  group->take_away("gone");
  REQUIRE(eventually([&] { return token.stop_requested(); }));
  CHECK(l->lost());
  CHECK_THAT(l->lost_cause(), Catch::Contains("taken by another owner"));
  REQUIRE(eventually([&] { return l->reported.load() == 1; }));  // on the notifier thread
  CHECK(l->counted == 1);
  l->report_lost_once();  // the owner's path reports it too: still once
  CHECK(l->reported == 1);
  CHECK(l->drop_hold());
}

namespace {
// A loss listener's target: counts what it heard.
struct Heard {
  std::atomic<int> times{0};
  std::atomic<std::uint64_t> tag{0};
  static void lost(void* self, std::uint64_t tag) noexcept {
    static_cast<Heard*>(self)->tag = tag;
    ++static_cast<Heard*>(self)->times;
  }
};
}  // namespace

TEST_CASE("lease core: every loss listener hears of the loss once, also one that listens after it", "[core][lease]") {
  SECTION("a renewal finds the lease gone: both listeners (a call and a reentrant one) hear it once") {
    auto group = std::make_shared<TableGroup>();
    auto l = hold(group, "listened", 150ms);
    auto outer = std::make_shared<Heard>(), nested = std::make_shared<Heard>();
    l->listen_for_loss({&Heard::lost, outer, 7});
    l->listen_for_loss({&Heard::lost, nested, 8});
    CHECK(outer->times == 0);
    group->take_away("listened");
    REQUIRE(eventually([&] { return outer->times == 1 && nested->times == 1; }));
    CHECK(outer->tag == 7);  // each told with its own tag (which call of a reused target)
    CHECK(nested->tag == 8);
    CHECK(l->lost());           // the holder's own check fires nothing twice
    l->record_lost("again");  // nor a second loss
    std::this_thread::sleep_for(50ms);
    CHECK(outer->times == 1);
    CHECK(nested->times == 1);
    auto late = std::make_shared<Heard>();
    l->listen_for_loss({&Heard::lost, late});  // lost already: told at once
    CHECK(late->times == 1);
    CHECK(l->drop_hold());
  }
  SECTION("a fixed ttl runs out while held: the renewer, watching it since it was listened to, tells the listener") {
    auto l = fixed_ttl("fixed", 200ms, Clock::now());  // not watched, never renewed
    auto heard = std::make_shared<Heard>();
    l->listen_for_loss({&Heard::lost, heard});
    REQUIRE(eventually([&] { return heard->times == 1; }));
    CHECK(Clock::now() >= l->terms().acquired_at + 200ms);
    CHECK_THAT(l->lost_cause(), Catch::Contains("fixed ttl of 200 ms ran out"));
    CHECK(l->drop_hold());
  }
  SECTION("a lease does not keep its listener alive, and tells one that is gone nothing") {
    auto group = std::make_shared<TableGroup>();
    auto l = hold(group, "outlived", 150ms);
    auto heard = std::make_shared<Heard>();
    const std::weak_ptr<Heard> watch = heard;
    l->listen_for_loss({&Heard::lost, heard});
    heard.reset();
    CHECK(watch.expired());  // (a listener that held its lease would leak both)
    group->take_away("outlived");
    REQUIRE(eventually([&] { return l->is_lost(); }));
    CHECK(l->drop_hold());
  }
  SECTION("a lease released before its loss tells nobody") {
    auto group = std::make_shared<TableGroup>();
    auto l = hold(group, "released", 150ms);
    auto heard = std::make_shared<Heard>();
    l->listen_for_loss({&Heard::lost, heard});
    CHECK(l->drop_hold());
    group->take_away("released");
    std::this_thread::sleep_for(300ms);  // two renewal periods
    CHECK(heard->times == 0);
  }
}

TEST_CASE("lease core: a renewal that meets the holder's last call (a finish, a fill, an ack) does not count the lease lost", "[core][lease]") {
  auto group = std::make_shared<TableGroup>();
  auto l = hold(group, "settled", 300ms);
  group->close_gate();
  REQUIRE(group->batch_waiting(5s));  // a renewal is on its way to the store
  l->settle();                        // the holder sends its last call...
  group->take_away("settled");        // ...which the store runs first: the key is given up
  const int batches = group->batches() + 1;
  group->open_gate();                 // the renewal then finds it gone
  REQUIRE(eventually([&] { return group->batches() >= batches; }));
  std::this_thread::sleep_for(50ms);  // its answer handled
  CHECK_FALSE(l->is_lost());
  CHECK(l->counted == 0);
  CHECK(l->reported == 0);
  CHECK(l->drop_hold());
  std::this_thread::sleep_for(200ms);
  CHECK(group->batches() == batches);  // settled: never renewed again
}

TEST_CASE("lease core: a store that does not answer is retried, and the lease is lost only at its deadline", "[core][lease]") {
  auto group = std::make_shared<TableGroup>();
  // A 3 s lease renewed every second: wide margins for a loaded machine.
  auto l = hold(group, "unreachable", 3s);
  group->fail(true);
  std::this_thread::sleep_for(1500ms);  // past a renewal, within the lease
  CHECK_FALSE(l->lost());
  const int tries = group->batches();
  CHECK(tries >= 2);  // retried, not given up
  // One renewal_failed event for the outage, not one per try.
  REQUIRE(group->renewal_failures().size() == 1);
  CHECK_THAT(group->renewal_failures()[0], Catch::StartsWith("unreachable: its renewal failed (store unreachable)"));
  group->fail(false);
  std::this_thread::sleep_for(3s);  // renewed again once the store answers: past the first deadline
  CHECK_FALSE(l->lost());
  CHECK(group->renewal_failures().size() == 1);

  group->fail(true);
  REQUIRE(eventually([&] { return l->lost(); }));
  CHECK_THAT(l->lost_cause(), Catch::Contains("store unreachable"));
  CHECK(group->renewal_failures().size() == 2);  // the second outage
  CHECK(l->drop_hold());
}

TEST_CASE("lease core: renewals stop at the hold deadline and the lease then runs out", "[core][lease]") {
  auto group = std::make_shared<TableGroup>();
  auto l = hold(group, "held-long", 150ms, 300ms);
  REQUIRE(eventually([&] { return l->lost(); }, 3s));
  CHECK(Clock::now() >= l->terms().acquired_at + 300ms);
  CHECK(l->hold_limit());
  CHECK_THAT(l->lost_cause(), Catch::Contains("max_hold of 300 ms"));
  CHECK(l->drop_hold());
}

TEST_CASE("lease core: a paused holder sees its deadline pass at once, before the renewer comes round", "[core][lease]") {
  LeaseCore::Terms terms;
  terms.key = "paused";
  terms.lease_time = 100ms;
  terms.renew_every = 30ms;
  terms.acquired_at = Clock::now() - 200ms;  // sent two leases ago
  auto l = std::make_shared<TestLease>(std::move(terms));  // never watched: nobody renews it
  l->set_expires_at(l->terms().acquired_at + 100ms);
  const weave::HeldLease& view = *l;
  CHECK(view.stop_token().stop_requested());
  CHECK(view.lost());
  CHECK(view.remaining() == 0ms);
  CHECK_THAT(view.lost_cause(), Catch::Contains("ran out before it was renewed"));
  CHECK(l->counted == 1);

  // After the last release a passed deadline no longer makes it lost.
  auto released = fixed_ttl("released", 100ms, Clock::now() - 101ms);
  CHECK(released->drop_hold());
  CHECK_FALSE(released->lost());
}

TEST_CASE("lease core: leases shared between threads while the renewer renews, loses and reports them leave no entry behind", "[core][lease]") {
  // Mostly for the sanitizers (TSan, ASan): each thread takes renewed
  // (some borrowing their group), max_hold and fixed-ttl leases (the last watched as bare entries by a
  // stop_token()), holds a neighbour's lease too and asks it for a token,
  // while keys are taken away, the store fails now and then, and short
  // leases run out under the renewer.
  auto group = std::make_shared<TableGroup>();
  const std::size_t watched_before = Renewer::instance().size();
  constexpr int kThreads = 4;
  std::atomic<bool> stop{false};
  std::atomic<long> rounds{0}, fired{0};
  std::mutex shared_mutex;
  std::vector<std::shared_ptr<TestLease>> shared(kThreads);  // each thread's current lease, for its neighbour
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (unsigned i = 0; !stop.load(); ++i) {
        const unsigned r = i * 2654435761u + static_cast<unsigned>(t) * 40503u;
        const std::string key = "shared-" + std::to_string(t) + "-" + std::to_string(i);
        std::shared_ptr<TestLease> l;
        if (r % 4 == 0) {  // a fixed ttl: watched only once a token is asked for
          l = fixed_ttl(key, std::chrono::milliseconds(1 + r % 15), Clock::now());
        } else {
          l = hold(group, key, std::chrono::milliseconds(6 + r % 30),
                   r % 4 == 3 ? std::chrono::milliseconds(5 + r % 20) : 0ms, /*lent=*/r % 3 == 0);
        }
        std::stop_callback on_stop(l->stop_token(), [&] { ++fired; });
        std::shared_ptr<TestLease> other;
        {
          std::lock_guard g(shared_mutex);
          shared[t] = l;
          other = shared[(t + 1) % kThreads];
        }
        if (other) {
          const std::stop_token token = other->stop_token();
          if (other->add_hold() == LeaseCore::Hold::added) {
            (void)other->lost();
            std::this_thread::sleep_for(std::chrono::microseconds(r % 3000));
            (void)other->lost_cause();
            other->drop_hold();
          }
          (void)token.stop_requested();
        }
        if (r % 5 == 0) group->take_away(key);
        if (r % 50 == 7) group->fail(i % 2 == 0);
        std::this_thread::sleep_for(std::chrono::microseconds(r % 20000));
        if (l->lost()) l->report_lost_once();
        l->drop_hold();
        ++rounds;
      }
    });
  }
  std::this_thread::sleep_for(2s);
  stop = true;
  for (auto& th : threads) th.join();
  group->fail(false);
  shared.clear();
  INFO("rounds " << rounds.load() << ", stop tokens fired " << fired.load());
  CHECK(rounds.load() > 0);
  CHECK(fired.load() > 0);
  // Every lease was released: none is left watched.
  CHECK(eventually([&] { return Renewer::instance().size() <= watched_before; }));
}

TEST_CASE("lease core: a lease that borrows its group takes no count, and a renewal in flight keeps the group alive after the lender let go", "[core][lease]") {
  auto group = std::make_shared<TableGroup>();
  const std::weak_ptr<TableGroup> alive = group;
  auto l = hold(group, "lent", 300ms, 0ms, /*lent=*/true);
  CHECK(group.use_count() == 1);  // the lease keeps none
  group->close_gate();
  REQUIRE(group->batch_waiting(2s));  // a renewal of the lease stands at the gate
  CHECK(l->drop_hold());              // the lender releases...
  std::shared_ptr<TableGroup> g = std::move(group);
  g.reset();                          // ...and lets go of the group
  CHECK_FALSE(alive.expired());       // the renewal in flight keeps it
  alive.lock()->open_gate();
  CHECK(eventually([&] { return alive.expired(); }));  // and lets go once done
  CHECK(l->reported == 0);  // released before the answer: not a loss
}

TEST_CASE("lease core: a second hold on a lease that borrows its group keeps the group after the lender let go", "[core][lease]") {
  auto group = std::make_shared<TableGroup>();
  const std::weak_ptr<TableGroup> alive = group;
  auto l = hold(group, "lent-twice", 300ms, 0ms, /*lent=*/true);
  REQUIRE(l->add_hold() == LeaseCore::Hold::added);  // another holder, which may outlast the lender
  CHECK_FALSE(l->drop_hold());                        // the lender's hold: not the last
  group.reset();
  REQUIRE_FALSE(alive.expired());
  std::this_thread::sleep_for(400ms);  // renewed meanwhile, through the kept group
  CHECK_FALSE(l->lost());
  CHECK(l->drop_hold());
  l.reset();
  CHECK(eventually([&] { return alive.expired(); }));
}

TEST_CASE("lease core: the loss of a lease that borrows its group is reported with the group kept, after the lender let go", "[core][lease]") {
  auto group = std::make_shared<TableGroup>();
  const std::weak_ptr<TableGroup> alive = group;
  auto l = hold(group, "lent-lost", 150ms, 0ms, /*lent=*/true);
  std::promise<void> let_go;
  std::shared_future<void> lender_gone = let_go.get_future().share();
  std::atomic<int> alive_at_report{-1};
  l->while_reporting = [&] {
    lender_gone.wait();
    alive_at_report = alive.expired() ? 0 : 1;
  };
  group->take_away("lent-lost");
  REQUIRE(eventually([&] { return l->is_lost(); }));  // a renewal found it gone
  CHECK(l->drop_hold());  // the lender releases (once the loss is counted) and lets go of the group before the report runs
  CHECK(l->counted == 1);
  group.reset();
  let_go.set_value();
  REQUIRE(eventually([&] { return l->reported.load() == 1; }));
  CHECK(alive_at_report == 1);
  CHECK(eventually([&] { return alive.expired(); }));
}
