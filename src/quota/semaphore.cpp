// weave::Semaphore: a request checked, then acquire steps on the runtime's
// store until granted or the wait runs out (FIFO places in line, woken by
// releases); a grant becomes a HeldPermit the renewer keeps alive.
#include <algorithm>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "core/process.h"
#include "core/renewer.h"
#include "core/unique_token.h"
#include "quota/held_permit.h"
#include "quota/permit_attempt.h"
#include "weave/duration.h"
#include "weave/error.h"

namespace WEAVE_NAMESPACE {
namespace detail {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using S = QuotaCounterStripe;

void check_request(const QuotaRuntime& rt, std::string_view key, const SemaphoreSpec& spec) {
  if (key.empty()) throw UsageError("semaphore: the key is empty");
  const auto bad = [key](const std::string& why) { return UsageError("semaphore '" + std::string(key) + "': " + why); };
  if (key.size() > rt.options().max_key_bytes)
    throw bad("the key is " + std::to_string(key.size()) + " bytes, over QuotaOptions::max_key_bytes (" +
              std::to_string(rt.options().max_key_bytes) + ")");
  if (spec.permits == 0 || spec.permits > kMaxPermits)
    throw bad("permits must be 1 to " + std::to_string(kMaxPermits) + ", not " + std::to_string(spec.permits));
  if (spec.wait.count() < 0) throw bad("wait must not be negative");
}

}  // namespace

PermitAttempt::PermitAttempt(QuotaRuntime& rt, std::string_view key, const SemaphoreSpec& spec,
                             SemaphoreSeries& series)
    : rt_(rt), series_(series), key_(key), permits_(spec.permits) {
  check_request(rt, key, spec);
  start_ = Clock::now();
  const bool waits = spec.wait.count() > 0;
  deadline_ = !waits ? start_ : spec.wait >= max_duration ? Clock::time_point::max() : start_ + spec.wait;
  lease_ = rt.options().permit_lease;
  place_ = waits ? rt.options().line_place : milliseconds(0);
  owner_ = unique_token();
}

PermitAttempt::~PermitAttempt() { leave_line(); }

void PermitAttempt::count(std::atomic<std::uint64_t> QuotaCounterStripe::*field, std::uint64_t n) noexcept {
  rt_.count(field, n);
  series_.counts.add(field, n);
}

void PermitAttempt::leave_line() noexcept {
  if (!in_line_) return;
  in_line_ = false;
  try {
    rt_.semaphores().leave_line(request());
  } catch (...) {
    // Its place runs out by itself (line_place).
  }
}

PermitWaiter& PermitAttempt::prepare_wait(WaitOn how) {
  waiter_ = rt_.semaphores().prepare_wait(key_, owner_, how);
  return *waiter_;
}

Permit PermitAttempt::granted(std::uint64_t fencing_token, Clock::time_point sent, Clock::time_point now,
                              milliseconds first_term) {
  count(&S::permits_acquired);
  if (in_line_) count(&S::permits_waited);
  series_.wait.observe(now - start_);
  in_line_ = false;  // (the grant took it out of line)
  return HeldPermit::hand_out(std::allocate_shared<HeldPermit>(std::allocator<HeldPermit>{}, key_, owner_,
                                                                fencing_token, permits_, lease_, first_term, sent,
                                                                rt_.shared_from_this(), series_));
}

Permit PermitAttempt::step(std::optional<Clock::time_point>& again) {
  again.reset();
  if (waiter_) {
    // A release granted the permit for a place's time after the last
    // request was sent (so it lasts from then at least), the first renewal
    // due a third of it later. A grant older than that (this process was
    // stopped) is asked for: the store says whether it still holds.
    if (const std::optional<std::uint64_t> token = waiter_->take_grant()) {
      const auto now = Clock::now();
      waited_ = std::chrono::duration_cast<milliseconds>(now - start_);
      if (now - last_sent_ < LeaseCore::renew_interval(place_)) return granted(*token, last_sent_, now, place_);
    }
  }
  PermitGrant g;
  const auto sent = last_sent_ = Clock::now();
  try {
    g = rt_.semaphores().acquire(request());
  } catch (Error& e) {
    leave_line();
    count(&S::permit_errors);
    name_key(e, key_, "semaphore");
    throw;
  }
  if (g.reclaimed > 0) count(&S::permits_reclaimed, g.reclaimed);
  const auto now = Clock::now();
  waited_ = std::chrono::duration_cast<milliseconds>(now - start_);
  if (g.granted) return granted(g.fencing_token, sent, now);
  in_line_ = waits();
  if (now >= deadline_) {
    leave_line();
    count(&S::permits_busy);
    return {};
  }
  // Asked again when a holder's lease (or the first place) runs out, in
  // time to keep its place, or at the deadline.
  again = std::min({deadline_, now + g.retry_in + milliseconds(1), now + place_ / 3});
  return {};
}

Permit take_on_this_thread(PermitAttempt& a) {
  PermitWaiter* waiter = a.waits() ? &a.prepare_wait(PermitAttempt::WaitOn::this_thread) : nullptr;
  for (;;) {
    std::optional<Clock::time_point> again;
    Permit p = a.step(again);
    if (p || !again) return p;
    waiter->wait_until(*again);
  }
}

namespace {

// Semaphore's own calls count under semaphore="" (their keys are not a bounded label).
SemaphoreSeries& direct_series() {
  static SemaphoreSeries& direct = semaphore_series("");
  return direct;
}

}  // namespace

HeldPermit::HeldPermit(std::string_view key, std::string owner, std::uint64_t token, std::uint32_t permits,
                       milliseconds lease, milliseconds first_term, Clock::time_point sent,
                       std::shared_ptr<QuotaRuntime> runtime, SemaphoreSeries& series)
    : LeaseCore([&](Terms& terms) {
        terms.key = key;
        terms.owner = std::move(owner);
        terms.lease_time = lease;
        terms.renew_every = renew_interval(lease);
        terms.acquired_at = sent;  // conservative: the store's lease started later
        terms.first_term = first_term;
        terms.group = std::move(runtime);
      }),
      SemaphorePermit(static_cast<LeaseCore&>(*this)),
      token_(token),
      permits_(permits),
      series_(series),
      pid_(current_pid()) {
  start_deadline(sent, this->runtime().semaphores().in_process());
}

// The group of a permit is the runtime that granted it, which the permit keeps alive.
QuotaRuntime& HeldPermit::runtime() const noexcept {
  return const_cast<QuotaRuntime&>(static_cast<const QuotaRuntime&>(*terms().group));
}

Permit HeldPermit::hand_out(std::shared_ptr<HeldPermit> held) {
  Renewer::instance().watch(*held, held, /*fresh=*/true);
  return Permit(std::move(held));
}

bool HeldPermit::give_back() {
  check_deadlines(Clock::now(), /*even_if_released=*/true);  // ran out before this release
  if (!drop_hold() || pid_ != current_pid()) return !is_lost();  // (a fork()ed child's copy is the parent's)
  count(&S::permits_released);
  bool held_in_store = false;
  try {
    held_in_store =
        runtime().semaphores().release({key(), owner_token(), permits_, lease_time(), runtime().options().line_place});
  } catch (Error& e) {
    count(&S::permit_errors);
    name_key(e, key(), "semaphore");
    throw;
  }
  if (!held_in_store) record_lost(gone_cause(), /*even_if_released=*/true);
  if (!is_lost()) return true;
  report_lost_once();  // unless the notifier did already
  return false;
}

std::string HeldPermit::ran_out_cause() const {
  return "its lease ran out before it was renewed (the process was paused, or the store did not answer the "
         "renewals in time): another caller may hold the permit now";
}

std::string HeldPermit::gone_cause() const {
  return "the store no longer held it: its lease had run out, and another caller may hold the permit now";
}

std::shared_ptr<const ContextLink> HeldPermit::context_link(std::shared_ptr<const ContextLink> parent) {
  link_ = ContextLink{this, HeldKind::semaphore, std::move(parent)};
  return std::shared_ptr<const ContextLink>(shared_from_this(), &link_);
}

void HeldPermit::count(std::atomic<std::uint64_t> QuotaCounterStripe::*field) noexcept {
  runtime().count(field);
  series_.counts.add(field);
}

void HeldPermit::count_lost() noexcept { count(&S::permits_lost); }

void HeldPermit::report_lost() noexcept {
  report_to(runtime().options().on_event, "semaphore", *this,
            "the call ran on without its permit: more than the semaphore's permits may have run at once");
}

void QuotaRuntime::renew(std::span<LeaseCore* const> permits, std::vector<bool>& owned) const {
  std::vector<SemaphoreStore::Renewal> items;
  items.reserve(permits.size());
  for (LeaseCore* core : permits) {
    const auto& p = static_cast<const HeldPermit&>(*core);
    items.push_back({p.key(), p.owner_token(), p.lease_time()});
  }
  owned = semaphores_->renew(items);
}

}  // namespace detail

