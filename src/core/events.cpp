#include "core/events.h"

#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "core/metrics.h"
#include "core/process.h"
#include "weave/error.h"

namespace WEAVE_NAMESPACE {
namespace {

// (the last enumerator of EventKind: a kind added after it must move this)
constexpr int kEventKinds = static_cast<int>(EventKind::circuit_store_error) + 1;
constexpr int kLinesPerSecond = 10;

struct Handler {
  detail::Mutex mutex;
  std::shared_ptr<const EventHook> hook WEAVE_GUARDED_BY(mutex) =
      std::make_shared<const EventHook>(write_event_to_stderr);
  // The default handler's budget: kLinesPerSecond lines per kind and second
  // (a store outage must not become a line per call).
  struct Budget {
    std::chrono::steady_clock::time_point second{};
    int written = 0;
    long long dropped = 0;
  };
  Budget budget[kEventKinds] WEAVE_GUARDED_BY(mutex);
};

Handler& handler() { return detail::fork_guarded<Handler>(); }

// weave_events_total: every event emitted, per feature (a named series) and kind.
struct EventCounts {
  std::array<std::atomic<std::uint64_t>, kEventKinds> by_kind{};
};

[[maybe_unused]] const bool event_metrics_registered = [] {
  detail::register_metrics_source([](detail::MetricsWriter& w) {
    detail::for_each_named_series<EventCounts>([&](const std::string& feature, const EventCounts& c) {
      for (int k = 0; k < kEventKinds; ++k)
        w.counter("weave_events_total", "Events emitted (weave/event.h), whoever handled them.",
                  {{"feature", feature}, {"kind", to_string(static_cast<EventKind>(k))}},
                  static_cast<double>(c.by_kind[static_cast<std::size_t>(k)].load(std::memory_order_relaxed)));
    });
  });
  return true;
}();

}  // namespace

void set_event_handler(EventHook hook) {
  auto next = std::make_shared<const EventHook>(std::move(hook));
  Handler& h = handler();
  detail::Guard g(h.mutex);
  h.hook.swap(next);
}  // the old hook is freed here unless an event is still using it

std::string event_line(const Event& e) {
  std::string line = "weave: ";
  line.append(to_string(e.level())).append(": ").append(e.feature);
  if (!e.key.empty()) line.append(" \"").append(e.key).append("\"");
  line.append(": ").append(to_string(e.kind)).append(": ");
  line.append(e.cause.empty() ? std::string_view(e.error.what()) : e.cause);
  for (char& c : line)
    if (c == '\n' || c == '\r') c = ' ';  // one event, one line
  return line;
}

void write_event_to_stderr(const Event& e) noexcept {
  try {
    long long dropped = 0;
    {
      Handler& h = handler();
      const int kind = static_cast<int>(e.kind);
      if (kind < 0 || kind >= kEventKinds) return;
      const auto now = std::chrono::steady_clock::now();
      detail::Guard g(h.mutex);
      Handler::Budget& b = h.budget[kind];
      if (now - b.second >= std::chrono::seconds(1)) {
        b.second = now;
        b.written = 0;
      }
      if (b.written == kLinesPerSecond) {
        ++b.dropped;
        return;
      }
      ++b.written;
      std::swap(dropped, b.dropped);
    }
    std::string line = event_line(e);
    if (dropped > 0)
      line.append(" (").append(std::to_string(dropped)).append(" more ").append(to_string(e.kind)).append(" left out before)");
    line += '\n';
    for (std::size_t at = 0; at < line.size();) {
      const ssize_t n = ::write(STDERR_FILENO, line.data() + at, line.size() - at);
      if (n <= 0) return;
      at += static_cast<std::size_t>(n);
    }
  } catch (...) {
  }
}

namespace detail {
namespace {

// The error of an event that reports no failure of a call: names its key.
class Notice : public Error {
 public:
  Notice(std::string_view key, const std::string& what) : Error(std::string(key), what, false) {}
};

}  // namespace

void emit_event(const EventHook& own, const Event& event) noexcept {
  try {
    if (const auto kind = static_cast<std::size_t>(event.kind); kind < static_cast<std::size_t>(kEventKinds))
      named_series<EventCounts>(event.feature).by_kind[kind].fetch_add(1, std::memory_order_relaxed);
    if (own) {
      own(event);
      return;
    }
    std::shared_ptr<const EventHook> hook;
    {
      Handler& h = handler();
      detail::Guard g(h.mutex);
      hook = h.hook;
    }
    if (*hook) (*hook)(event);
  } catch (...) {
    // hooks must not throw; nobody to hand it to
  }
}

void emit_notice(const EventHook& own, EventKind kind, std::string_view feature, std::string_view key,
                 std::string_view what) noexcept {
  try {
    const Notice notice(key, "weave: " + std::string(feature) + " \"" + std::string(key) + "\": " + std::string(what));
    emit_event(own, Event{kind, feature, key, what, notice, nullptr});
  } catch (...) {
  }
}

}  // namespace detail
}  // namespace weave
