#include "async/wakeup.h"

#include "weave/asio.h"
#include <utility>

namespace WEAVE_NAMESPACE::detail {

// Ends once, by whichever comes first: notify(), the timer, cancellation
// (decided under the Wakeup's mutex: the one that takes it from waiting_).
// The ending is posted to the waiter's executor, where the timer and the
// cancellation slot are touched (neither is thread-safe).
//
// Only the timer's pending wait owns a Wait (the Wakeup and the slot hold it
// weakly), and the Wait owns the suspended coroutine: so an io_context
// destroyed with the coroutine suspended destroys the timer's wait, the Wait
// and the coroutine's frames (whose destructors give back what they hold),
// where an owning cycle would keep them all forever.
struct Wakeup::Wait {
  using Handler = std::function<void(net::error_code, bool)>;
  Wait(std::weak_ptr<Wakeup> o, net::any_io_executor ex, Handler h)
      : owner(std::move(o)), executor(std::move(ex)), handler(std::move(h)), timer(executor) {}
  std::weak_ptr<Wakeup> owner;
  net::any_io_executor executor;  // the waiter's, counting as outstanding work
  Handler handler;
  net::steady_timer timer;
  net::cancellation_slot slot;

  enum class How { notified, deadline, cancelled };
  static void finish(std::shared_ptr<Wait> w, How how) {
    const net::any_io_executor ex = w->executor;
    net::post(ex, [w = std::move(w), how] {
      w->timer.cancel();
      if (w->slot.is_connected()) w->slot.clear();
      Handler h = std::move(w->handler);
      if (how == How::cancelled)
        h(net::error::operation_aborted, false);
      else
        h({}, how == How::notified);
    });
  }
  // Ends the wait unless another ending took it first.
  static void end(const std::shared_ptr<Wait>& w, How how) {
    const std::shared_ptr<Wakeup> owner = w->owner.lock();
    if (!owner) return;
    {
      Guard g(owner->mutex_);
      if (owner->waiting_.lock() != w) return;
      owner->waiting_.reset();
    }
    finish(w, how);
  }
};

void Wakeup::notify() {
  std::shared_ptr<Wait> w;
  {
    Guard g(mutex_);
    w = waiting_.lock();
    waiting_.reset();
    if (!w) {
      notified_ = true;
      return;
    }
  }
  Wait::finish(std::move(w), Wait::How::notified);
}

net::awaitable<bool> Wakeup::wait_until(Clock::time_point deadline) {
  const Ended ended = co_await watch_until(deadline);
  if (ended == Ended::cancelled) throw net::system_error(net::error::operation_aborted);
  co_return ended == Ended::notified;
}

net::awaitable<Wakeup::Ended> Wakeup::watch_until(Clock::time_point deadline) {
  std::weak_ptr<Wakeup> self = weak_from_this();
  // A named initiation: g++ 12 destroys a temporary with a destructor twice
  // when it stands in a co_await expression (a lambda holding a weak_ptr
  // here). See docs/async.md, "Writing coroutines for g++ 12".
  auto initiation = [this, self, deadline](auto handler) {
        auto slot = net::get_associated_cancellation_slot(handler);
        // The io_context keeps running while another thread has the wake-up.
        auto work = net::prefer(net::get_associated_executor(handler),
                                net::execution::outstanding_work.tracked);
        auto boxed = std::make_shared<decltype(handler)>(std::move(handler));
        auto w = std::make_shared<Wait>(self, work, [boxed](net::error_code ec, bool notified) {
          std::move(*boxed)(ec, notified);
        });
        // Published and armed under the mutex: whoever ends it (notify, on
        // another thread) sees the timer and the slot set, and this never
        // touches the Wakeup after the mutex is given back (the resumed
        // coroutine may destroy it at once).
        Guard g(mutex_);
        if (notified_) {
          notified_ = false;
          g.unlock();
          Wait::finish(std::move(w), Wait::How::notified);
          return;
        }
        waiting_ = w;
        w->timer.expires_at(deadline);  // (max: never; the timer's wait still owns the Wait)
        w->timer.async_wait([w](net::error_code ec) {
          if (!ec) Wait::end(w, Wait::How::deadline);
        });
        if (slot.is_connected()) {
          w->slot = slot;
          slot.assign([weak = std::weak_ptr<Wait>(w)](net::cancellation_type type) {
            if ((type & (net::cancellation_type::terminal | net::cancellation_type::partial)) ==
                net::cancellation_type::none)
              return;
            if (const std::shared_ptr<Wait> w = weak.lock()) Wait::end(w, Wait::How::cancelled);
          });
        }
      };
  auto token = net::as_tuple(net::use_awaitable);
  const auto [ec, notified] =
      co_await net::async_initiate<decltype(token), void(net::error_code, bool)>(
          std::move(initiation), token);
  co_return ec ? Ended::cancelled : notified ? Ended::notified : Ended::deadline;
}

}  // namespace weave::detail
