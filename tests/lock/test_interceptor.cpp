// The built-in `lock` interceptor, driven the way generated proxies drive it
// (weave::detail::invoke with hand-written MethodInfo constants).
#include <algorithm>
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "test_support.h"
#include "weave/error.h"
#include "weave/generated.h"
#include "weave/lease.h"
#include "weave/lock.h"
#include "weave/lock_backend.h"

using namespace std::chrono_literals;
using weave::AnnotationSpec;
using weave::ArgSpec;
using weave::ArgValue;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::string_view k_params[] = {"id"};

// [[lock(key="t:<id>")]] — the vocabulary defaults: wait=0, on_busy=throw, release=on_return
constexpr ArgSpec k_plain[] = {
    {"key", ArgValue::of_template(0)},
    {"wait", ArgValue::of_duration_ms(0)},
    {"on_busy", ArgValue::of_enum("throw")},
    {"release", ArgValue::of_enum("on_return")},
};
// [[lock(key="t:<id>", on_busy=skip)]]
constexpr ArgSpec k_skip[] = {{"key", ArgValue::of_template(0)}, {"on_busy", ArgValue::of_enum("skip")}};
// [[lock(key="t:<id>", on_busy=fallback)]]
constexpr ArgSpec k_fallback[] = {{"key", ArgValue::of_template(0)},
                                  {"on_busy", ArgValue::of_enum("fallback")}};
// [[lock(key="t:<id>", wait=200ms, on_busy=skip)]]
constexpr ArgSpec k_wait_skip[] = {{"key", ArgValue::of_template(0)},
                                   {"wait", ArgValue::of_duration_ms(200)},
                                   {"on_busy", ArgValue::of_enum("skip")}};
// [[lock(key="t:<id>", wait=200ms)]]
constexpr ArgSpec k_wait_throw[] = {{"key", ArgValue::of_template(0)},
                                    {"wait", ArgValue::of_duration_ms(200)}};
// [[lock(key="t:<id>", wait=forever)]]
constexpr ArgSpec k_forever[] = {{"key", ArgValue::of_template(0)}, {"wait", ArgValue::of_forever()}};
// [[lock(key="t:<id>", ttl=100ms)]]
constexpr ArgSpec k_short_ttl[] = {{"key", ArgValue::of_template(0)}, {"ttl", ArgValue::of_duration_ms(100)}};
// [[lock(key="t:<id>", ttl=300ms, release=on_expiry)]]
constexpr ArgSpec k_on_expiry[] = {{"key", ArgValue::of_template(0)},
                                   {"ttl", ArgValue::of_duration_ms(300)},
                                   {"release", ArgValue::of_enum("on_expiry")}};
// [[lock(keys=["u:<id>", "t:<id>"], on_busy=skip)]]
constexpr ArgSpec k_keys[] = {{"keys", ArgValue::of_template_list(0, 2)},
                              {"on_busy", ArgValue::of_enum("skip")}};
// [[lock(keys=["u:<id>", "t:<id>"])]]
constexpr ArgSpec k_keys_throw[] = {{"keys", ArgValue::of_template_list(0, 2)}};
// [[lock(key="t:<id>", type=bogus)]] (weavegen would refuse it; the runtime checks too)
constexpr ArgSpec k_bogus_type[] = {{"key", ArgValue::of_template(0)}, {"type", ArgValue::of_enum("bogus")}};

// [[lock(key="t:<id>", ttl=1s, max_hold=5s)]] (weavegen would refuse it; each call is refused)
constexpr ArgSpec k_ttl_max_hold[] = {{"key", ArgValue::of_template(0)},
                                      {"ttl", ArgValue::of_duration_ms(1000)},
                                      {"max_hold", ArgValue::of_duration_ms(5000)}};

// [[lock(key="t:<id>", max_hold=300ms)]]
constexpr ArgSpec k_max_hold[] = {{"key", ArgValue::of_template(0)}, {"max_hold", ArgValue::of_duration_ms(300)}};

// [[lock(key="t:<id>", type=fair)]], type=read, type=write
constexpr ArgSpec k_fair[] = {{"key", ArgValue::of_template(0)}, {"type", ArgValue::of_enum("fair")}};
constexpr ArgSpec k_read[] = {{"key", ArgValue::of_template(0)}, {"type", ArgValue::of_enum("read")}};
constexpr ArgSpec k_write[] = {{"key", ArgValue::of_template(0)}, {"type", ArgValue::of_enum("write")}};

