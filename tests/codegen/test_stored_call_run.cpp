// Woven methods whose calls are stored (stored/orders.h, generated at build
// time, compiled with -Werror): an interceptor registered as `delay` (and as
// the user's `later`) stores each call through its StoredCallCodec and returns
// at once; a worker that serves the woven object runs the stored text later
// with detail::run_stored_call, and the method gets the same argument values,
// under the interceptors after the storing one (here the real [[lock]] on mem://).
#include <catch2/catch.hpp>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "orders.weave.h"
#include "registered_interceptor.h"
#include "weave/queue.h"

namespace {

struct StoredCall {
  std::string method;
  std::uint64_t signature_hash = 0;
  std::string json;
};

// Stands in for the delay interceptor: stores the call and returns at once.
struct Storing {
  std::vector<StoredCall> queue;
  std::vector<std::string> annotations;  // which one stored each call
  std::function<void(weave::Invocation&)> interceptor() {
    return [this](weave::Invocation& inv) {
      if (inv.replaying_stored_call()) return inv.proceed();
      const weave::StoredCallCodec* codec = inv.stored_call();
      REQUIRE(codec != nullptr);
      annotations.push_back(std::string(inv.annotation().name()));
      queue.push_back({std::string(inv.method()), codec->signature_hash, codec->encode(inv.args())});
    };
  }
};

// Stands in for the worker: the methods of the objects it serves, by name.
struct Worker {
  struct Target {
    const weave::MethodInfo* method;
    void* owner;
  };
  std::map<std::string, Target> targets;
  template <class W>
  void serve(W& woven) {
    const weave::StoredCalls calls = weave::stored_calls_of(woven);
    for (const weave::MethodInfo* m : calls.methods) targets[std::string(m->qualified_name)] = {m, calls.owner};
  }
  bool run(const StoredCall& c) {
    const Target& t = targets.at(c.method);
    return weave::detail::run_stored_call(*t.method, t.owner, c.signature_hash, c.json);
  }
};

}  // namespace

TEST_CASE("stored call: the documented [[delay]] example is stored at the call and run by a worker under its lock",
          "[codegen][stored_call]") {
  Storing delay;
  Registered d("delay", delay.interceptor());
  weave::Woven<shop::Orders> orders;
  static_cast<shop::Orders&>(orders).cancel_if_unpaid("o-1");
  CHECK(orders.seen.empty());
  REQUIRE(delay.queue.size() == 1);
  CHECK(delay.queue[0].method == "shop::Orders::cancel_if_unpaid");
  CHECK(delay.queue[0].json == R"(["o-1"])");
  CHECK(delay.queue[0].signature_hash ==
        weave::signature_hash("void shop::Orders::cancel_if_unpaid(const std::basic_string<char>&)"));

  Worker worker;
  worker.serve(orders);
  CHECK(worker.run(delay.queue[0]));
  CHECK(orders.seen == std::vector<std::string>{"cancel o-1 under order:o-1"});
  CHECK(delay.queue.size() == 1);  // the replay did not store it again
}

TEST_CASE("stored call: the emitted codec round-trips every argument, and key templates are rendered again from "
          "the copies on the worker's object",
          "[codegen][stored_call]") {
  Storing delay;
  Registered d("delay", delay.interceptor());
  std::vector<std::string> audited;
  Registered audit("audit", [&](weave::Invocation& inv) {
    audited.push_back(std::string(inv.annotation().text("subject")) +
                      (inv.replaying_stored_call() ? " (replay)" : ""));
    inv.proceed();
  });
  weave::Woven<shop::Orders> caller;
  caller.schedule({"s-7", 1250}, 3, {"fragile", "gift"}, 1700000000L, shop::Mode::air);
  caller.schedule({"s-8", 0}, -1, {}, std::nullopt, shop::Mode::ground);
  CHECK(caller.seen.empty());
  CHECK(audited.empty());  // audit runs below delay: not at the call
  REQUIRE(delay.queue.size() == 2);
  CHECK(nlohmann::json::parse(delay.queue[0].json) ==
        nlohmann::json::parse(R"([{"id":"s-7","grams":1250},3,["fragile","gift"],1700000000,1])"));

  // Another object (another process's) runs them: its region renders <this.region>.
  weave::Woven<shop::Orders> other;
  other.region = "us";
  Worker worker;
  worker.serve(other);
  for (const auto& c : delay.queue) CHECK(worker.run(c));
  CHECK(other.seen == std::vector<std::string>{"schedule s-7/1250 p3 [fragile,gift,] 1700000000 air in us",
                                               "schedule s-8/0 p-1 [] none ground in us"});
  CHECK(audited == std::vector<std::string>{"s-7:us (replay)", "s-8:us (replay)"});
}

TEST_CASE("stored call: a user's annotation that stores calls works as delay does, with no parameters too",
          "[codegen][stored_call]") {
  Storing later;
  Registered l("later", later.interceptor());
  weave::Woven<shop::Orders> orders;
  orders.sweep();
  REQUIRE(later.queue.size() == 1);
  CHECK(later.annotations == std::vector<std::string>{"later"});
  CHECK(later.queue[0].json == "[]");
  Worker worker;
  worker.serve(orders);
  CHECK(worker.targets.size() == 3);  // cancel_if_unpaid, schedule, sweep
  CHECK(worker.run(later.queue[0]));
  CHECK(orders.seen == std::vector<std::string>{"sweep"});
}

TEST_CASE("stored call: an interface's decorator stores calls and serves them on its implementation",
          "[codegen][stored_call]") {
  struct Outbox : shop::Mailer {
    std::vector<std::string> sent;
    void send(const std::string& to, const std::string& text) override { sent.push_back(to + ": " + text); }
  };
  Storing delay;
  Registered d("delay", delay.interceptor());
  auto impl = std::make_shared<Outbox>();
  weave::Decorated<shop::Mailer> mailer(impl);
  static_cast<shop::Mailer&>(mailer).send("ann@example.com", "your order shipped");
  CHECK(impl->sent.empty());
  REQUIRE(delay.queue.size() == 1);
  CHECK(delay.queue[0].json == R"(["ann@example.com","your order shipped"])");
  Worker worker;
  worker.serve(mailer);
  CHECK(worker.run(delay.queue[0]));
  CHECK(impl->sent == std::vector<std::string>{"ann@example.com: your order shipped"});
}

TEST_CASE("stored call: a call stored before a parameter type changed is rejected, never run", "[codegen][stored_call]") {
  weave::Woven<shop::Orders> orders;
  Worker worker;
  worker.serve(orders);
  const StoredCall old{"shop::Orders::cancel_if_unpaid",
                       weave::signature_hash("void shop::Orders::cancel_if_unpaid(long)"), "[42]"};
  CHECK_THROWS_AS(worker.run(old), weave::StoredCallRejected);
  CHECK(orders.seen.empty());
}

TEST_CASE("stored call: outside the stand-in's cases the linked runtime's delay interceptor stores the call in its "
          "queue, and the method does not run",
          "[codegen][stored_call]") {
  weave::Woven<shop::Orders> orders;
  weave::Queue queue("orders");  // [[delay(queue="orders", after=30min)]], on mem:// (the default store)
  const weave::QueueStats before = queue.stats();
  orders.cancel_if_unpaid("o-9");
  CHECK(orders.seen.empty());
  const weave::QueueStats after = queue.stats();
  CHECK(after.delayed == before.delayed + 1);  // due in 30 min
  CHECK(after.ready == before.ready);
}
