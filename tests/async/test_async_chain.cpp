// The interceptor chain of an asynchronous method, driven the way a generated
// proxy drives it (weave/generated/invoke_async.h; MethodInfo constants
// written by hand in the shape weavegen emits): asynchronous interceptors,
// plain ones on an asynchronous method, asynchronous ones on a synchronous
// method, skips, exceptions, and the call's context across co_await.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "async/context_executor.h"
#include "async_test_support.h"
#include "registered_interceptor.h"
#include "weave/asio.h"
#include "weave/async_interceptor.h"
#include "weave/generated.h"
#include "weave/generated/invoke_async.h"
#include "weave/lock.h"

namespace net = weave::net;
using weave::AnnotationSpec;
using weave::ArgSpec;
using weave::ArgValue;
using namespace std::chrono_literals;

namespace {

constexpr ArgSpec k_outer_args[] = {{"event", ArgValue::of_text("outer")}};
constexpr ArgSpec k_inner_args[] = {{"event", ArgValue::of_template(0)}};
constexpr AnnotationSpec k_two[] = {
    {"async_outer", 0, k_outer_args, 10, 3},
    {"async_inner", 5, k_inner_args, 11, 3},
};
constexpr std::string_view k_params[] = {"order_id", "cents"};
constexpr weave::MethodInfo k_info{"shop::Svc::pay", "svc.h", 12, k_two, k_params};

class Trace {
 public:
  void add(std::string s) {
    std::lock_guard g(mutex_);
    items_.push_back(std::move(s));
  }
  std::vector<std::string> items() {
    std::lock_guard g(mutex_);
    return items_;
  }

 private:
  std::mutex mutex_;
  std::vector<std::string> items_;
};

class RegisteredAsync {
 public:
  RegisteredAsync(std::string name, std::function<net::awaitable<void>(weave::AsyncInvocation&)> f) : name_(name) {
    weave::add_async_interceptor(weave::InterceptorRegistry::global(), std::move(name), std::move(f));
  }
  ~RegisteredAsync() { weave::InterceptorRegistry::global().remove(name_); }

 private:
  std::string name_;
};

net::awaitable<void> sleep_for(std::chrono::milliseconds d) {
  const auto ex = co_await net::this_coro::executor;  // (a named executor: g++ 12 destroys a co_await expression's temporaries twice)
  net::steady_timer t(ex, d);
  co_await t.async_wait(net::use_awaitable);
}

struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The method itself: suspends once, then answers (or throws).
net::awaitable<int> pay_target(int cents, Trace& trace, bool fail) {
  co_await sleep_for(1ms);
  trace.add("target");
  if (fail) throw Failure("card declined");
  co_return cents * 2;
}

// A proxy as weavegen emits it for `awaitable<int> pay(std::string order_id, int cents)`.
net::awaitable<int> pay(std::string order_id, int cents, Trace& trace, bool fail = false) {
  const weave::ArgRef args[] = {weave::ArgRef(order_id), weave::ArgRef(cents)};
  std::string rendered[1];
  rendered[0] += "order:";
  weave::append_key(rendered[0], order_id);
  co_return co_await weave::detail::invoke_async<net::awaitable<int>>(
      k_info, args, rendered, [&] { return pay_target(cents, trace, fail); }, weave::detail::CannotSkip{});
}

// The same method returning std::optional<int>: a skip answers std::nullopt.
net::awaitable<std::optional<int>> pay_optional(std::string order_id, int cents, Trace& trace) {
  const weave::ArgRef args[] = {weave::ArgRef(order_id), weave::ArgRef(cents)};
  std::string rendered[1] = {"order:" + order_id};
  co_return co_await weave::detail::invoke_async<net::awaitable<std::optional<int>>>(
      k_info, args, rendered,
      [&]() -> net::awaitable<std::optional<int>> { co_return co_await pay_target(cents, trace, false); },
      []() -> std::optional<int> { return std::nullopt; });
}

// k_two's interceptors: async_outer holds a mem:// lease on "order:<first
// argument>" in the call's context (LeaseScope, as a synchronous one would)
// while the rest runs; async_inner only proceeds.
struct LeaseInContext {
  weave::LockClient locks{weave::LockOptions{.url = "mem://"}};
  RegisteredAsync outer{"async_outer", [this](weave::AsyncInvocation& inv) -> net::awaitable<void> {
                          weave::LeaseHandle lease = locks.acquire("order:" + inv.arg(0).text());
                          weave::LeaseScope in_context(lease);
                          co_await inv.proceed();
                        }};
  RegisteredAsync inner{"async_inner", [](weave::AsyncInvocation& inv) { return inv.proceed(); }};
};

}  // namespace

