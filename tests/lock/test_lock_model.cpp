// The lock backends against a reference model: random sequences of acquire,
// release, renew_batch, force_release, resent requests and pauses on 3 keys
// and 4 owners (reentrant leases of 50-400 ms, so leases run out during the
// run), each answer checked against what a small model of the keys allows.
// Built once per store by weave_add_store_suite(lock_model <store>)
// (tests/lock/CMakeLists.txt): the store is tests/stores/<store>_store.cpp's.
//
// Time is real: a Redis server expires leases on its own clock. A request ran
// at some instant between its send and its reply (its Window), so the model
// knows when a lease ends only within [send + lease - margin, reply + lease +
// margin]. Where the answer depends on an instant inside that uncertainty,
// either answer is accepted and the model follows the backend's.
//
// AcquireRequest::now and ReleaseRequest::now matter on mem:// only: when set,
// mem:// decides at that instant instead of reading its clock (a networked
// backend ignores them). Requests here carry their send time, as LockClient's
// do, and a resend carries its first send's unchanged, so mem:// judges a
// resend at that earlier instant (its lease ends that much sooner): on mem://
// a window starts at the request's `now`, elsewhere at the send.
//
// Properties (the model's messages name them):
//   1. never two holders: no grant to another owner while the holder's lease
//      surely runs;
//   2. fencing tokens: a new grant's token is above every token of the key
//      handed out before, forced releases included; the holder's acquire
//      refreshes its lease and returns its token;
//   3. release by the holder while its lease surely runs: released; by
//      anyone else or after the lease surely ended: lost. Renewal of a lease
//      surely held: owned; of one surely ended, released or forced: lost. A
//      forced release reports the lease it dropped and raises the counter
//      above every token handed out;
//   4. a resend (the last request sent again unchanged, as by a client whose
//      first send timed out; only time passes in between) gets the same
//      answer as the first send (after another resend: as that one) unless
//      a lease it depends on may have ended in between; then the model's
//      checks decide. Idempotent this way, and resent in the random runs:
//        acquire           granted: the same token again while the lease
//                          surely runs; refused: refused again while the
//                          holder's lease surely runs;
//        renew_batch       each item as before while its lease surely runs;
//                          lost stays lost;
//        release           lost: lost again; released: released again (the
//                          backend keeps the last owner that released in
//                          time), and the key's state is unchanged.
//      (force_release is not resent here: two calls are two operator
//      commands; the store layer's resend of one request is answered as its
//      first send, tested in test_redis_backend.cpp.)
//
// A failure prints the seed and every step so far with its window (ms since
// the run began) and answer. Seeds are fixed (GENERATE below); the steps a
// seed makes also follow the answers (an owner is often the model's holder),
// so the printed steps, not the seed alone, are the exact sequence.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <span>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "suite_store.h"
#include "test_support.h"
#include "weave/lock.h"
#include "weave/lock_backend.h"

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using lock_test::unique_key;

namespace {

using Store = lock_test::SuiteStore;

// How far a backend's moment of expiry may stray from the model's interval:
// mem:// counts in steady_clock nanoseconds (only rounding); Redis in whole
// milliseconds of its own clock.
const milliseconds kMargin = test_store_is_mem() ? 2ms : 25ms;

weave::LockOptions options_for() {
  weave::LockOptions o;
  o.url = Store::url();
  Store::tune(o);
  // Redis: a key's fencing counter outlives its last lease by this little, so
  // counters expire during the run and tokens must keep increasing across
  // that (docs/redis.md, "Fencing tokens"). mem:// ignores it.
  o.key_grace = 150ms;
  return o;
}

// A request ran at some instant in [from, to].
struct Window {
  Clock::time_point from, to;
};

// What the model knows of one key.
struct KeyModel {
  std::string holder;                    // "" = free
  std::uint64_t token = 0;               // the holder's fencing token
  Clock::time_point ends_min, ends_max;  // the holder's lease ends in between
  std::uint64_t highest = 0;             // the highest token seen: grants and forced releases

