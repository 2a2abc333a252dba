// The built-in `lock` interceptor: reads the annotation, acquires through the
// process-wide LockClient, keeps the lease on the call chain while the method
// runs, and releases per `release=`.
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
    const std::string where = " (lock on " + std::string(inv.method()) + ")";
    if (a.has("keys"))
      throw UsageError("lock keys=[...] (several keys) is not yet supported" + where);
    const std::string key(a.text("key"));

    LockSpec spec;
    if (a.has("ttl")) spec.ttl = a.duration("ttl");
    if (a.has("wait")) spec.wait = a.duration("wait");
    if (a.has("release")) {
      std::string_view r = a.text("release");
      if (r == "on_expiry")
        spec.release = LockSpec::Release::on_expiry;
      else if (r != "on_return")
        throw UsageError("lock release='" + std::string(r) + "' is not one of on_return, on_expiry" + where);
    }
    OnBusy on_busy = OnBusy::fail;
    if (a.has("on_busy")) {
      std::string_view b = a.text("on_busy");
      if (b == "skip")
        on_busy = OnBusy::skip;
      else if (b == "fallback")
        on_busy = OnBusy::fallback;
      else if (b != "throw")
        throw UsageError("lock on_busy='" + std::string(b) + "' is not one of throw, skip, fallback" + where);
    }
    if (a.has("type")) {
      std::string_view t = a.text("type");
      if (t != "reentrant")
        throw UsageError("lock type='" + std::string(t) + "' is not supported yet (only reentrant)" + where);
    }

    LockClient client = default_lock_client();
    milliseconds waited{0};
    LeaseHandle lease = client.try_acquire(key, spec, &waited);
    if (!lease) {
      if (on_busy == OnBusy::fail) throw LockBusy(key, waited);
      return;  // skip / fallback: the proxy decides what the call returns
    }
    {
      LeaseScope in_chain(lease);
      inv.proceed();  // on an exception the handle releases quietly on unwinding
    }
    lease.release();  // reports a lost lease per policy
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