TEST_CASE("asynchronous interceptors await the rest of the chain around the method") {
  Trace trace;
  RegisteredAsync outer("async_outer", [&](weave::AsyncInvocation& inv) -> net::awaitable<void> {
    trace.add("outer " + std::string(inv.annotation().text("event")));
    co_await inv.proceed();
    trace.add("outer after, proceeded=" + std::to_string(inv.proceeded()));
  });
  RegisteredAsync inner("async_inner", [&](weave::AsyncInvocation& inv) -> net::awaitable<void> {
    trace.add("inner " + std::string(inv.annotation().text("event")) + " " + inv.arg(1).text());
    co_await sleep_for(1ms);  // suspends before the method too
    co_await inv.proceed();
    trace.add("inner after");
  });
  CHECK(async_test::run(1, pay("A1", 50, trace)) == 100);
  CHECK(trace.items() == std::vector<std::string>{"outer outer", "inner order:A1 50", "target", "inner after",
                                                  "outer after, proceeded=1"});
}

TEST_CASE("the method's exception reaches the caller unchanged through asynchronous interceptors") {
  Trace trace;
  RegisteredAsync outer("async_outer", [&](weave::AsyncInvocation& inv) -> net::awaitable<void> {
    try {
      co_await inv.proceed();
    } catch (const Failure& e) {
      trace.add(std::string("outer saw ") + e.what());
      throw;
    }
  });
  RegisteredAsync inner("async_inner", [](weave::AsyncInvocation& inv) { return inv.proceed(); });
  CHECK_THROWS_MATCHES(async_test::run(2, pay("A1", 50, trace, true)), Failure,
                       Catch::Matchers::Message("card declined"));
  CHECK(trace.items() == std::vector<std::string>{"target", "outer saw card declined"});
}

TEST_CASE("an asynchronous interceptor that does not proceed skips the method") {
  Trace trace;
  RegisteredAsync outer("async_outer", [](weave::AsyncInvocation&) -> net::awaitable<void> { co_return; });
  RegisteredAsync inner("async_inner", [](weave::AsyncInvocation& inv) { return inv.proceed(); });
  // No way to skip: a UsageError naming the method.
  CHECK_THROWS_AS(async_test::run(1, pay("A1", 50, trace)), weave::UsageError);
  CHECK_THROWS_WITH(async_test::run(1, pay("A1", 50, trace)), Catch::Matchers::Contains("shop::Svc::pay, which cannot skip"));
  // An optional result: std::nullopt.
  CHECK(async_test::run(1, pay_optional("A1", 50, trace)) == std::nullopt);
  CHECK(trace.items().empty());
}

TEST_CASE("awaiting proceed twice after the method returned is a UsageError") {
  Trace trace;
  RegisteredAsync outer("async_outer", [](weave::AsyncInvocation& inv) -> net::awaitable<void> {
    co_await inv.proceed();
    co_await inv.proceed();
  });
  RegisteredAsync inner("async_inner", [](weave::AsyncInvocation& inv) { return inv.proceed(); });
  CHECK_THROWS_AS(async_test::run(1, pay("A1", 50, trace)), weave::UsageError);
  CHECK_THROWS_WITH(async_test::run(1, pay("A1", 50, trace)),
                    Catch::Matchers::Contains("proceed() awaited again after shop::Svc::pay returned"));
}

