// The built-in `lock` interceptor: reads the annotation, acquires through the
// process-wide LockClient, keeps the lease on the call chain while the method
// runs, and releases per `release=`. Once the method has run, a failure to
// give the lock back does not throw its result away (ReleaseFailurePolicy).
#include <span>
#include <string>
#include <vector>

#include "core/builtin.h"
#include "internal.h"
#include "weave/error.h"
#include "weave/interceptor.h"
#include "weave/invocation.h"

namespace weave {
namespace {

using std::chrono::milliseconds;

enum class OnBusy { fail, skip, fallback };

class LockInterceptor final : public Interceptor {
 public:
  void around(Invocation& inv) override {
    const Annotation& a = inv.annotation();
    // Built only on the error paths: the hot path allocates nothing for it.
    auto where = [&inv] { return " (lock on " + std::string(inv.method()) + ")"; };
    // One key, or several as one lease taken all-or-nothing in sorted order
    // (so two calls locking overlapping sets cannot deadlock).
    std::vector<std::string_view> many;
    std::string_view one_key;
    if (a.has("keys")) {
      many = a.texts("keys");
      if (many.empty()) throw UsageError("lock keys=[] names no key" + where());
    } else {
      one_key = a.text("key");
    }
    std::span<const std::string_view> keys =
        many.empty() ? std::span<const std::string_view>(&one_key, 1) : std::span<const std::string_view>(many);

    LockSpec spec;
    if (a.has("ttl")) spec.ttl = a.duration("ttl");
    if (a.has("wait")) spec.wait = a.duration("wait");
    if (a.has("max_hold")) spec.max_hold = a.duration("max_hold");
    if (a.has("release")) {
      std::string_view r = a.text("release");
      if (r == "on_expiry")
        spec.release = LockSpec::Release::on_expiry;
      else if (r != "on_return")
        throw UsageError("lock release='" + std::string(r) + "' is not one of on_return, on_expiry" + where());
    }
    OnBusy on_busy = OnBusy::fail;
    if (a.has("on_busy")) {
      std::string_view b = a.text("on_busy");
      if (b == "skip")
        on_busy = OnBusy::skip;
      else if (b == "fallback")
        on_busy = OnBusy::fallback;
      else if (b != "throw")
        throw UsageError("lock on_busy='" + std::string(b) + "' is not one of throw, skip, fallback" + where());
    }
    if (a.has("type")) {
      std::string_view t = a.text("type");
      if (t == "fair")
        spec.type = LockType::fair;
      else if (t == "read")
        spec.type = LockType::read;
      else if (t == "write")
        spec.type = LockType::write;
      else if (t != "reentrant")
        throw UsageError("lock type='" + std::string(t) + "' is not one of reentrant, fair, read, write" + where());
    }

    LockClient client = default_lock_client();
    milliseconds waited{0};
    std::string busy_key;
    LeaseHandle lease = client.try_acquire_all(keys, spec, &waited, &busy_key);
    if (!lease) {
      if (on_busy == OnBusy::fail) detail::throw_busy(spec, busy_key, waited);
      return;  // skip / fallback: the proxy decides what the call returns
    }
    {
      // The lease is on the call chain while the method runs.
      struct RestoreChain {
        std::shared_ptr<const detail::ChainNode> saved = detail::LeaseControl::head();
        ~RestoreChain() { detail::LeaseControl::head() = std::move(saved); }
      } restore;
      auto& head = detail::LeaseControl::head();
      head = std::make_shared<const detail::ChainNode>(detail::ChainNode{lease.shared(), head});
      inv.proceed();  // on an exception the handle releases quietly on unwinding
    }
    lease.release();  // a lost lease or a failed release: per the options' policies
  }
};

}  // namespace

// Registers `lock` with Weave::core when this library is linked. Generated code
// calls only Weave::core: cmake/link/weave_link_lock.cpp refers to
// weave_link_lock so that the link keeps this object.
extern "C" const char weave_link_lock = 0;

namespace {
[[maybe_unused]] const bool lock_registered = [] {
  detail::register_builtin_interceptor("lock", [] { return std::shared_ptr<Interceptor>(std::make_shared<LockInterceptor>()); });
  return true;
}();
}  // namespace

}  // namespace weave
