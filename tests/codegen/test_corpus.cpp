// Calls every proxy weavegen generated for corpus/corpus.h (at build time) and
// checks what the interceptors and the real methods saw.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "corpus.weave.h"
#include "weave/error.h"
#include "weave/interceptor.h"

namespace {

struct Seen {
  std::string annotation;
  std::string method;
  std::vector<std::string> keys;  // key / keys / subject+tags, rendered
  std::vector<std::string> arg_names;
};

struct Recorder {
  std::vector<Seen> seen;
  bool skip = false;  // when true, interceptors do not proceed

  Recorder() {
    auto& reg = weave::InterceptorRegistry::global();
    reg.add("lock", [this](weave::Invocation& inv) { record(inv, "lock"); });
    reg.add("audit", [this](weave::Invocation& inv) { record(inv, "audit"); });
    corpus::Calls::log().clear();
  }
  ~Recorder() {
    weave::InterceptorRegistry::global().remove("lock");
    weave::InterceptorRegistry::global().remove("audit");
  }

  void record(weave::Invocation& inv, const char* name) {
    Seen s;
    s.annotation = std::string(inv.annotation().name());
    s.method = std::string(inv.method());
    const weave::Annotation& a = inv.annotation();
    if (std::string(name) == "lock") {
      for (auto k : a.texts(a.has("key") ? "key" : "keys")) s.keys.emplace_back(k);
    } else {
      s.keys.emplace_back(a.text("event"));
      if (a.has("subject")) s.keys.emplace_back(a.text("subject"));
      if (a.has("tags"))
        for (auto t : a.texts("tags")) s.keys.emplace_back(t);
    }
    for (std::size_t i = 0; i < inv.arg_count(); ++i) s.arg_names.emplace_back(inv.arg_name(i));
    seen.push_back(s);
    if (!skip) inv.proceed();
  }
};

using corpus::Calls;
using Service = corpus::shop::Service;
using WovenService = weave::Woven<corpus::shop::Service>;

template <class W>
concept can_call_guarded = requires(W& w) { w.guarded(1); };
struct GuardedCaller {
  int guarded(int v) { return v; }
};

}  // namespace

TEST_CASE("woven traits name the generated proxies", "[codegen][corpus]") {
  STATIC_REQUIRE(std::is_same_v<WovenService, corpus::shop::Service_woven>);
  STATIC_REQUIRE(std::is_base_of_v<Service, WovenService>);
  STATIC_REQUIRE(std::is_same_v<weave::Woven<corpus::shop::Outer::Inner>, corpus::shop::Outer_Inner_woven>);
}

TEST_CASE("keys by index and name, virtual dispatch through Base& reaches the proxy", "[codegen][corpus]") {
  Recorder r;
  WovenService svc("tagged");  // inherited constructor
  Service& base = svc;
  CHECK(base.pay("o-1", 250) == "paid:o-1");
  REQUIRE(r.seen.size() == 1);
  CHECK(r.seen[0].annotation == "lock");
  CHECK(r.seen[0].method == "corpus::shop::Service::pay");
  CHECK(r.seen[0].keys == std::vector<std::string>{"order:o-1/250"});
  CHECK(r.seen[0].arg_names == std::vector<std::string>{"order_id", "cents"});
  CHECK(Calls::log() == std::vector<std::string>{"pay o-1 250"});
  CHECK(svc.tag() == "tagged");
}

TEST_CASE("overloads: the annotated one is woven, the other stays visible", "[codegen][corpus]") {
  Recorder r;
  WovenService svc;
  CHECK(svc.put(4) == 5);
  CHECK(svc.put(std::string("abc")) == 3);  // not annotated: no interception
  REQUIRE(r.seen.size() == 1);
  // default key: qualified name plus parameter types for an overloaded name
  CHECK(r.seen[0].keys == std::vector<std::string>{"corpus::shop::Service::put(int)"});
}