#define WEAVE_TEST_METHOD(name, args)                                                  \
  constexpr AnnotationSpec k_ann_##name[] = {{"lock", 0, args, 1, 1}};                 \
  constexpr weave::MethodInfo k_info_##name{"test::Svc::" #name, "svc.h", 2, k_ann_##name, \
                                            k_params};
WEAVE_TEST_METHOD(plain, k_plain)
WEAVE_TEST_METHOD(skip, k_skip)
WEAVE_TEST_METHOD(fallback, k_fallback)
WEAVE_TEST_METHOD(wait_skip, k_wait_skip)
WEAVE_TEST_METHOD(wait_throw, k_wait_throw)
WEAVE_TEST_METHOD(forever, k_forever)
WEAVE_TEST_METHOD(short_ttl, k_short_ttl)
WEAVE_TEST_METHOD(on_expiry, k_on_expiry)
WEAVE_TEST_METHOD(keys, k_keys)
WEAVE_TEST_METHOD(keys_throw, k_keys_throw)
WEAVE_TEST_METHOD(bogus_type, k_bogus_type)
WEAVE_TEST_METHOD(fair, k_fair)
WEAVE_TEST_METHOD(read, k_read)
WEAVE_TEST_METHOD(write, k_write)
WEAVE_TEST_METHOD(max_hold, k_max_hold)
WEAVE_TEST_METHOD(ttl_max_hold, k_ttl_max_hold)

// What a proxy for `R method(const std::string& id)` does; the key is "t:<id>".
template <class R, class F, class OnSkip>
R call(const weave::MethodInfo& info, const std::string& id, F&& body, OnSkip&& on_skip) {
  const weave::ArgRef args[] = {weave::ArgRef(id)};
  std::string rendered[1];
  rendered[0] += "t:";
  weave::append_key(rendered[0], id);
  return weave::detail::invoke<R>(info, args, rendered, std::forward<F>(body),
                                  std::forward<OnSkip>(on_skip));
}

// Holds "t:<id>" from outside any woven call, as another process would.
weave::LeaseHandle hold(const std::string& id, weave::LockSpec spec = {}) {
  return weave::default_lock_client().acquire("t:" + id, spec);
}

bool is_free(const std::string& id) {
  return std::async(std::launch::async, [&] {
           return bool(weave::default_lock_client().try_acquire("t:" + id));
         }).get();
}

struct UseMem {
  UseMem() {
    weave::LockOptions o;
    o.url = "mem://interceptor";
    weave::configure_locks(o);
  }
};

// An id without reserved characters, so that "t:" + id is the key the
// proxy renders (a value's ':' would render as %3A: weave/key.h).
std::string fresh_id() {
  std::string id = lock_test::unique_key("svc");
  std::replace(id.begin(), id.end(), ':', '-');
  return id;
}

}  // namespace

TEST_CASE("lock interceptor: runs the method holding the lease, then releases it", "[lock][interceptor]") {
  UseMem mem;
  const std::string id = fresh_id();
  std::uint64_t fence = 0;
  int r = call<int>(k_info_plain, id, [&] {
    const weave::Lease* l = weave::current_lease("t:" + id);
    REQUIRE(l != nullptr);
    CHECK(weave::current_lease() == l);
    CHECK(l->renewed());  // no ttl: watchdog mode
    fence = l->fencing_token();
    CHECK_FALSE(is_free(id));
    return 7;
  }, weave::detail::CannotSkip{});
  CHECK(r == 7);
  CHECK(fence > 0);
  CHECK(weave::current_lease() == nullptr);
  CHECK(is_free(id));
}