// ---- SemaphorePermit, Permit ----

std::uint64_t SemaphorePermit::fencing_token() const noexcept {
  return static_cast<const detail::HeldPermit&>(*this).token();
}

const SemaphorePermit* Permit::operator->() const noexcept { return held_.get(); }

Permit& Permit::operator=(Permit&& other) noexcept {
  if (this != &other) {
    Permit old(std::move(*this));  // gives back what this held
    held_ = std::move(other.held_);
  }
  return *this;
}

Permit::~Permit() {
  if (!held_) return;
  const std::shared_ptr<detail::HeldPermit> held = std::move(held_);
  try {
    held->give_back();
  } catch (const std::exception& e) {
    // Counted already; the permit runs out by itself.
    detail::report_event(held->runtime().options().on_event, EventKind::release_failed, "semaphore", held->key(), e,
                         "semaphore '" + held->key() + "': the permit was not given back; it runs out by itself");
  }
}

bool Permit::release() {
  if (!held_) throw UsageError("semaphore: release() of an empty Permit (never granted, or released already)");
  const std::shared_ptr<detail::HeldPermit> held = std::move(held_);
  return held->give_back();
}

const SemaphorePermit* current_permit() noexcept {
  const detail::ContextLink* n = detail::find_in_context(detail::HeldKind::semaphore, [](const HeldLease&) { return true; });
  return n ? static_cast<const SemaphorePermit*>(n->held) : nullptr;
}

