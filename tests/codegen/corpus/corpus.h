// Every declaration shape weavegen supports. Compiled through the generated
// proxies by test_corpus.cpp (see tests/codegen/CMakeLists.txt).
#pragma once

#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace corpus {

// Records what the real (un-woven) implementations saw.
struct Calls {
  static std::vector<std::string>& log() {
    static std::vector<std::string> l;
    return l;
  }
};

struct Customer {
  std::string id_;
  const std::string& id() const { return id_; }
};

struct Order {
  std::string number;
  Customer buyer;
  const Customer& customer() const { return buyer; }
  int lines() const { return 3; }
};

struct Money {
  long cents = 0;
};
inline std::ostream& operator<<(std::ostream& os, const Money& m) { return os << m.cents << "c"; }

enum class Tier { bronze = 1, gold = 3 };

struct Base {
  std::string region = "eu";
};
struct Account : Base {  // inherited member in a key path
  std::string owner;
  std::string name() const { return "acct-" + owner; }
};

namespace shop {
inline namespace v2 {

class Service {
 public:
  Service() = default;
  explicit Service(std::string tag) : tag_(std::move(tag)) {}
  virtual ~Service() = default;

  // by index and by name; value return
  [[lock(key="order:<arg0>/<cents>", ttl=30s)]]
  virtual std::string pay(const std::string& order_id, int cents);

  // overloads: only one annotated; the default key names the parameter types
  [[lock]]
  int put(int x);
  int put(const std::string& s) { return static_cast<int>(s.size()); }

  // const + noexcept + default arguments
  [[lock(key="peek:<n>", on_busy=skip)]]
  virtual void peek(int n = 7, const std::string& who = std::string("anon")) const noexcept;

  // member paths, calls, pointers, smart pointers
  [[weave::lock(key="o:<order.number>:<order.customer().id()>:<order.lines()>", wait=2s)]]
  virtual int ship(const Order& order);
  [[lock(key="p:<ptr->number>|<sp->buyer.id_>")]]
  int by_pointer(const Order* ptr, std::shared_ptr<Order> sp);

  // rvalue-reference and move-only by-value parameters
  [[lock(key="take:<arg1>")]]
  virtual std::size_t take(std::unique_ptr<std::string> owned, std::string&& moved);

  // reference return
  [[lock(key="ref")]]
  std::string& tag();

  // std::optional return may skip
  [[lock(key="maybe:<k>", on_busy=skip, wait=forever)]]
  std::optional<int> maybe(int k);

  // fallback
  [[lock(key="fb:<k>", on_busy=fallback, fallback=busy_value)]]
  int with_fallback(int k);
  int busy_value(int k) { return -k; }

  // static member
  [[lock(key="static:<a>")]]
  static int twice(int a);

  // unnamed parameter; enum, Money (operator<<), inherited member
  [[lock(key="u:<arg0>:<arg1>")]]
  void unnamed(int, Tier);
  [[lock(key="m:<m>:<acct.region>:<acct.name()>")]]
  void money(Money m, const Account& acct);

  // two annotations, user vocabulary, order, literal < and >
  [[lock(key="refund:<who>")]]  //
  [[audit(event="refund", subject="<<<who>>>", tags=["t1:<who>", "t2"], order=-1)]]
  virtual void refund(const std::string& who);

  // multi-key (reserved) keys=[...]
  [[lock(keys=["a:<x>", "b:<y>"])]]
  void multi(int x, int y);

  // a plain method, not woven
  int plain() const { return 42; }

  // calls another annotated virtual method on this (self-call)
  [[lock(key="outer")]]
  virtual int outer_call();
  [[lock(key="inner")]]
  virtual int inner_call();

 protected:
  [[lock(key="prot:<v>")]]
  virtual int guarded(int v);

 public:
  int call_guarded(int v) { return guarded(v); }
  std::string tag_ = "t";
};

// Annotated overloads of one name, public and protected (weavegen warns: one
// using-declaration, public, unhides the unannotated ones).
class Mixed {
 public:
  virtual ~Mixed() = default;
  [[lock(key="mixed:pub")]] virtual int f(int x) { return x; }
  int f(double) { return -1; }
  int call_char(char c) { return f(c); }

 protected:
  [[lock(key="mixed:prot")]] virtual int f(char c) { return c; }
};

class Outer {
 public:
  enum class Kind { small, large };
  enum Speed { slow = 1, fast = 2 };
  static constexpr int kDefaultSize = 20;
  static int doubled(int v) { return 2 * v; }
  struct Inner {
    virtual ~Inner() = default;
    // nested class: proxy Outer_Inner_woven at namespace scope; nested types
    [[lock(key="inner:<k>")]]
    virtual Kind classify(Kind k, int size);
    // Default arguments naming the enclosing class's members, unqualified.
    [[lock(key="inner:sized")]]
    virtual int sized(int size = kDefaultSize, Speed s = fast, int extra = doubled(Kind::large == Kind::small ? 1 : 3));
  };
};

// An interface: implementations come from elsewhere, callers hold Ledger&.
// weavegen emits a decorator (weave::decorate<Ledger>) instead of a proxy.
class Journal {
 public:
  virtual ~Journal() = default;
  virtual std::string name() const = 0;  // inherited, forwarded
};
class Ledger : public Journal {
 public:
  [[lock(key="ledger:<account>")]]
  virtual long credit(const std::string& account, long cents = 1) = 0;
  [[lock(key="ledger:<this.name()>:close", on_busy=fallback, fallback=closed)]]
  virtual bool close() = 0;
  virtual bool closed() = 0;
  virtual long balance(const std::string& account) const = 0;  // not annotated: forwarded as is
};
// Two implementations the decorator must serve alike.
class MemoryLedger : public Ledger {
 public:
  std::string name() const override { return "memory"; }
  long credit(const std::string& account, long cents) override;
  bool close() override { return true; }
  bool closed() override { return false; }
  long balance(const std::string& account) const override;
  std::vector<std::pair<std::string, long>> entries;
};
class NullLedger : public Ledger {
 public:
  std::string name() const override { return "null"; }
  long credit(const std::string&, long) override { return 0; }
  bool close() override { return false; }
  bool closed() override { return true; }
  long balance(const std::string&) const override { return -1; }
};

// Keys that read the object: a data member and a const method.
class Regional {
 public:
  explicit Regional(std::string region) : region_(std::move(region)) {}
  virtual ~Regional() = default;
  std::string tenant() const { return "tenant-7"; }
  [[lock(key="region:<this.region_>:<this.tenant()>:<id>")]]
  virtual int route(int id);

 protected:
  std::string region_;
};

}  // inline namespace v2

// free functions
[[lock(key="acct:<from>", ttl=1min)]] int transfer(const std::string& from, const std::string& to, int cents = 5);
[[lock(ttl=5s)]] void free_void();  // default key: the qualified name

// String arguments written with every kind of escape and in UTF-8: the
// generated code renders the text the user wrote, as UTF-8.
struct Literals {
  virtual ~Literals() = default;
  [[lock(key="esc:\x41\101\u00e9\U0001F600|\"q\"\\<id>\t\?.")]]
  virtual int escaped(int id) { return id; }
  [[lock(key="café:\xC3\xA9:<id>")]]
  virtual int utf8(int id) { return id; }
  [[audit(event="line\none \"two\"", subject="s\072<id>\r")]]
  virtual int event(int id) { return id; }
};

}  // namespace shop
}  // namespace corpus