TEST_CASE("lock interceptor: busy strategies", "[lock][interceptor]") {
  UseMem mem;
  const std::string id = fresh_id();
  bool ran = false;
  auto body = [&] { ran = true; return 1; };
  weave::LeaseHandle other = hold(id);

  SECTION("fail fast: wait=0, on_busy=throw (default) -> LockBusy") {
    try {
      call<int>(k_info_plain, id, body, weave::detail::CannotSkip{});
      FAIL("no LockBusy");
    } catch (const weave::LockBusy& e) {
      CHECK(e.key() == "t:" + id);
    }
  }
  SECTION("skip fast: wait=0, on_busy=skip -> std::nullopt without running") {
    auto r = call<std::optional<int>>(k_info_skip, id, [&]() -> std::optional<int> { ran = true; return 1; },
                                      [] { return std::optional<int>(); });
    CHECK_FALSE(r.has_value());
  }
  SECTION("skip for void methods") {
    call<void>(k_info_skip, id, [&] { ran = true; }, [] {});
  }
  SECTION("fallback: the proxy's fallback runs instead") {
    int r = call<int>(k_info_fallback, id, body, [] { return -1; });
    CHECK(r == -1);
  }
  SECTION("skip after timeout: wait=T, on_busy=skip") {
    const auto t0 = Clock::now();
    auto r = call<std::optional<int>>(k_info_wait_skip, id, [&]() -> std::optional<int> { ran = true; return 1; },
                                      [] { return std::optional<int>(); });
    CHECK_FALSE(r.has_value());
    CHECK(Clock::now() - t0 >= 200ms);
  }
  SECTION("fail after timeout: wait=T -> LockBusy with waited >= T") {
    try {
      call<int>(k_info_wait_throw, id, body, weave::detail::CannotSkip{});
      FAIL("no LockBusy");
    } catch (const weave::LockBusy& e) {
      CHECK(e.waited() >= 200ms);
    }
  }
  SECTION("keep retrying: wait=forever gets in once the holder releases") {
    auto f = std::async(std::launch::async, [&] { return call<int>(k_info_forever, id, body, weave::detail::CannotSkip{}); });
    CHECK(f.wait_for(150ms) == std::future_status::timeout);
    other.release();
    CHECK(f.get() == 1);
    CHECK(ran);
    return;
  }
  CHECK_FALSE(ran);
}

TEST_CASE("lock interceptor: nested woven calls on the same key reuse the lease", "[lock][interceptor]") {
  UseMem mem;
  const std::string id = fresh_id();
  std::string outer_owner, inner_owner;
  bool contender_got = true;
  call<void>(k_info_plain, id, [&] {
    outer_owner = weave::current_lease()->owner_token();
    call<void>(k_info_plain, id, [&] {  // would deadlock / be busy without reentrancy
      inner_owner = weave::current_lease()->owner_token();
      contender_got = std::async(std::launch::async, [&] {
                        return bool(weave::default_lock_client().try_acquire("t:" + id, {.wait = 100ms}));
                      }).get();
    }, weave::detail::CannotSkip{});
    CHECK_FALSE(is_free(id));  // the inner return did not release it
  }, weave::detail::CannotSkip{});
  CHECK(inner_owner == outer_owner);
  CHECK_FALSE(contender_got);
  CHECK(is_free(id));
}

TEST_CASE("lock interceptor: an exception from the method releases and propagates", "[lock][interceptor]") {
  UseMem mem;
  const std::string id = fresh_id();
  CHECK_THROWS_WITH(call<int>(k_info_plain, id, []() -> int { throw std::runtime_error("boom"); },
                              weave::detail::CannotSkip{}),
                    "boom");
  CHECK(is_free(id));
  CHECK(weave::current_lease() == nullptr);
}

TEST_CASE("lock interceptor: a lease lost while the method runs", "[lock][interceptor]") {
  UseMem mem;
  const std::string id = fresh_id();
  bool stopped = false;
  CHECK_THROWS_AS(call<void>(k_info_short_ttl, id, [&] {
    const weave::Lease* l = weave::current_lease();
    std::promise<void> fired;
    std::stop_callback cb(l->stop_token(), [&] { fired.set_value(); });
    stopped = fired.get_future().wait_for(10s) == std::future_status::ready;
  }, weave::detail::CannotSkip{}), weave::LeaseLost);
  CHECK(stopped);
}

TEST_CASE("lock interceptor: release=on_expiry guards against duplicates until the ttl", "[lock][interceptor]") {
  UseMem mem;
  const std::string id = fresh_id();
  int runs = 0;
  auto body = [&]() -> std::optional<int> { return ++runs; };
  auto none = [] { return std::optional<int>(); };
  CHECK(call<std::optional<int>>(k_info_on_expiry, id, body, none) == 1);
  CHECK_FALSE(is_free(id));  // still held after the return
  try {
    call<std::optional<int>>(k_info_on_expiry, id, body, none);
    FAIL("the duplicate ran");
  } catch (const weave::DuplicateCall& e) {  // a DedupeError, never a LockBusy: retrying would run the work twice
    CHECK(e.key() == "t:" + id);
    CHECK_FALSE(e.retryable());
    CHECK_THAT(e.what(), Catch::Matchers::Contains("duplicate"));
  }
  CHECK(runs == 1);
  CHECK(weave::default_lock_client().try_acquire("t:" + id, {.wait = 10s}));  // runs out on its own
}