TEST_CASE("default arguments, const and noexcept pass through the proxy", "[codegen][corpus]") {
  Recorder r;
  const WovenService svc;
  svc.peek();
  svc.peek(3, "bob");
  const std::string who;
  STATIC_REQUIRE(noexcept(svc.peek(1, who)));
  REQUIRE(r.seen.size() == 2);
  CHECK(r.seen[0].keys[0] == "peek:7");
  CHECK(r.seen[1].keys[0] == "peek:3");
  CHECK(Calls::log() == std::vector<std::string>{"peek 7 anon", "peek 3 bob"});
}

TEST_CASE("member paths, calls, pointers and smart pointers in keys", "[codegen][corpus]") {
  Recorder r;
  WovenService svc;
  corpus::Order o{"n-9", {"cust-1"}};
  CHECK(svc.ship(o) == 3);
  auto sp = std::make_shared<corpus::Order>(corpus::Order{"sp-1", {"c-2"}});
  CHECK(svc.by_pointer(&o, sp) == 7);
  REQUIRE(r.seen.size() == 2);
  CHECK(r.seen[0].keys[0] == "o:n-9:cust-1:3");
  CHECK(r.seen[1].keys[0] == "p:n-9|c-2");
}

TEST_CASE("move-only and rvalue-reference parameters are moved to the target", "[codegen][corpus]") {
  Recorder r;
  WovenService svc;
  std::string moved = "world";
  CHECK(svc.take(std::make_unique<std::string>("hello"), std::move(moved)) == 10);
  CHECK(Calls::log() == std::vector<std::string>{"take hello world"});
  REQUIRE(r.seen.size() == 1);
  CHECK(r.seen[0].keys[0] == "take:world");
}

TEST_CASE("reference returns refer to the target's object", "[codegen][corpus]") {
  Recorder r;
  WovenService svc;
  svc.tag() = "changed";
  CHECK(svc.tag() == "changed");
  CHECK(&svc.tag() == &svc.tag_);  // the target's member, not a copy
  CHECK(svc.tag_ == "changed");
  CHECK(r.seen.size() == 3);
}

TEST_CASE("skipping: void, optional, fallback, and methods that cannot skip", "[codegen][corpus]") {
  Recorder r;
  r.skip = true;
  WovenService svc;
  svc.peek(1);  // void: nothing happens
  CHECK(Calls::log().empty());
  CHECK(svc.maybe(4) == std::nullopt);
  CHECK(svc.with_fallback(6) == -6);
  CHECK_THROWS_AS(svc.put(1), weave::UsageError);
  r.skip = false;
  CHECK(svc.maybe(4) == 40);
  CHECK(svc.with_fallback(6) == 6);
}

TEST_CASE("static members, unnamed parameters, enums and operator<<", "[codegen][corpus]") {
  Recorder r;
  CHECK(WovenService::twice(21) == 42);
  WovenService svc;
  svc.unnamed(5, corpus::Tier::gold);
  corpus::Account acct;
  acct.owner = "ann";
  svc.money(corpus::Money{120}, acct);
  REQUIRE(r.seen.size() == 3);
  CHECK(Calls::log() == std::vector<std::string>{"unnamed", "money 120"});  // the targets ran
  CHECK(r.seen[0].keys[0] == "static:21");
  CHECK(r.seen[1].keys[0] == "u:5:3");
  CHECK(r.seen[1].arg_names == std::vector<std::string>{"arg0", "arg1"});
  CHECK(r.seen[2].keys[0] == "m:120c:eu:acct-ann");
}

TEST_CASE("several annotations run by order, user vocabulary, literal < and >", "[codegen][corpus]") {
  Recorder r;
  WovenService svc;
  svc.refund("zoe");
  REQUIRE(r.seen.size() == 2);
  CHECK(r.seen[0].annotation == "audit");  // order=-1 runs outermost
  CHECK(r.seen[0].keys == std::vector<std::string>{"refund", "<zoe>", "t1:zoe", "t2"});
  CHECK(r.seen[1].annotation == "lock");
  CHECK(r.seen[1].keys == std::vector<std::string>{"refund:zoe"});
  CHECK(Calls::log() == std::vector<std::string>{"refund zoe"});
}