TEST_CASE("a plain interceptor on an asynchronous method sees the whole call from a thread of its own") {
  // One io_context thread: the method's timer fires only if the plain
  // interceptor's wait does not block it.
  Trace trace;
  std::atomic<bool> on_io_thread{true};
  std::thread::id io_thread;
  Registered outer("async_outer", [&](weave::Invocation& inv) {
    on_io_thread = std::this_thread::get_id() == io_thread;
    trace.add("outer " + std::string(inv.annotation().text("event")));
    try {
      inv.proceed();
      trace.add("outer after, proceeded=" + std::to_string(inv.proceeded()));
    } catch (const Failure& e) {
      trace.add(std::string("outer saw ") + e.what());
      throw;
    }
  });
  RegisteredAsync inner("async_inner", [&](weave::AsyncInvocation& inv) -> net::awaitable<void> {
    trace.add("inner " + std::string(inv.annotation().text("event")));
    co_await inv.proceed();
  });
  auto call = [&](bool fail) -> net::awaitable<int> {
    io_thread = std::this_thread::get_id();
    co_return co_await pay("A2", 21, trace, fail);
  };
  CHECK(async_test::run(1, call(false)) == 42);
  CHECK_FALSE(on_io_thread);
  CHECK(trace.items() == std::vector<std::string>{"outer outer", "inner order:A2", "target", "outer after, proceeded=1"});
  CHECK_THROWS_MATCHES(async_test::run(1, call(true)), Failure, Catch::Matchers::Message("card declined"));
  CHECK(trace.items().back() == "outer saw card declined");
}

TEST_CASE("a plain interceptor on an asynchronous method may skip it") {
  Trace trace;
  Registered outer("async_outer", [](weave::Invocation&) {});
  RegisteredAsync inner("async_inner", [](weave::AsyncInvocation& inv) { return inv.proceed(); });
  CHECK(async_test::run(1, pay_optional("A1", 50, trace)) == std::nullopt);
  CHECK(trace.items().empty());
}

TEST_CASE("the caller's cancellation reaches the method's pending co_await, also through a plain interceptor") {
  Trace trace;
  std::atomic<bool> started{false};
  auto slow_target = [&]() -> net::awaitable<int> {
    started = true;
    co_await sleep_for(60s);
    co_return 0;
  };
  auto slow_pay = [&](std::string order_id) -> net::awaitable<int> {
    const weave::ArgRef args[] = {weave::ArgRef(order_id), weave::ArgRef(1)};
    std::string rendered[1] = {"order:" + order_id};
    co_return co_await weave::detail::invoke_async<net::awaitable<int>>(k_info, args, rendered, slow_target,
                                                                        weave::detail::CannotSkip{});
  };
  RegisteredAsync inner("async_inner", [](weave::AsyncInvocation& inv) { return inv.proceed(); });
  auto cancelled_at_once = [&] {
    started = false;
    net::io_context io;
    net::cancellation_signal signal;
    async_test::Outcome call;
    net::co_spawn(io, slow_pay("C1"), net::bind_cancellation_slot(signal.slot(), async_test::record<int>(call)));
    net::co_spawn(
        io,
        [&]() -> net::awaitable<void> {
          while (!started) co_await sleep_for(1ms);
          co_await sleep_for(5ms);  // (the target is waiting on its timer by now)
          signal.emit(net::cancellation_type::terminal);
        },
        net::detached);
    io.run();  // ends well before the target's 60 s
    return call.aborted();
  };
  SECTION("asynchronous interceptors only") {
    RegisteredAsync outer("async_outer", [](weave::AsyncInvocation& inv) { return inv.proceed(); });
    CHECK(cancelled_at_once());
  }
  SECTION("a plain interceptor first") {
    Registered outer("async_outer", [](weave::Invocation& inv) { inv.proceed(); });
    CHECK(cancelled_at_once());
  }
}