// The spec is checked once per method; a call still has its own key checked,
// and a spec that breaks a rule refuses every call, naming the call's key.
TEST_CASE("lock interceptor: a spec that breaks a rule refuses every call, and an empty key is refused under any spec",
          "[lock][interceptor]") {
  UseMem mem;
  const std::string id = fresh_id();
  bool ran = false;
  for (int i = 0; i < 2; ++i)
    CHECK_THROWS_WITH(call<void>(k_info_ttl_max_hold, id, [&] { ran = true; }, weave::detail::CannotSkip{}),
                      Catch::Matchers::Contains("lock 't:" + id + "': max_hold limits the watchdog's renewals"));
  const weave::ArgRef args[] = {weave::ArgRef(id)};
  const std::string empty[1];
  CHECK_THROWS_WITH(
      weave::detail::invoke<void>(k_info_plain, args, empty, [&] { ran = true; }, weave::detail::CannotSkip{}),
      Catch::Matchers::Contains("lock key is empty"));
  CHECK_FALSE(ran);
  CHECK_NOTHROW(call<void>(k_info_plain, id, [&] { ran = true; }, weave::detail::CannotSkip{}));
  CHECK(ran);
}

TEST_CASE("lock interceptor: unsupported arguments are usage errors naming the method, and the method does not run",
          "[lock][interceptor]") {
  UseMem mem;
  const std::string id = fresh_id();
  bool ran = false;
  CHECK_THROWS_MATCHES(call<void>(k_info_bogus_type, id, [&] { ran = true; }, weave::detail::CannotSkip{}),
                       weave::UsageError,
                       Catch::Matchers::Message("weave: lock type='bogus' is not one of reentrant, fair, read, write "
                                                "(lock on test::Svc::bogus_type at svc.h:1)"));
  static constexpr ArgSpec no_keys[] = {{"keys", ArgValue::of_template_list(0, 0)}};
  static constexpr AnnotationSpec no_keys_spec[] = {{"lock", 0, no_keys, 1, 1}};
  static constexpr weave::MethodInfo no_keys_info{"test::Svc::no_keys", "svc.h", 2, no_keys_spec, k_params};
  CHECK_THROWS_WITH(call<void>(no_keys_info, id, [&] { ran = true; }, weave::detail::CannotSkip{}),
                    Catch::Matchers::Contains("lock keys=[] names no key (lock on test::Svc::no_keys at svc.h:1)"));
  CHECK_FALSE(ran);
}

TEST_CASE("lock interceptor: a key written as text, as weavegen writes the default one (the qualified name), is "
          "locked as it is", "[lock][interceptor]") {
  UseMem mem;
  static const std::string key = fresh_id() + ":test::Svc::fixed";
  static const ArgSpec fixed[] = {{"key", ArgValue::of_text(key)}};
  static const AnnotationSpec fixed_spec[] = {{"lock", 0, fixed, 1, 1}};
  static const weave::MethodInfo fixed_info{"test::Svc::fixed", "svc.h", 2, fixed_spec, k_params};
  bool held = false;
  call<void>(fixed_info, "any", [&] { held = weave::current_lease(key) != nullptr; }, weave::detail::CannotSkip{});
  CHECK(held);
  weave::LeaseHandle other = weave::default_lock_client().acquire(key);
  CHECK_THROWS_AS(call<void>(fixed_info, "other", [] {}, weave::detail::CannotSkip{}), weave::LockBusy);
}