TEST_CASE("keys=[...] renders every template", "[codegen][corpus]") {
  Recorder r;
  WovenService svc;
  svc.multi(1, 2);
  REQUIRE(r.seen.size() == 1);
  CHECK(r.seen[0].keys == std::vector<std::string>{"a:1", "b:2"});
  CHECK(Calls::log() == std::vector<std::string>{"multi 3"});
}

TEST_CASE("self-calls of virtual annotated methods go through the proxy", "[codegen][corpus]") {
  Recorder r;
  WovenService svc;
  CHECK(svc.outer_call() == 11);
  REQUIRE(r.seen.size() == 2);
  CHECK(r.seen[0].keys[0] == "outer");
  CHECK(r.seen[1].keys[0] == "inner");
}

TEST_CASE("protected methods are woven and stay protected", "[codegen][corpus]") {
  Recorder r;
  WovenService svc;
  CHECK(svc.call_guarded(2) == 6);
  REQUIRE(r.seen.size() == 1);
  CHECK(r.seen[0].keys[0] == "prot:2");
  STATIC_REQUIRE_FALSE(can_call_guarded<WovenService>);  // not made public by the proxy
  STATIC_REQUIRE(can_call_guarded<GuardedCaller>);      // (the concept does detect a public one)
}

TEST_CASE("nested classes get a namespace-scope proxy", "[codegen][corpus]") {
  Recorder r;
  weave::Woven<corpus::shop::Outer::Inner> inner;
  corpus::shop::Outer::Inner& base = inner;
  CHECK(base.classify(corpus::shop::Outer::Kind::large, 20) == corpus::shop::Outer::Kind::large);
  REQUIRE(r.seen.size() == 1);
  CHECK(r.seen[0].keys[0] == "inner:1");
  CHECK(r.seen[0].method == "corpus::shop::Outer::Inner::classify");
  // The proxy repeats the defaults, qualified: called on the proxy itself.
  CHECK(inner.sized() == 20 * 100 + 2 * 10 + 6);
  CHECK(inner.sized(3, corpus::shop::Outer::slow) == 3 * 100 + 1 * 10 + 6);
}

TEST_CASE("public and protected annotated overloads of one name", "[codegen][corpus]") {
  Recorder r;
  weave::Woven<corpus::shop::Mixed> m;
  CHECK(m.f(3) == 3);
  CHECK(m.f(2.0) == -1);  // unannotated, unhidden by the using-declaration
  CHECK(m.call_char('a') == 'a');
  REQUIRE(r.seen.size() == 2);
  CHECK(r.seen[0].keys[0] == "mixed:pub");
  CHECK(r.seen[1].keys[0] == "mixed:prot");
}

TEST_CASE("free functions get an entry point in namespace woven", "[codegen][corpus]") {
  Recorder r;
  CHECK(corpus::shop::woven::transfer("a", "b") == 5);  // default argument
  corpus::shop::woven::free_void();
  REQUIRE(r.seen.size() == 2);
  CHECK(r.seen[0].method == "corpus::shop::transfer");
  CHECK(r.seen[0].keys[0] == "acct:a");
  CHECK(r.seen[1].keys[0] == "corpus::shop::free_void");  // the default key
  CHECK(Calls::log() == std::vector<std::string>{"transfer a->b 5", "free_void"});
}

TEST_CASE("every public method is callable on the proxy, unannotated ones pass straight through",
          "[codegen][corpus]") {
  Recorder r;
  WovenService svc;
  const WovenService& csvc = svc;
  CHECK(csvc.plain() == 42);
  CHECK(svc.put(std::string("ab")) == 2);
  CHECK(r.seen.empty());
}

