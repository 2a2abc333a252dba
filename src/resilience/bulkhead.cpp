// weave::Bulkhead: slots and a FIFO line in this process (BulkheadState),
// and the process-wide bulkheads by name.
#include <algorithm>
#include <string>
#include <utility>

#include "core/metrics.h"
#include "resilience/bulkhead_state.h"
#include "resilience/named_states.h"
#include "weave/bulkhead.h"
#include "weave/duration.h"
#include "weave/error.h"

namespace WEAVE_NAMESPACE {
namespace detail {

bool BulkheadState::enter_or_queue(Waiter& w, bool queue) {
  Guard g(mutex_);
  if (running_ < max_ && line_.empty()) {
    ++running_;
    ++entered_;
    return true;
  }
  if (queue) line_.push_back(&w);
  else ++full_;
  return false;
}

void BulkheadState::wait(Waiter& w, Clock::time_point deadline) {
  std::condition_variable cv;
  Guard g(mutex_);
  w.wake = [&cv] { cv.notify_one(); };
  mutex_.wait_until(cv, deadline, [&]() WEAVE_REQUIRES(mutex_) { return w.granted; });
  w.wake = nullptr;  // (cv goes with this frame)
}

bool BulkheadState::granted_or_leave(Waiter& w, bool gave_up) {
  Guard g(mutex_);
  if (w.granted) {
    ++entered_;
    ++waited_;
    return true;
  }
  line_.remove(&w);
  if (!gave_up) ++full_;
  return false;
}

void BulkheadState::release() noexcept {
  Guard g(mutex_);
  if (line_.empty()) {
    --running_;
    return;
  }
  Waiter* next = line_.front();  // the slot passes to it: running_ stays
  line_.pop_front();
  next->granted = true;
  if (next->wake) next->wake();
}

std::uint32_t BulkheadState::running() const {
  Guard g(mutex_);
  return running_;
}

BulkheadState::Counts BulkheadState::counts() const {
  Guard g(mutex_);
  return {entered_, waited_, full_, running_, static_cast<std::uint32_t>(line_.size())};
}

std::uint32_t BulkheadState::waiting() const {
  Guard g(mutex_);
  return static_cast<std::uint32_t>(line_.size());
}

namespace {

std::shared_ptr<BulkheadState> make_state(std::string name, std::uint32_t max) {
  if (name.empty()) throw UsageError("bulkhead: the name is empty");
  if (max < 1 || max > kMaxBulkheadSlots)
    throw UsageError("bulkhead '" + name + "': max must be 1 to " + std::to_string(kMaxBulkheadSlots) + ", not " +
                     std::to_string(max));
  return std::make_shared<BulkheadState>(std::move(name), max);
}

}  // namespace
}  // namespace detail

BulkheadSlot::BulkheadSlot(BulkheadSlot&& other) noexcept : state_(std::move(other.state_)) {}

BulkheadSlot& BulkheadSlot::operator=(BulkheadSlot&& other) noexcept {
  if (this != &other) {
    release();
    state_ = std::move(other.state_);
  }
  return *this;
}

BulkheadSlot::~BulkheadSlot() { release(); }

void BulkheadSlot::release() noexcept {
  if (const std::shared_ptr<detail::BulkheadState> s = std::exchange(state_, nullptr)) s->release();
}

Bulkhead::Bulkhead(std::string name, std::uint32_t max) : state_(detail::make_state(std::move(name), max)) {}

BulkheadSlot Bulkhead::try_enter_holding(std::chrono::milliseconds wait,
                                         std::shared_ptr<detail::BulkheadState> held) const {
  detail::BulkheadState::Waiter w;
  using Clock = detail::BulkheadState::Clock;
  if (wait.count() <= 0) return state_->enter_or_queue(w, false) ? BulkheadSlot(std::move(held)) : BulkheadSlot();
  // (the clock is read only for a wait: the free path stays a lock's worth)
  const auto deadline = wait >= max_duration ? Clock::time_point::max() : Clock::now() + wait;
  if (state_->enter_or_queue(w, true)) return BulkheadSlot(std::move(held));
  state_->wait(w, deadline);
  if (state_->granted_or_leave(w)) return BulkheadSlot(std::move(held));
  return {};
}

BulkheadSlot Bulkhead::try_enter(std::chrono::milliseconds wait) const { return try_enter_holding(wait, state_); }

BulkheadSlot Bulkhead::try_enter_borrowed(std::chrono::milliseconds wait) const {
  // (a shared_ptr owning nothing: copied and dropped without a count)
  return try_enter_holding(wait, std::shared_ptr<detail::BulkheadState>(std::shared_ptr<void>(), state_.get()));
}

BulkheadSlot Bulkhead::enter(std::chrono::milliseconds wait) const {
  BulkheadSlot slot = try_enter(wait);
  if (!slot) throw BulkheadFull(name(), max(), wait);
  return slot;
}

const std::string& Bulkhead::name() const noexcept { return state_->name(); }
std::uint32_t Bulkhead::max() const noexcept { return state_->max(); }
std::uint32_t Bulkhead::running() const noexcept { return state_->running(); }
std::uint32_t Bulkhead::waiting() const noexcept { return state_->waiting(); }

namespace {
// weave_bulkhead_*: the bulkheads named through weave::bulkhead() or an annotation.
[[maybe_unused]] const bool bulkhead_metrics_registered = [] {
  detail::register_metrics_source([](detail::MetricsWriter& w) {
    detail::for_each_named_state<detail::BulkheadState>([&](const std::string& name, const detail::BulkheadState& state) {
      const detail::BulkheadState::Counts c = state.counts();
      w.counter("weave_bulkhead_calls_total", "Calls at a bulkhead: entered (a slot), full (none within the wait).",
                {{"bulkhead", name}, {"outcome", "entered"}}, static_cast<double>(c.entered));
      w.counter("weave_bulkhead_calls_total", "Calls at a bulkhead: entered (a slot), full (none within the wait).",
                {{"bulkhead", name}, {"outcome", "full"}}, static_cast<double>(c.full));
      w.counter("weave_bulkhead_waited_total", "Slots taken after waiting in line.", {{"bulkhead", name}},
                static_cast<double>(c.waited));
      w.gauge("weave_bulkhead_running", "Slots held now.", {{"bulkhead", name}}, static_cast<double>(c.running));
      w.gauge("weave_bulkhead_waiting", "Calls in line now.", {{"bulkhead", name}}, static_cast<double>(c.waiting));
    });
  });
  return true;
}();
}  // namespace

Bulkhead bulkhead(std::string_view name, std::uint32_t max) {
  return Bulkhead(detail::named_state<detail::BulkheadState>(
      name, [&] { return detail::make_state(std::string(name), max); },
      [&](const detail::BulkheadState& had) -> std::string {
        if (had.max() == max) return "";
        return "bulkhead '" + std::string(name) + "' has max " + std::to_string(had.max()) + " already, not " +
               std::to_string(max) + " (every user of a name must give the same)";
      }));
}

}  // namespace weave