  bool surely_held(const Window& w) const { return !holder.empty() && ends_min > w.to; }
  bool surely_free(const Window& w) const { return holder.empty() || ends_max <= w.from; }
  void lease_for(milliseconds lease, const Window& w) {
    ends_min = w.from + lease - kMargin;
    ends_max = w.to + lease + kMargin;
  }
};

// The reference model: one function per operation checks an answer and then
// follows it. `failures` names each broken property.
class Model {
 public:
  std::vector<std::string> failures;
  // How often each case the model pins down to one answer came up (the
  // random test requires every one of them).
  std::map<std::string, int> seen;

  KeyModel& key(std::string_view k) { return keys_[std::string(k)]; }

  void acquire(const weave::AcquireRequest& r, const weave::AcquireResult& a, const Window& w) {
    KeyModel& k = key(r.key);
    const bool mine = k.holder == r.owner_token;
    if (!a.acquired) {
      expect(!mine && !k.surely_free(w), "acquire: refused though no other owner's lease could still run");
      if (k.surely_held(w)) saw("refused while another owner's lease surely ran");
      // (1 ms: mem:// rounds the time left up, Redis's PTTL down)
      expect(a.holder_ttl_left <= k.ends_max - w.from + 1ms, "acquire: holder_ttl_left is at most the lease left");
      expect(a.holder_ttl_left >= k.ends_min - w.to - 1ms, "acquire: holder_ttl_left is at least the lease left");
      return;  // (the holder's lease ran at some instant of w: nothing to follow)
    }
    if (mine && a.fencing_token == k.token) {  // a refresh
      expect(!k.surely_free(w), "2. a lease that surely ended came back with its old token, not a new one");
      if (k.surely_held(w)) saw("the holder's acquire refreshed its lease");
    } else {  // a new lease
      if (!k.holder.empty() && k.surely_free(w)) saw("granted anew after the holder's lease surely ended");
      expect(!k.surely_held(w), mine ? "2. the holder's acquire got a new token while its lease surely ran"
                                     : "1. granted to another owner while the holder's lease surely ran");
      expect(a.fencing_token > k.highest, "2. a new lease's token is above every token of the key before");
    }
    k.holder = r.owner_token;
    k.token = a.fencing_token;
    k.highest = std::max(k.highest, a.fencing_token);
    k.lease_for(r.lease, w);
  }

  void release(const weave::ReleaseRequest& r, weave::ReleaseResult result, const Window& w) {
    KeyModel& k = key(r.key);
    const bool released = result == weave::ReleaseResult::released;
    if (k.holder != r.owner_token) {
      expect(!released, "3. a release by an owner that does not hold the key is lost");
      return;
    }
    if (k.surely_held(w)) {
      expect(released, "3. the holder's release while its lease surely runs is released");
      saw("released by the holder");
    }
    if (k.surely_free(w)) expect(!released, "3. a release after the lease surely ended is lost");
    k.holder.clear();  // released now, or it had run out
  }

  void renew(std::span<const weave::RenewItem> items, const std::vector<weave::RenewResult>& results,
             const Window& w) {
    expect(results.size() == items.size(), "renew_batch answers once per item");
    for (std::size_t i = 0; i < std::min(items.size(), results.size()); ++i) {
      KeyModel& k = key(items[i].key);
      const bool owned = results[i] == weave::RenewResult::owned;
      if (k.holder != items[i].owner_token) {
        expect(!owned, "3. renewing a lease the owner does not hold (released, forced, another's) is lost");
        continue;
      }
      if (k.surely_held(w)) {
        expect(owned, "3. renewing a lease that surely runs is owned");
        saw("renewed by the holder");
      }
      if (k.surely_free(w)) {
        expect(!owned, "3. renewing a lease that surely ended is lost");
        saw("renewal of a lease that surely ended");
      }
      if (owned)
        k.lease_for(items[i].lease, w);
      else
        k.holder.clear();
    }
  }

  void force_release(std::string_view key_name, const weave::ForcedRelease& f, const Window& w) {
    KeyModel& k = key(key_name);
    expect(f.fence > k.highest, "3. a forced release raises the counter above every token handed out");
    const bool names_holder =
        f.freed.size() == 1 && f.freed[0].owner == k.holder && f.freed[0].fencing_token == k.token;
    if (k.surely_held(w)) {
      expect(names_holder, "3. a forced release reports the lease it dropped");
      saw("forced release of a held key");
    }
    if (k.surely_free(w)) expect(f.freed.empty(), "3. a forced release of a free key reports nothing freed");
    expect(f.freed.empty() || names_holder, "3. a forced release reports no lease but the holder's");
    k.holder.clear();
    k.highest = std::max(k.highest, f.fence);
  }

