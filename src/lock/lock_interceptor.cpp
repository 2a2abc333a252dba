// The built-in `lock` interceptor: reads the annotation, acquires through the
// process-wide LockClient, keeps the lease on the call chain while the method
// runs, and releases per `release=`.
#include <algorithm>
#include <exception>
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
    // One key, or several taken all-or-nothing in sorted order (so two calls
    // locking overlapping sets cannot deadlock).
    std::vector<std::string> keys;
    if (a.has("keys")) {
      for (std::string_view k : a.texts("keys")) keys.emplace_back(k);
      std::sort(keys.begin(), keys.end());
      keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
      if (keys.empty()) throw UsageError("lock keys=[] names no key" + where());
    } else {
      keys.emplace_back(a.text("key"));
    }

    LockSpec spec;
    if (a.has("ttl")) spec.ttl = a.duration("ttl");
    if (a.has("wait")) spec.wait = a.duration("wait");
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
    const auto start = std::chrono::steady_clock::now();
    std::vector<LeaseHandle> leases;
    leases.reserve(keys.size());
    for (const std::string& key : keys) {
      LockSpec one = spec;
      if (spec.wait != forever && spec.wait > milliseconds(0)) {  // one budget for all keys
        auto left = spec.wait - std::chrono::duration_cast<milliseconds>(
                                    std::chrono::steady_clock::now() - start);
        one.wait = std::max(left, milliseconds(0));
      }
      milliseconds waited{0};
      LeaseHandle lease = client.try_acquire(key, one, &waited);
      if (!lease) {
        leases.clear();  // all or nothing: give back what we took
        if (on_busy == OnBusy::fail)
          throw LockBusy(key, std::chrono::duration_cast<milliseconds>(
                                  std::chrono::steady_clock::now() - start));
        return;  // skip / fallback: the proxy decides what the call returns
      }
      leases.push_back(std::move(lease));
    }
    {
      // The leases are on the call chain while the method runs.
      struct RestoreChain {
        std::shared_ptr<const detail::ChainNode> saved = detail::LeaseControl::head();
        ~RestoreChain() { detail::LeaseControl::head() = std::move(saved); }
      } restore;
      auto& head = detail::LeaseControl::head();
      for (auto& l : leases)
        head = std::make_shared<const detail::ChainNode>(detail::ChainNode{l.shared(), head});
      inv.proceed();  // on an exception the handles release quietly on unwinding
    }
    // Release every lease, then report the first loss (per policy).
    std::exception_ptr first;
    for (auto& l : leases) {
      try {
        l.release();
      } catch (...) {
        if (!first) first = std::current_exception();
      }
    }
    if (first) std::rethrow_exception(first);
  }
};

}  // namespace

namespace detail {

std::shared_ptr<Interceptor> make_builtin_interceptor(std::string_view annotation_name) {
  if (annotation_name == "lock") return std::make_shared<LockInterceptor>();
  return nullptr;
}

}  // namespace detail
}  // namespace weave
