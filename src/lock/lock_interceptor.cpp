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
#include "weave/error.h"
#include "weave/interceptor.h"
#include "weave/invocation.h"
#include "weave_vocabulary.h"

namespace WEAVE_NAMESPACE {
namespace {

using std::chrono::milliseconds;

enum class OnBusy { fail, skip, fallback };

// What [[lock(...)]] says besides its keys.
struct Settings {
  LockSpec spec;
  OnBusy on_busy = OnBusy::fail;
};

namespace vocab = vocabulary::lock;
// The C++ enums follow the vocabulary's order (weavegen emits indexes into it).
static_assert(vocab::on_busy_values[static_cast<int>(OnBusy::skip)] == "skip" &&
              vocab::on_busy_values[static_cast<int>(OnBusy::fallback)] == "fallback");
static_assert(vocab::type_values[static_cast<int>(LockType::fair)] == "fair" &&
              vocab::type_values[static_cast<int>(LockType::write)] == "write");
static_assert(vocab::release_values[1] == "on_expiry");

// Throws UsageError for a value outside the vocabulary. An argument not
// written takes the vocabulary's default (annotations/lock.json).
Settings read_settings(const Annotation& a) {
  Settings s;
  if (a.has("ttl")) s.spec.ttl = a.duration("ttl");
  s.spec.wait = a.has("wait") ? a.duration("wait") : vocab::wait;
  if (a.has("max_hold")) s.spec.max_hold = a.duration("max_hold");
  const std::size_t release = a.has("release") ? a.choice("release", vocab::release_values) : vocab::release;
  s.spec.release = release == 1 ? LockSpec::Release::on_expiry : LockSpec::Release::on_return;
  s.on_busy = static_cast<OnBusy>(a.has("on_busy") ? a.choice("on_busy", vocab::on_busy_values) : vocab::on_busy);
  s.spec.type = static_cast<LockType>(a.has("type") ? a.choice("type", vocab::type_values) : vocab::type);
  return s;
}

// What a method's [[lock(...)]] says, read once when its chain is built.
struct Parsed {
  Settings settings;
  // The keys: key templates rendered per call into slots [first, first +
  // count), or one key written as text (weavegen's default key, the method's
  // qualified name, or a spec written by hand) when first < 0.
  int first = -1, count = 1;
  std::string fixed;
  detail::LockSeries* series = nullptr;  // the metrics of the key template (or of the fixed key)
};

class LockInterceptor final : public Interceptor {
 public:
  // Every call's chain runs this first (generated or written by hand); a
  // bad value fails the call, and the chain names the method.
  std::shared_ptr<const void> prepare(const AnnotationSpec& spec) override {
    const Annotation a(spec, {});
    auto p = std::make_shared<Parsed>();
    p->settings = read_settings(a);
    const std::string_view arg = a.has("keys") ? "keys" : "key";
    const ArgValue* key = a.find(arg);
    if (key && (key->kind == ArgValue::Kind::key_template || key->kind == ArgValue::Kind::key_template_list)) {
      p->first = key->first;
      p->count = key->count;
      if (p->count == 0) throw UsageError("lock keys=[] names no key");
      p->series = &detail::lock_series(key->text);
    } else {
      p->fixed = a.text(arg);  // a UsageError naming the argument when there is none, or of another kind
      p->series = &detail::lock_series(p->fixed);
    }
    return p;
  }

  void around(Invocation& inv) override {
    const Parsed& p = *inv.prepared<Parsed>();
    const Annotation& a = inv.annotation();
    if (p.count == 1) {
      const std::string_view key = p.first < 0 ? std::string_view(p.fixed) : a.rendered(p.first);
      return run(inv, std::span<const std::string_view>(&key, 1), p);
    }
    std::vector<std::string_view> keys;
    keys.reserve(static_cast<std::size_t>(p.count));
    for (int i = 0; i < p.count; ++i) keys.push_back(a.rendered(p.first + i));
    run(inv, keys, p);
  }

 private:
  // One key, or several as one lease taken all-or-nothing in sorted order
  // (so two calls locking overlapping sets cannot deadlock).
  static void run(Invocation& inv, std::span<const std::string_view> keys, const Parsed& p) {
    const Settings& settings = p.settings;
    const LockSpec& spec = settings.spec;
    LockClient& client = detail::thread_default_client();
    milliseconds waited{0};
    std::string busy_key;
    LeaseHandle lease = detail::LeaseControl::try_acquire(client, keys, spec, &waited, &busy_key, *p.series);
    if (!lease) {
      if (settings.on_busy == OnBusy::fail) detail::throw_busy(spec, busy_key, waited);
      return;  // skip / fallback: the proxy decides what the call returns
    }
    {
      // The lease is in the call's context while the method runs.
      detail::ContextPush in_context(
          detail::LeaseControl::chain_link(lease.shared(), detail::context_head(), /*fresh=*/!lease.reentrant()));
      inv.proceed();  // on an exception the handle releases quietly on unwinding
    }
    lease.release();  // a lost lease or a failed release: per the options' policies
  }
};

}  // namespace

// Registers `lock` with Weave::core when this library is linked. Generated code
// calls only Weave::core: cmake/link/weave_link_lock.cpp refers to
// weave_link_lock so that the link keeps this object.
extern "C" WEAVE_API const char weave_link_lock = 0;

namespace {
[[maybe_unused]] const bool lock_registered = [] {
  detail::register_builtin_interceptor("lock", [] { return std::shared_ptr<Interceptor>(std::make_shared<LockInterceptor>()); });
  return true;
}();
}  // namespace

}  // namespace weave