 private:
  void expect(bool ok, const char* property) {
    if (!ok) failures.emplace_back(property);
  }
  void saw(const char* what) { ++seen[what]; }
  std::map<std::string, KeyModel, std::less<>> keys_;
};

// The last request sent, with the answer its last send got: what a resend
// sends again and must answer alike.
struct Sent {
  enum class Kind { none, acquire, release, renew, force } kind = Kind::none;
  weave::AcquireRequest acquire;
  weave::AcquireResult acquired;
  weave::ReleaseRequest release;
  weave::ReleaseResult released{};
  std::vector<weave::RenewItem> renew;
  std::vector<weave::RenewResult> renewed;
  // The idempotent ones (see the top of the file).
  bool resendable() const {
    return kind == Kind::acquire || kind == Kind::renew || kind == Kind::release;
  }
};

// One random run: `steps` operations on fresh keys, stopping at the first
// broken property (or exception). `log` gets every step.
class Run {
 public:
  Run(weave::LockBackend& backend, std::uint32_t seed) : backend_(backend), rng_(seed) {
    for (int i = 0; i < 3; ++i) keys_.push_back(unique_key("model-k" + std::to_string(i)));
    for (const char* o : {"owner-A", "owner-B", "owner-C", "owner-D"}) owners_.emplace_back(o);
  }

  // The model after the run: model.failures names the broken properties
  // (none: every answer was allowed).
  const Model& go(int steps, std::ostringstream& log) {
    try {
      for (int i = 0; i < steps && model_.failures.empty(); ++i) step(log);
    } catch (const std::exception& e) {
      model_.failures.push_back(std::string("threw: ") + e.what());
    }
    return model_;
  }

 private:
  void step(std::ostringstream& log) {
    const int roll = pick(0, 99);
    if (roll < 30 || (roll >= 65 && roll < 80 && !last_.resendable())) {
      const std::string& k = any(keys_);
      weave::AcquireRequest r{k, owner_for(k), lease()};
      r.now = Clock::now();
      const Window w = window(r.now, [&] { last_.acquired = backend_.acquire(r); });
      log << at(w) << "acquire " << name(r.key) << ' ' << r.owner_token << ' ' << r.lease.count() << "ms -> "
          << str(last_.acquired) << '\n';
      model_.acquire(r, last_.acquired, w);
      last_.kind = Sent::Kind::acquire;
      last_.acquire = r;
    } else if (roll < 45) {
      const std::string& k = any(keys_);
      weave::ReleaseRequest r{k, owner_for(k)};
      r.now = Clock::now();
      const Window w = window(r.now, [&] { last_.released = backend_.release(r); });
      log << at(w) << "release " << name(r.key) << ' ' << r.owner_token << " -> " << str(last_.released) << '\n';
      model_.release(r, last_.released, w);
      if (last_.released == weave::ReleaseResult::released) released(r.owner_token, r.key);
      last_.kind = Sent::Kind::release;
      last_.release = r;
    } else if (roll < 60) {
      last_.renew.clear();
      for (int n = pick(1, 3); n > 0; --n) {
        const std::string& k = any(keys_);
        last_.renew.push_back({k, owner_for(k), lease()});
      }
      const Window w = window({}, [&] { last_.renewed = backend_.renew_batch(last_.renew); });
      log << at(w) << "renew" << str(last_.renew) << " -> " << str(last_.renewed) << '\n';
      model_.renew(last_.renew, last_.renewed, w);
      last_.kind = Sent::Kind::renew;
    } else if (roll < 65) {
      const std::string& k = any(keys_);
      weave::ForcedRelease f;
      const Window w = window({}, [&] { f = backend_.force_release(k); });
      log << at(w) << "force_release " << name(k) << " -> fence " << f.fence << " freed";
      for (const weave::LockHolder& h : f.freed) log << ' ' << h.owner << '/' << h.fencing_token;
      log << '\n';
      model_.force_release(k, f, w);
      last_.kind = Sent::Kind::force;
    } else if (roll < 80) {
      resend(log);
    } else {
      const milliseconds pause{pick(0, 300)};
      std::this_thread::sleep_for(pause);
      log << "  sleep " << pause.count() << "ms\n";
    }
  }