TEST_CASE("annotated virtual methods stay woven through T*, unique_ptr<T> and shared_ptr<T>, "
          "non-virtual ones only through the proxy type",
          "[codegen][corpus]") {
  Recorder r;
  std::unique_ptr<Service> up = std::make_unique<WovenService>();
  std::shared_ptr<Service> sp = std::make_shared<WovenService>();
  Service* raw = sp.get();
  CHECK(up->pay("u", 1) == "paid:u");
  CHECK(sp->pay("s", 2) == "paid:s");
  CHECK(raw->pay("r", 3) == "paid:r");
  REQUIRE(r.seen.size() == 3);
  CHECK(r.seen[0].keys == std::vector<std::string>{"order:u/1"});
  CHECK(r.seen[1].keys == std::vector<std::string>{"order:s/2"});
  CHECK(r.seen[2].keys == std::vector<std::string>{"order:r/3"});
  // put(int) is annotated but not virtual: through Service* it is not intercepted (docs/weavegen.md, "Using the proxy").
  CHECK(raw->put(1) == 2);
  CHECK(r.seen.size() == 3);
  CHECK(static_cast<WovenService*>(raw)->put(1) == 2);
  CHECK(r.seen.size() == 4);
}

TEST_CASE("an interface is decorated: two implementations behind one decorated interface", "[codegen][corpus]") {
  using corpus::shop::Ledger;
  STATIC_REQUIRE(std::is_base_of_v<Ledger, weave::Decorated<Ledger>>);
  Recorder r;
  auto memory = std::make_shared<corpus::shop::MemoryLedger>();
  std::shared_ptr<Ledger> a = weave::decorate<Ledger>(memory);
  corpus::shop::NullLedger null_ledger;
  std::shared_ptr<Ledger> b = weave::decorate<Ledger>(null_ledger);  // by reference: not owned
  std::shared_ptr<Ledger> c = weave::decorate<Ledger>(std::make_unique<corpus::shop::NullLedger>());

  CHECK(a->credit("acct-1", 5) == 5);
  CHECK(a->credit("acct-1") == 6);  // the interface's default argument
  CHECK(b->credit("acct-2", 5) == 0);
  CHECK(c->close() == false);
  CHECK(a->balance("acct-1") == 6);  // forwarded, not intercepted
  CHECK(b->name() == "null");        // inherited from Journal, forwarded
  CHECK(memory->entries.size() == 2);
  REQUIRE(r.seen.size() == 4);
  CHECK(r.seen[0].method == "corpus::shop::Ledger::credit");
  CHECK(r.seen[0].keys[0] == "ledger:acct-1");
  CHECK(r.seen[1].keys[0] == "ledger:acct-1");
  CHECK(r.seen[2].keys[0] == "ledger:acct-2");
  CHECK(r.seen[3].keys[0] == "ledger:null:close");  // <this.name()> read from the implementation

  // The fallback is the implementation's.
  r.skip = true;
  CHECK(a->close() == false);  // MemoryLedger::closed()
  CHECK(b->close() == true);   // NullLedger::closed()

  CHECK_THROWS_AS(weave::decorate<Ledger>(std::shared_ptr<Ledger>{}), weave::UsageError);
}

TEST_CASE("keys read the object through this", "[codegen][corpus]") {
  Recorder r;
  weave::Woven<corpus::shop::Regional> eu("eu-1");
  corpus::shop::Regional& base = eu;
  CHECK(base.route(41) == 42);
  REQUIRE(r.seen.size() == 1);
  CHECK(r.seen[0].keys[0] == "region:eu-1:tenant-7:41");
}

TEST_CASE("string arguments: every escape and UTF-8 render the text the user wrote", "[codegen][corpus]") {
  Recorder r;
  weave::Woven<corpus::shop::Literals> literals;
  CHECK(literals.escaped(7) == 7);
  CHECK(literals.utf8(8) == 8);
  CHECK(literals.event(9) == 9);
  REQUIRE(r.seen.size() == 3);
  CHECK(r.seen[0].keys == std::vector<std::string>{"esc:AA\xC3\xA9\xF0\x9F\x98\x80|\"q\"\\7\t?."});
  CHECK(r.seen[1].keys == std::vector<std::string>{"caf\xC3\xA9:\xC3\xA9:8"});
  CHECK(r.seen[2].keys == std::vector<std::string>{"line\none \"two\"", "s:9\r"});
}