TEST_CASE("an asynchronous interceptor on a synchronous method runs to its end on the calling thread") {
  Trace trace;
  const std::thread::id caller = std::this_thread::get_id();
  bool same_thread = false;
  RegisteredAsync outer("async_outer", [&](weave::AsyncInvocation& inv) -> net::awaitable<void> {
    CHECK_FALSE(inv.asynchronous());
    co_await sleep_for(1ms);
    co_await inv.proceed();
    same_thread = std::this_thread::get_id() == caller;
    trace.add("outer after");
  });
  Registered inner("async_inner", [&](weave::Invocation& inv) {
    trace.add("inner " + std::string(inv.annotation().text("event")));
    inv.proceed();
  });
  const std::string order = "S1";
  const int cents = 4;
  const weave::ArgRef args[] = {weave::ArgRef(order), weave::ArgRef(cents)};
  std::string rendered[1] = {"order:S1"};
  const int r = weave::detail::invoke<int>(
      k_info, args, rendered,
      [&] {
        trace.add("target");
        return cents * 3;
      },
      weave::detail::CannotSkip{});
  CHECK(r == 12);
  CHECK(same_thread);
  CHECK(trace.items() == std::vector<std::string>{"inner order:S1", "target", "outer after"});
}

TEST_CASE("the call's context travels with its coroutines across co_await, on whichever thread resumes them") {
  // An asynchronous interceptor puts a lease in the call's context while the
  // rest runs; the method checks it after each of its suspensions. 200 calls at once on 4 threads, and
  // coroutines outside any call beside them: each call sees its own lease
  // every time, the others never see one.
  LeaseInContext chain;
  weave::LockClient& locks = chain.locks;
  std::atomic<int> checks{0}, wrong{0}, outside_wrong{0};
  std::mutex threads_mutex;
  std::set<std::thread::id> threads;
  auto method = [&](std::string order) -> net::awaitable<int> {
    for (int i = 0; i < 10; ++i) {
      co_await sleep_for(std::chrono::milliseconds(i % 2));
      const weave::Lease* l = weave::current_lease();
      if (!l || l->key() != "order:" + order) ++wrong;
      ++checks;
      std::lock_guard g(threads_mutex);
      threads.insert(std::this_thread::get_id());
    }
    co_return 1;
  };
  auto call = [&](std::string order) -> net::awaitable<void> {
    const weave::ArgRef args[] = {weave::ArgRef(order)};
    std::string rendered[1] = {"order:" + order};
    co_await weave::detail::invoke_async<net::awaitable<int>>(k_info, args, rendered, [&] { return method(order); },
                                                                weave::detail::CannotSkip{});
    if (weave::current_lease()) ++outside_wrong;  // the caller's own context: none
  };
  auto outside = [&]() -> net::awaitable<void> {
    for (int i = 0; i < 20; ++i) {
      co_await sleep_for(std::chrono::milliseconds(i % 2));
      if (weave::current_lease()) ++outside_wrong;
    }
  };
  net::io_context io;
  for (int i = 0; i < 200; ++i) {
    net::co_spawn(io, call("c" + std::to_string(i)), net::detached);
    if (i % 10 == 0) net::co_spawn(io, outside(), net::detached);
  }
  async_test::run_threads(io, 4);
  CHECK(checks == 2000);
  CHECK(wrong == 0);
  CHECK(outside_wrong == 0);
  CHECK(threads.size() > 1);  // resumed on more than one thread
  CHECK(locks.stats().acquired == 200);
}