TEST_CASE("lock interceptor: type=fair|read|write", "[lock][interceptor]") {
  UseMem mem;
  const std::string id = fresh_id();
  auto no_skip = weave::detail::CannotSkip{};
  weave::LockType seen{};
  call<void>(k_info_fair, id, [&] { seen = weave::current_lease()->type(); }, no_skip);
  CHECK(seen == weave::LockType::fair);
  CHECK(is_free(id));
  // Readers share: a read method runs while another reader holds the key.
  weave::LeaseHandle reader = hold(id, {.type = weave::LockType::read});
  bool ran = false;
  call<void>(k_info_read, id, [&] { ran = weave::current_lease()->type() == weave::LockType::read; }, no_skip);
  CHECK(ran);
  CHECK_THROWS_AS(call<void>(k_info_write, id, [] {}, no_skip), weave::LockBusy);  // a writer does not
  reader.release();
  // A write method may call a read method on the same key (reentrant).
  bool inner = false;
  call<void>(k_info_write, id, [&] {
    call<void>(k_info_read, id, [&] { inner = weave::current_lease()->type() == weave::LockType::write; }, no_skip);
  }, no_skip);
  CHECK(inner);  // the read reused the write lease
  CHECK(weave::default_lock_client().try_acquire("t:" + id, {.type = weave::LockType::write}));
}

namespace {
// A proxy for `void method(const std::string& id)` with keys=["u:<id>", "t:<id>"].
bool call_two_keys(const weave::MethodInfo& info, const std::string& id, const std::function<void()>& body) {
  const weave::ArgRef args[] = {weave::ArgRef(id)};
  std::string rendered[2] = {"u:" + id, "t:" + id};
  bool ran = true;
  weave::detail::invoke<void>(info, args, rendered, body, [&] { ran = false; });
  return ran;
}
}  // namespace

TEST_CASE("lock interceptor: keys=[...] takes every key or none", "[lock][interceptor]") {
  UseMem mem;
  const std::string id = fresh_id();
  bool both = false;
  CHECK(call_two_keys(k_info_keys, id, [&] {
    both = weave::current_lease("t:" + id) && weave::current_lease("u:" + id);
    CHECK_FALSE(is_free(id));
  }));
  CHECK(both);
  CHECK(is_free(id));
  CHECK(weave::default_lock_client().try_acquire("u:" + id));  // released too

  weave::LeaseHandle u = weave::default_lock_client().acquire("u:" + id);
  bool ran = false;
  CHECK_FALSE(call_two_keys(k_info_keys, id, [&] { ran = true; }));  // skipped
  CHECK_FALSE(ran);
  CHECK(is_free(id));  // "t:<id>" (taken first, in sorted order) was given back
  try {
    call_two_keys(k_info_keys_throw, id, [] {});
    FAIL("no LockBusy");
  } catch (const weave::LockBusy& e) {
    CHECK(e.key() == "u:" + id);
  }
  CHECK(is_free(id));
  CHECK(weave::current_lease() == nullptr);
}

namespace {

// mem:// whose release fails, as a backend gone away would, while `failing` is set.
class ReleaseFails final : public weave::LockBackend {
 public:
  static inline std::atomic<bool> failing{false};
  ReleaseFails() : inner_(weave::make_lock_backend({.url = "mem://release-fails"})) {}
  weave::AcquireResult acquire(const weave::AcquireRequest& r) override {
    return inner_->acquire(r);
  }
  weave::ReleaseResult release(const weave::ReleaseRequest& r) override {
    if (failing) throw weave::BackendUnavailable("test backend: gone away");
    return inner_->release(r);
  }
  std::vector<weave::RenewResult> renew_batch(std::span<const weave::RenewItem> items) override {
    return inner_->renew_batch(items);
  }
  std::unique_ptr<weave::LockWaiter> prepare_wait(std::string_view k) override { return inner_->prepare_wait(k); }

 private:
  std::shared_ptr<weave::LockBackend> inner_;
};

// The lock interceptor on ReleaseFails, remembering every event.
struct UseReleaseFails {
  struct Seen {
    weave::EventKind kind;
    std::string feature, key, cause, what;
    bool release_failed_type, retryable;
  };
  std::mutex mutex;
  std::vector<Seen> events;
  explicit UseReleaseFails(weave::ReleaseFailurePolicy policy) {
    weave::register_lock_backend("release-fails", [](const weave::LockOptions&) {
      return std::make_shared<ReleaseFails>();
    });
    weave::LockOptions o;
    o.url = "release-fails://127.0.0.1";
    o.release_failure_policy = policy;
    o.on_event = [this](const weave::Event& e) {
      std::lock_guard g(mutex);
      events.push_back({e.kind, std::string(e.feature), std::string(e.key), std::string(e.cause), e.error.what(),
                        dynamic_cast<const weave::ReleaseFailed*>(&e.error) != nullptr, e.error.retryable()});
    };
    weave::configure_locks(o);
  }
  ~UseReleaseFails() { ReleaseFails::failing = false; }
};

}  // namespace

