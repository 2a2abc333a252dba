// The running call's stop token, the deadlines that fire it, and the
// deadline scope of [[timeout]] and weave::timeout() (core/call_stop.h).
#include "core/call_stop.h"

#include "core/cycle_clock.h"
#include "core/recycled.h"

#include <string>
#include <vector>

#include "weave/call_context.h"
#include "weave/duration.h"
#include "weave/error.h"
#include "weave/held_lease.h"
#include "weave/timeout.h"

namespace WEAVE_NAMESPACE {
namespace detail {

DeadlineTimer::Armed DeadlineTimer::arm(Clock::time_point at, std::stop_source source) {
  Armed armed;
  if (at <= Clock::now()) {  // passed already: stopped now, not at the thread's next turn
    source.request_stop();
    return armed;
  }
  bool earliest = false;
  {
    Guard g(mutex_);
    if (stop_) {  // exiting: nobody is left to wait for it
      source.request_stop();
      return armed;
    }
    armed = {at, ++last_id_};
    earliest = due_.empty() || at < due_.begin()->first.first;
    due_.emplace(std::pair{at, armed.id}, std::move(source));
    start_locked();
  }
  if (earliest) cv_.notify_one();
  return armed;
}

void DeadlineTimer::disarm(const Armed& armed) {
  if (armed.id == 0) return;
  std::stop_source dropped;  // (its last reference may go: outside the lock)
  Guard g(mutex_);
  auto it = due_.find({armed.at, armed.id});
  if (it == due_.end()) return;
  dropped = std::move(it->second);
  due_.erase(it);
}

std::size_t DeadlineTimer::size() {
  Guard g(mutex_);
  return due_.size();
}

void DeadlineTimer::forget_in_child() {
  // The parent's deadlines are its calls': none of them runs in the child.
  due_.clear();
}

void DeadlineTimer::run() {
  std::vector<std::stop_source> fired;
  Guard g(mutex_);
  for (;;) {
    if (stop_) return;
    if (due_.empty()) {
      mutex_.wait(cv_);
      continue;
    }
    const Clock::time_point next = due_.begin()->first.first;
    if (Clock::now() < next) {
      mutex_.wait_until(cv_, next);
      continue;
    }
    const Clock::time_point now = Clock::now();
    while (!due_.empty() && due_.begin()->first.first <= now) {
      fired.push_back(std::move(due_.begin()->second));
      due_.erase(due_.begin());
    }
    g.unlock();
    for (std::stop_source& s : fired) s.request_stop();  // (runs the followers' callbacks)
    fired.clear();
    g.lock();
  }
}

CallDeadline::~CallDeadline() {
  if (!asked_.load(std::memory_order_acquire)) return;
  Guard g(mutex_);
  DeadlineTimer::instance().disarm(armed_);
}

namespace {
// Asks each lease from `from` outward for its stop_token(), which also
// checks its local deadline (a holder back from a pause learns of the loss
// at once): before a cached join's token is handed out, which would not.
void ask_leases(const ContextLink* from) noexcept {
  for (const ContextLink* n = from; n; n = n->parent.get())
    if (n->held) (void)n->held->stop_token();
}
}  // namespace

std::stop_token CallDeadline::token(const ContextLink* outside) const {
  if (asked_.load(std::memory_order_acquire)) ask_leases(outside);
  Guard g(mutex_);
  if (!join_) {
    auto join = std::make_unique<StopJoin>();
    join->follow(call_stop_token(outside));
    if (start_ticks_ != 0) {  // now, less the time since the start by the counter, plus after
      const std::int64_t ticks = cycle_clock::ready_ticks();
      at_ = Clock::now() - std::chrono::nanoseconds(cycle_clock::ns_between(start_ticks_, ticks)) + after_;
    }
    armed_ = DeadlineTimer::instance().arm(at_, join->source());
    join_ = std::move(join);
    asked_.store(true, std::memory_order_release);
  }
  return join_->token();
}

std::stop_token call_stop_token(const ContextLink* head) {
  if (!head) return {};
  if (const StopJoin* j = head->joined.peek()) {
    ask_leases(head);
    return j->token();
  }
  // Innermost first: the leases, up to the first deadline, whose token
  // covers everything outside it.
  std::vector<std::stop_token> tokens;
  for (const ContextLink* n = head; n; n = n->parent.get()) {
    if (n->kind == HeldKind::deadline) {
      tokens.push_back(n->deadline->token(n->parent.get()));
      break;
    }
    if (n->held) tokens.push_back(n->held->stop_token());
  }
  if (tokens.empty()) return {};
  if (tokens.size() == 1) return std::move(tokens.front());
  return head->joined
      .get([&] {
        auto join = std::make_unique<StopJoin>();
        for (const std::stop_token& t : tokens) join->follow(t);
        return join.release();
      })
      .token();
}

namespace {
// A deadline scope's link: the link and the deadline it names, in one block.
struct DeadlineLink {
  ContextLink link;
  CallDeadline deadline;
  DeadlineLink(CallDeadline::Clock::time_point at, std::int64_t start_ticks, std::chrono::milliseconds after)
      : deadline(at, start_ticks, after) {
    link.kind = HeldKind::deadline;
    link.deadline = &deadline;
  }
};
}  // namespace

DeadlineScope::DeadlineScope(std::chrono::milliseconds after, std::string_view name)
    : after_(after), name_(name) {
  check_timeout(after);  // (before the sum: an `after` out of range could overflow it)
  // The start by the cycle clock (9 ns), with the coarse clock's deadline
  // for the end's quick check; until that clock is ready, steady_clock's.
  start_ticks_ = cycle_clock::ready_ticks();
  if (start_ticks_ != 0) {
    at_ = coarse_now() + after;  // (never after the deadline: the coarse clock is behind)
  } else {
    const auto now = std::chrono::steady_clock::now();
    cycle_clock::calibrate(now);
    at_ = now + after;
  }
  std::shared_ptr<const ContextLink>& here = context_head();  // (a blocking call: read once)
  auto made = std::allocate_shared<DeadlineLink>(Recycled<DeadlineLink>{}, at_, start_ticks_, after);
  made->link.parent = here;
  pushed_ = &made->link;
  previous_ = std::move(here);
  // (moved, not copied: the head is the link's one owner, no count changes hands)
  set_context_head(here, std::shared_ptr<const ContextLink>(std::move(made), pushed_));
}

DeadlineScope::~DeadlineScope() {
  std::shared_ptr<const ContextLink>& here = context_head();
  if (here.get() == pushed_) set_context_head(here, std::move(previous_));
}

bool DeadlineScope::passed() const noexcept {
  // Once the body asked for its token, by the time the timer fires it
  // (steady_clock): the verdict must agree with what the body saw.
  const CallDeadline& d = *pushed_->deadline;
  if (d.asked()) return std::chrono::steady_clock::now() >= d.at();
  // Far from the deadline the coarse clock (3 ns, not 21) answers: steady_clock
  // runs about a tick ahead of it, more when the tick is late (measured: a
  // little more on this VM), so it answers only with two ticks to spare.
  if (coarse_now() + 2 * coarse_tick() < at_) return false;
  if (start_ticks_ != 0)
    return cycle_clock::ns_between(start_ticks_, cycle_clock::ready_ticks()) >=
           std::chrono::duration_cast<std::chrono::nanoseconds>(after_).count();
  return std::chrono::steady_clock::now() >= at_;
}

void DeadlineScope::throw_if_passed() const {
  if (passed()) throw TimeoutExceeded(std::string(name_), after_);
}

void DeadlineScope::rethrow() const {
  if (passed()) std::throw_with_nested(TimeoutExceeded(std::string(name_), after_));
  throw;
}

}  // namespace detail

void check_timeout(std::chrono::milliseconds after) {
  if (after.count() <= 0 || after > max_duration)
    throw UsageError("timeout: after must be 1 ms to weave::max_duration (" + std::to_string(max_duration.count()) +
                     " ms), not " + std::to_string(after.count()) + " ms");
}

std::stop_token current_stop_token() { return detail::call_stop_token(detail::context_head().get()); }

}  // namespace weave