  // The last request again, unchanged (an acquire or release keeps its first
  // send's `now`). Property 4: the answer the send before it got, unless a
  // lease it depends on may have ended in between; then the model's own
  // checks decide.
  void resend(std::ostringstream& log) {
    if (last_.kind == Sent::Kind::acquire) {
      const weave::AcquireRequest& r = last_.acquire;
      weave::AcquireResult a;
      const Window w = window(r.now, [&] { a = backend_.acquire(r); });
      log << at(w) << "RESEND acquire " << name(r.key) << ' ' << r.owner_token << " -> " << str(a) << '\n';
      if (model_.key(r.key).surely_held(w)) {
        ++model_.seen["resend answered while its lease surely ran"];
        if (a.acquired != last_.acquired.acquired || a.fencing_token != last_.acquired.fencing_token)
          model_.failures.emplace_back("4. a resent acquire gets the last answer while the lease surely runs");
      }
      model_.acquire(r, a, w);
      last_.acquired = a;
    } else if (last_.kind == Sent::Kind::renew) {
      std::vector<weave::RenewResult> again;
      const Window w = window({}, [&] { again = backend_.renew_batch(last_.renew); });
      log << at(w) << "RESEND renew" << str(last_.renew) << " -> " << str(again) << '\n';
      for (std::size_t i = 0; i < last_.renew.size() && i < again.size(); ++i) {
        const KeyModel& k = model_.key(last_.renew[i].key);
        const bool settled = k.holder != last_.renew[i].owner_token || k.surely_held(w);
        if (k.holder == last_.renew[i].owner_token && k.surely_held(w))
          ++model_.seen["resend answered while its lease surely ran"];
        if (settled && again[i] != last_.renewed[i])
          model_.failures.emplace_back("4. a resent renewal gets the last answer while the lease surely runs");
      }
      model_.renew(last_.renew, again, w);
      last_.renewed = again;
    } else {
      const weave::ReleaseRequest& r = last_.release;
      weave::ReleaseResult again{};
      const Window w = window(r.now, [&] { again = backend_.release(r); });
      log << at(w) << "RESEND release " << name(r.key) << ' ' << r.owner_token << " -> " << str(again) << '\n';
      if (again != last_.released) model_.failures.emplace_back("4. a resent release gets the last answer");
      // A release that was lost may end the owner's lease all the same; one
      // that released changed nothing the second time.
      if (last_.released == weave::ReleaseResult::lost) model_.release(r, again, w);
    }
  }

  // When `call` decided: mem:// at the request's `now` when it has one,
  // else (and any networked backend) between the send and the reply.
  template <class F>
  Window window(Clock::time_point request_now, F&& call) {
    const Clock::time_point sent = Clock::now();
    call();
    const bool at_now = test_store_is_mem() && request_now != Clock::time_point{};
    return {at_now ? request_now : sent, Clock::now()};
  }

  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  const std::string& any(const std::vector<std::string>& v) { return v[pick(0, static_cast<int>(v.size()) - 1)]; }
  milliseconds lease() { return milliseconds(pick(50, 400)); }
  // Half the time the key's holder as the model knows it (contention, and
  // the holder's own calls, come up often), else any owner.
  const std::string& owner_for(std::string_view key) {
    const std::string& holder = model_.key(key).holder;
    if (!holder.empty() && pick(0, 1) == 0) return *tokens_.insert(holder).first;
    const std::string& owner = any(owners_);
    const int g = generation_[owner + "/" + std::string(key)];
    return *tokens_.insert(g == 0 ? owner : owner + "." + std::to_string(g)).first;
  }
  // After its release of `key` answered released, an owner comes back to the
  // key with a new token, as LockClient takes a new one per acquisition: the
  // backend answers a release as its first send did (property 4), so a token
  // that released a key must not hold it again.
  void released(std::string_view token, std::string_view key) {
    ++generation_[std::string(token.substr(0, token.find('.'))) + "/" + std::string(key)];
  }