// The body completed, so a retry would run it again.
TEST_CASE("lock interceptor: a lock the backend fails to give back after the method ran", "[lock][interceptor]") {
  const std::string id = fresh_id();
  SECTION("by default the result is returned, the failure counted and reported") {
    UseReleaseFails use(weave::ReleaseFailurePolicy::report);
    const auto before = weave::default_lock_client().stats().release_failures;
    ReleaseFails::failing = true;
    int r = call<int>(k_info_plain, id, [] { return 7; }, weave::detail::CannotSkip{});
    CHECK(r == 7);
    CHECK(weave::default_lock_client().stats().release_failures == before + 1);
    REQUIRE(use.events.size() == 1);
    const auto& e = use.events[0];
    CHECK(e.kind == weave::EventKind::release_failed);
    CHECK(e.feature == "lock");
    CHECK(e.key == "t:" + id);
    CHECK_THAT(e.cause, Catch::Matchers::Contains("gone away"));
    CHECK(e.release_failed_type);
    CHECK_FALSE(e.retryable);
    // A method that throws keeps its own exception; the failed release is still counted and reported.
    // (Another key: "t:<id>" stays held until its lease runs out, nothing gave it back.)
    CHECK_THROWS_WITH(call<int>(k_info_plain, fresh_id(), []() -> int { throw std::runtime_error("boom"); },
                                weave::detail::CannotSkip{}),
                      "boom");
    CHECK(weave::default_lock_client().stats().release_failures == before + 2);
    CHECK(use.events.size() == 2);
  }
  SECTION("release_failure_policy=throw_error: ReleaseFailed, saying the work completed, never retryable") {
    UseReleaseFails use(weave::ReleaseFailurePolicy::throw_error);
    ReleaseFails::failing = true;
    bool ran = false;
    try {
      call<void>(k_info_plain, id, [&] { ran = true; }, weave::detail::CannotSkip{});
      FAIL("no ReleaseFailed");
    } catch (const weave::ReleaseFailed& e) {
      CHECK(e.key() == "t:" + id);
      CHECK_FALSE(e.retryable());
      CHECK_THAT(e.what(), Catch::Matchers::Contains("t:" + id) && Catch::Matchers::Contains("completed") &&
                               Catch::Matchers::Contains("gone away"));
    }
    CHECK(ran);
    CHECK(use.events.size() == 1);  // reported as well
  }
}

// A runaway method cannot keep its lock past max_hold.
TEST_CASE("lock interceptor: max_hold: a method that ignores its stop token loses the lock", "[lock][interceptor]") {
  weave::LockOptions o;
  o.url = "mem://interceptor";
  o.watchdog_lease = 300ms;  // renewed every 100 ms: it must be renewed to last until max_hold
  weave::configure_locks(o);
  const std::string id = fresh_id();
  std::string cause;
  bool other_got_in = false;
  const auto t0 = Clock::now();
  Clock::duration fired_after{};
  try {
    call<void>(k_info_max_hold, id, [&] {
      const weave::Lease* l = weave::current_lease();
      CHECK(l->max_hold() == 300ms);
      std::promise<void> fired;
      std::stop_callback cb(l->stop_token(), [&] { fired.set_value(); });
      REQUIRE(fired.get_future().wait_for(10s) == std::future_status::ready);
      fired_after = Clock::now() - t0;
      cause = l->lost_cause();
      // It carries on regardless; the lease runs out under it and another caller gets in.
      other_got_in = std::async(std::launch::async, [&] {
                       return bool(weave::default_lock_client().try_acquire("t:" + id, {.wait = 10s}));
                     }).get();
    }, weave::detail::CannotSkip{});
    FAIL("no HoldLimitExceeded");
  } catch (const weave::HoldLimitExceeded& e) {
    CHECK(e.key() == "t:" + id);
    CHECK(e.max_hold() == 300ms);
    CHECK_FALSE(e.retryable());
  }
  CHECK(fired_after >= 290ms);  // not before max_hold (the 300 ms lease was renewed)
  CHECK_THAT(cause, Catch::Matchers::Contains("max_hold"));
  CHECK(other_got_in);
}