const SemaphorePermit* current_permit(std::string_view key) noexcept {
  const detail::ContextLink* n =
      detail::find_in_context(detail::HeldKind::semaphore, [key](const HeldLease& h) { return h.key() == key; });
  return n ? static_cast<const SemaphorePermit*>(n->held) : nullptr;
}

// ---- Semaphore ----

Semaphore::Semaphore() = default;
Semaphore::Semaphore(QuotaOptions options) : own_(std::make_shared<detail::QuotaRuntime>(std::move(options))) {}

Permit Semaphore::try_acquire(std::string_view key, const SemaphoreSpec& spec) {
  return detail::with_runtime(own_, [&](detail::QuotaRuntime& rt) {
    detail::PermitAttempt a(rt, key, spec, detail::direct_series());
    return detail::take_on_this_thread(a);
  });
}

Permit Semaphore::acquire(std::string_view key, const SemaphoreSpec& spec) {
  return detail::with_runtime(own_, [&](detail::QuotaRuntime& rt) {
    detail::PermitAttempt a(rt, key, spec, detail::direct_series());
    Permit p = detail::take_on_this_thread(a);
    if (!p) throw SemaphoreBusy(std::string(key), spec.permits, a.waited());
    return p;
  });
}

std::vector<SemaphoreState> Semaphore::list(std::string_view pattern) {
  std::vector<SemaphoreState> out =
      detail::with_runtime(own_, [&](detail::QuotaRuntime& rt) { return rt.semaphores().list(pattern); });
  for (SemaphoreState& s : out)
    std::sort(s.holders.begin(), s.holders.end(),
              [](const PermitHolder& a, const PermitHolder& b) { return a.fencing_token < b.fencing_token; });
  std::sort(out.begin(), out.end(), [](const SemaphoreState& a, const SemaphoreState& b) { return a.key < b.key; });
  return out;
}

}  // namespace weave
