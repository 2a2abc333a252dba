// The built-in `lock` interceptor: reads the annotation, acquires through the
// process-wide LockClient, keeps the lease on the call chain while the method
// runs, and releases per `release=`. Once the method has run, a failure to
// give the lock back does not throw its result away (ReleaseFailurePolicy).
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include "core/builtin.h"
#include "internal.h"
#include "lock_interceptor.h"
#include "lock_runtime.h"
#include "weave/error.h"
#include "weave/interceptor.h"
#include "weave/invocation.h"
#include "weave_vocabulary.h"

namespace WEAVE_NAMESPACE {
namespace detail {

namespace vocab = vocabulary::lock;
// The C++ enums follow the vocabulary's order (weavegen emits indexes into it).
static_assert(vocab::on_busy_values[static_cast<int>(OnBusy::skip)] == "skip" &&
              vocab::on_busy_values[static_cast<int>(OnBusy::fallback)] == "fallback");
static_assert(vocab::type_values[static_cast<int>(LockType::fair)] == "fair" &&
              vocab::type_values[static_cast<int>(LockType::write)] == "write");
static_assert(vocab::release_values[1] == "on_expiry");

std::shared_ptr<const ParsedLock> ParsedLock::parse(const AnnotationSpec& spec) {
  const Annotation a(spec, {});
  auto p = std::make_shared<ParsedLock>();
  LockSettings& s = p->settings;
  if (a.has("ttl")) s.spec.ttl = a.duration("ttl");
  s.spec.wait = a.has("wait") ? a.duration("wait") : vocab::wait;
  if (a.has("max_hold")) s.spec.max_hold = a.duration("max_hold");
  const std::size_t release = a.has("release") ? a.choice("release", vocab::release_values) : vocab::release;
  s.spec.release = release == 1 ? LockSpec::Release::on_expiry : LockSpec::Release::on_return;
  s.on_busy = static_cast<OnBusy>(a.has("on_busy") ? a.choice("on_busy", vocab::on_busy_values) : vocab::on_busy);
  s.spec.type = static_cast<LockType>(a.has("type") ? a.choice("type", vocab::type_values) : vocab::type);
  p->spec_checked = spec_is_valid(s.spec);
  const std::string_view arg = a.has("keys") ? "keys" : "key";
  const ArgValue* key = a.find(arg);
  if (key && (key->kind == ArgValue::Kind::key_template || key->kind == ArgValue::Kind::key_template_list)) {
    p->first = key->first;
    p->count = key->count;
    if (p->count == 0) throw UsageError("lock keys=[] names no key");
    p->series = &lock_series(key->text);
  } else {
    p->fixed = a.text(arg);  // a UsageError naming the argument when there is none, or of another kind
    p->series = &lock_series(p->fixed);
  }
  return p;
}

}  // namespace detail

namespace {

using detail::OnBusy;
using detail::ParsedLock;
using std::chrono::milliseconds;

class LockInterceptor final : public Interceptor {
 public:
  // Every call's chain runs this first (generated or written by hand); a
  // bad value fails the call, and the chain names the method.
  std::shared_ptr<const void> prepare(const AnnotationSpec& spec) override { return ParsedLock::parse(spec); }

  void around(Invocation& inv) override {
    const ParsedLock& p = *inv.prepared<ParsedLock>();
    std::string_view one;
    std::vector<std::string_view> many;
    run(inv, p.keys(inv.annotation(), one, many), p);
  }

 private:
  // One key, or several as one lease taken all-or-nothing in sorted order
  // (so two calls locking overlapping sets cannot deadlock).
  static void run(Invocation& inv, std::span<const std::string_view> keys, const ParsedLock& p) {
    const detail::LockSettings& settings = p.settings;
    const LockSpec& spec = settings.spec;
    const detail::LockRuntimeRef rt;
    LockClient& client = rt->client;
    milliseconds waited{0};
    std::string busy_key;
    // The call's context, read once: the call stays on this thread.
    std::shared_ptr<const detail::ContextLink>& context = detail::context_head();
    LeaseHandle lease =
        detail::LeaseControl::try_acquire(client, keys, spec, p.spec_checked, &waited, &busy_key, *p.series, context,
                                          /*lend_client=*/true);  // `rt` outlives the lease's hold
    if (!lease) {
      if (settings.on_busy == OnBusy::fail) detail::throw_busy(spec, busy_key, waited);
      return;  // skip / fallback: the proxy decides what the call returns
    }
    {
      // The lease is in the call's context while the method runs.
      detail::LeaseControl::LentPush in_context(context, lease);
      inv.proceed();  // on an exception the handle releases quietly on unwinding
    }
    lease.release();  // a lost lease or a failed release: per the options' policies
  }
};

}  // namespace

// Registers `lock` with Weave::core when this object is linked. Generated code
// calls only Weave::core: every target linking the static Weave::lock names
// weave_link_lock (-u: REGISTERS in src/CMakeLists.txt) so that the link
// keeps this object.
extern "C" const char weave_link_lock = 0;

namespace {
[[maybe_unused]] const bool lock_registered = [] {
  detail::register_builtin_interceptor("lock", [] { return std::shared_ptr<Interceptor>(std::make_shared<LockInterceptor>()); });
  return true;
}();
}  // namespace

}  // namespace weave