  std::string name(std::string_view key) const {
    return "k" + std::to_string(std::find(keys_.begin(), keys_.end(), key) - keys_.begin());
  }
  std::string at(const Window& w) const {
    auto ms = [&](Clock::time_point t) { return std::chrono::duration_cast<milliseconds>(t - start_).count(); };
    return "  [" + std::to_string(ms(w.from)) + "," + std::to_string(ms(w.to)) + "] ";
  }
  static std::string str(const weave::AcquireResult& a) {
    return a.acquired ? "granted " + std::to_string(a.fencing_token)
                      : "refused, holder_ttl_left " + std::to_string(a.holder_ttl_left.count()) + "ms";
  }
  static std::string str(weave::ReleaseResult r) { return r == weave::ReleaseResult::released ? "released" : "lost"; }
  std::string str(const std::vector<weave::RenewItem>& items) const {
    std::string out;
    for (const auto& i : items)
      out += " " + name(i.key) + " " + std::string(i.owner_token) + " " + std::to_string(i.lease.count()) + "ms";
    return out;
  }
  static std::string str(const std::vector<weave::RenewResult>& rs) {
    std::string out;
    for (auto r : rs) out += r == weave::RenewResult::owned ? " owned" : " lost";
    return out;
  }

  weave::LockBackend& backend_;
  std::mt19937 rng_;
  std::vector<std::string> keys_, owners_;
  std::set<std::string> tokens_;           // every token used (requests refer to them)
  std::map<std::string, int> generation_;  // "<owner>/<key>" -> its releases that answered released
  Model model_;
  Sent last_;
  const Clock::time_point start_ = Clock::now();
};

// A backend with one deliberate fault, to show that the model notices it.
enum class Fault { grants_to_all, reuses_tokens, releases_anything, renews_anything, forgets_fence, halves_leases };

class Faulty final : public weave::LockBackend {
 public:
  Faulty(std::shared_ptr<weave::LockBackend> inner, Fault fault) : inner_(std::move(inner)), fault_(fault) {}
  weave::AcquireResult acquire(const weave::AcquireRequest& r) override {
    weave::AcquireRequest sent = r;
    if (fault_ == Fault::halves_leases) sent.lease = r.lease / 2;
    weave::AcquireResult a = inner_->acquire(sent);
    if (fault_ == Fault::grants_to_all && !a.acquired) a = {true, std::numeric_limits<std::uint64_t>::max() / 2, {}, {}};
    if (fault_ == Fault::reuses_tokens && a.acquired) a.fencing_token = 1;
    return a;
  }
  weave::ReleaseResult release(const weave::ReleaseRequest& r) override {
    const weave::ReleaseResult result = inner_->release(r);
    return fault_ == Fault::releases_anything ? weave::ReleaseResult::released : result;
  }
  std::vector<weave::RenewResult> renew_batch(std::span<const weave::RenewItem> items) override {
    std::vector<weave::RenewResult> out = inner_->renew_batch(items);
    if (fault_ == Fault::renews_anything) std::fill(out.begin(), out.end(), weave::RenewResult::owned);
    return out;
  }
  weave::ForcedRelease force_release(std::string_view key) override {
    weave::ForcedRelease f = inner_->force_release(key);
    if (fault_ == Fault::forgets_fence) f.fence = 0;
    return f;
  }
  std::unique_ptr<weave::LockWaiter> prepare_wait(std::string_view key) override { return inner_->prepare_wait(key); }

 private:
  std::shared_ptr<weave::LockBackend> inner_;
  Fault fault_;
};

}  // namespace

// 3 seeds x 160 steps: about 5 s per seed (the pauses), on every store.
TEST_CASE("lock model: random acquire, release, renew, force_release and resends keep every property",
          "[lock][model]") {
  LOCK_TEST_REQUIRE_BACKEND();
  std::shared_ptr<weave::LockBackend> backend = weave::make_lock_backend(options_for());
  std::map<std::string, int> seen;
  for (const std::uint32_t seed : {1u, 2u, 3u}) {
    std::ostringstream log;
    Run run(*backend, seed);
    const Model& model = run.go(160, log);
    INFO("seed " << seed << " on " << Store::url() << ", margin " << kMargin.count() << "ms, steps:\n" << log.str());
    REQUIRE(model.failures.empty());
    for (const auto& [c, n] : model.seen) seen[c] += n;
  }
  // Each case the model pins down came up: the runs tested what they claim to.
  for (const char* c : {"refused while another owner's lease surely ran", "the holder's acquire refreshed its lease",
                        "granted anew after the holder's lease surely ended", "released by the holder",
                        "renewed by the holder", "renewal of a lease that surely ended",
                        "forced release of a held key", "resend answered while its lease surely ran"}) {
    INFO("case: " << c);
    CHECK(seen[c] > 0);
  }
}