TEST_CASE("a handler a call left on its executor runs outside any call, also once a later call took the call's place") {
  // The call's executor outlives the call in a copy the body kept; handlers
  // posted to it afterwards must see no call's context: not the ended
  // call's, and not that of a later call that reuses its place (a cell from
  // the pool), whose context such a handler must not change either.
  LeaseInContext chain;
  weave::LockClient& locks = chain.locks;
  std::optional<net::any_io_executor> left;  // the first call's executor, kept past its end
  std::vector<std::string> seen;              // the lease each stray handler saw ("" for none)
  auto stray = [&] {
    const weave::Lease* l = weave::current_lease();
    seen.push_back(l ? l->key() : "");
    weave::LeaseHandle own = locks.acquire("stray");  // pushes and pops a context of its own
    weave::LeaseScope in_context(own);
  };
  std::vector<std::string> second_saw;
  std::optional<net::any_io_executor> second;
  auto method = [&]() -> net::awaitable<int> {
    if (!left) {
      left = co_await net::this_coro::executor;
      co_return 1;
    }
    second = co_await net::this_coro::executor;
    for (int i = 0; i < 3; ++i) {
      net::post(*left, stray);
      co_await sleep_for(2ms);  // the stray handler runs meanwhile
      const weave::Lease* l = weave::current_lease();
      second_saw.push_back(l ? l->key() : "");
    }
    co_return 2;
  };
  auto call = [&](std::string order) -> net::awaitable<void> {
    const weave::ArgRef args[] = {weave::ArgRef(order)};
    std::string rendered[1] = {"order:" + order};
    co_await weave::detail::invoke_async<net::awaitable<int>>(k_info, args, rendered, [&] { return method(); },
                                                                weave::detail::CannotSkip{});
  };
  net::io_context io;
  net::co_spawn(
      io,
      [&]() -> net::awaitable<void> {
        co_await call("first");
        net::post(*left, stray);
        co_await sleep_for(2ms);
        co_await call("second");
      },
      net::detached);
  io.run();
  // The second call took the first one's cell, in its next generation.
  using CallExecutor = weave::detail::ContextExecutor<net::io_context::executor_type>;
  REQUIRE(left->target<CallExecutor>());
  REQUIRE(second->target<CallExecutor>());
  CHECK(second->target<CallExecutor>()->cell() == left->target<CallExecutor>()->cell());
  CHECK(second->target<CallExecutor>()->generation() > left->target<CallExecutor>()->generation());
  CHECK(seen == std::vector<std::string>{"", "", "", ""});
  CHECK(second_saw == std::vector<std::string>{"order:second", "order:second", "order:second"});
  CHECK(locks.stats().acquired == 6);
}

TEST_CASE("a nested woven call runs on the caller's io_context through one wrapper of its own") {
  // The caller's wrapper is taken off (the nested call's context starts from
  // the caller's): its handlers pay for one installation, and a cancellation
  // on the io_context's thread is emitted at once.
  LeaseInContext chain;
  using CallExecutor = weave::detail::ContextExecutor<net::io_context::executor_type>;
  std::optional<net::any_io_executor> outer_ex, inner_ex;
  std::optional<std::string> inner_saw;
  auto call = [&](std::string order, std::function<net::awaitable<int>()> method) -> net::awaitable<int> {
    const weave::ArgRef args[] = {weave::ArgRef(order)};
    std::string rendered[1] = {"order:" + order};
    co_return co_await weave::detail::invoke_async<net::awaitable<int>>(k_info, args, rendered, method,
                                                                          weave::detail::CannotSkip{});
  };
  auto inner_method = [&]() -> net::awaitable<int> {
    inner_ex = co_await net::this_coro::executor;
    const weave::Lease* l = weave::current_lease();
    inner_saw = l ? l->key() : "";
    co_return 2;
  };
  auto outer_method = [&]() -> net::awaitable<int> {
    outer_ex = co_await net::this_coro::executor;
    auto nested = call("inner", inner_method);
    co_return co_await std::move(nested);
  };
  net::io_context io;
  net::co_spawn(io, call("outer", outer_method), net::detached);
  io.run();
  REQUIRE(outer_ex->target<CallExecutor>());
  REQUIRE(inner_ex->target<CallExecutor>());  // not a wrapper around the caller's wrapper
  CHECK(inner_ex->target<CallExecutor>()->cell() != outer_ex->target<CallExecutor>()->cell());
  CHECK(inner_saw == "order:inner");  // its own lease, innermost
  CHECK(chain.locks.stats().acquired == 2);
}
