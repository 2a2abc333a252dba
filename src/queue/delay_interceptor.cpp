// The built-in `delay` interceptor (docs/queue.md): a call through the proxy
// is stored in its queue (method, signature hash, arguments as JSON) and
// returns at once; DelayWorker runs it later below this interceptor.
#include <chrono>
#include <optional>
#include <string>

#include "core/builtin.h"
#include "core/feature_config.h"
#include "queue/delay_call.h"
#include "weave/error.h"
#include "weave/generated/stored_call.h"
#include "weave/interceptor.h"
#include "weave/invocation.h"
#include "weave/queue.h"
#include "weave_vocabulary.h"

namespace WEAVE_NAMESPACE {
namespace {

namespace vocab = vocabulary::delay;

// An argument not written takes the vocabulary's default (annotations/delay.json).
struct Settings {
  std::optional<std::string> queue;  // default: the qualified method name
  std::chrono::milliseconds after = vocab::after;
  OfferOptions offer;
};

class DelayInterceptor final : public Interceptor {
 public:
  std::shared_ptr<const void> prepare(const AnnotationSpec& spec) override {
    const Annotation a(spec, {});
    auto s = std::make_shared<Settings>();
    if (a.has("queue")) s->queue = std::string(a.text("queue"));
    if (a.has("after")) s->after = a.duration("after");
    s->offer.retries = a.has("retries") ? static_cast<int>(a.integer("retries")) : static_cast<int>(vocab::retries);
    s->offer.backoff = a.has("backoff") ? a.duration("backoff") : vocab::backoff;
    s->offer.backoff_cap = a.has("backoff_cap") ? a.duration("backoff_cap") : vocab::backoff_cap;
    return s;
  }

  void around(Invocation& inv) override {
    if (inv.replaying_stored_call()) return inv.proceed();  // (a replay starts below this one)
    const Settings& s = *inv.prepared<Settings>();
    const StoredCallCodec* codec = inv.stored_call();
    if (!codec) throw UsageError("[[delay]] on " + std::string(inv.method()) + ": its proxy stores no calls (weavegen older than the runtime?)");
    Queue queue(s.queue ? *s.queue : std::string(inv.method()));
    queue.offer_json(detail::encode_delay_call(inv.method(), codec->signature_hash, codec->encode(inv.args())), s.after,
                     s.offer);
    // Returning without proceed(): the void method's proxy returns at once.
  }
};

}  // namespace

// Registers `delay` with Weave::core when this library is linked:
// its static targets name weave_link_queue (-u: REGISTERS in src/CMakeLists.txt).
extern "C" const char weave_link_queue = 0;

namespace {
[[maybe_unused]] const bool delay_registered = [] {
  detail::register_builtin_interceptor("delay",
                                       [] { return std::shared_ptr<Interceptor>(std::make_shared<DelayInterceptor>()); });
  using detail::option;
  using O = QueueOptions;
  detail::register_feature_config(detail::describe(detail::with_store_options<O>({
                                                       option("lease", &O::lease),
                                                       option("retries", &O::retries),
                                                       option("backoff", &O::backoff),
                                                       option("backoff_cap", &O::backoff_cap),
                                                       option("max_payload_bytes", &O::max_payload_bytes),
                                                       option("max_delay", &O::max_delay),
                                                   }),
                                                   &configure_queues));
  return true;
}();
}  // namespace

}  // namespace weave