// The model is not one that accepts anything: each fault breaks its property
// (the first failure starts with `property`) within the first steps of a run.
TEST_CASE("lock model: a backend with a deliberate fault breaks a property of the model", "[lock][model]") {
  LOCK_TEST_REQUIRE_BACKEND();
  const auto [fault, property] = GENERATE(table<Fault, std::string>({
      {Fault::grants_to_all, "1. granted to another owner while the holder's lease surely ran"},
      {Fault::reuses_tokens, "2. "},  // (a new token not above the last, or the last one again)
      {Fault::releases_anything, "3. a release by an owner that does not hold the key is lost"},
      {Fault::renews_anything, "3. renewing a lease the owner does not hold (released, forced, another's) is lost"},
      {Fault::forgets_fence, "3. a forced release raises the counter above every token handed out"},
      {Fault::halves_leases, ""},  // (any: a lease half as long shows in whichever answer comes first)
  }));
  Faulty backend(weave::make_lock_backend(options_for()), fault);
  std::ostringstream log;
  Run run(backend, 7);
  const Model& model = run.go(160, log);
  INFO("fault " << static_cast<int>(fault) << ", steps:\n" << log.str());
  REQUIRE_FALSE(model.failures.empty());
  CHECK_THAT(model.failures.front(), Catch::StartsWith(property));
}

// The safety half of a resent release (its answer: the next case):
// compare-and-delete never frees the lease of whoever took the key
// after the first send.
TEST_CASE("lock model: a resent release never frees the lease of an owner that took the key since",
          "[lock][model]") {
  LOCK_TEST_REQUIRE_BACKEND();
  std::shared_ptr<weave::LockBackend> backend = weave::make_lock_backend(options_for());
  const std::string key = unique_key("model-resent-release");
  REQUIRE(backend->acquire({key, "owner-A", 10s}).acquired);
  const weave::ReleaseRequest release{key, "owner-A"};
  REQUIRE(backend->release(release) == weave::ReleaseResult::released);
  const weave::AcquireResult b = backend->acquire({key, "owner-B", 10s});
  REQUIRE(b.acquired);
  backend->release(release);  // the resend
  const weave::RenewItem b_lease{key, "owner-B", 10s};
  CHECK(backend->renew_batch({&b_lease, 1}) == std::vector{weave::RenewResult::owned});
  CHECK_FALSE(backend->acquire({key, "owner-C", 10s}).acquired);
  CHECK(backend->acquire({key, "owner-B", 10s}).fencing_token == b.fencing_token);
}

// Property 4 for a release that released: its resend answers released,
// after another owner took the key as with nobody taking it.
TEST_CASE("lock model: a resent release answers released like its first send, whether or not another owner took the key since",
          "[lock][model]") {
  LOCK_TEST_REQUIRE_BACKEND();
  std::shared_ptr<weave::LockBackend> backend = weave::make_lock_backend(options_for());
  const std::string key = unique_key("model-resent-release-answer");
  REQUIRE(backend->acquire({key, "owner-A", 10s}).acquired);
  const weave::ReleaseRequest release{key, "owner-A"};
  REQUIRE(backend->release(release) == weave::ReleaseResult::released);
  CHECK(backend->release(release) == weave::ReleaseResult::released);  // the resend, nobody took the key
  REQUIRE(backend->acquire({key, "owner-B", 10s}).acquired);
  CHECK(backend->release(release) == weave::ReleaseResult::released);  // the resend, B holds the key
  const weave::RenewItem b_lease{key, "owner-B", 10s};
  CHECK(backend->renew_batch({&b_lease, 1}) == std::vector{weave::RenewResult::owned});
}
