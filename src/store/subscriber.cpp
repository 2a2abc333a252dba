#include "store/subscriber.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include <hiredis/hiredis.h>

#include "core/wake_list.h"
#include "core/events.h"
#include "store/acl.h"
#include "store/cluster_executor.h"
#include "weave/error.h"

namespace WEAVE_NAMESPACE::store {

// Its fields are guarded by the subscriber's mutex_.
struct Subscriber::Channel {
  std::string name;
  int refs = 0;
  // The last command queued for it on the current connection was SUBSCRIBE.
  bool active = false;
  // SUBSCRIBE commands queued and "subscribe" confirmations received for this
  // channel on the current connection; subscribed once active and confirmed >= want.
  std::uint64_t want = 0, confirmed = 0;
  // Bumped by every message, by a lost connection and by a resubscription
  // after a reconnect (a release may have been missed in between).
  std::uint64_t generation = 0;
  // The last message's text, and the generation it made (a later bump
  // without a message, or two messages, leaves them behind `generation`).
  std::string last_message;
  std::uint64_t last_message_generation = 0;
  // Bump the generation when the SUBSCRIBE in flight is answered: after a
  // reconnect (a release may have been missed meanwhile), or for waiters
  // handed the subscription before it was confirmed (subscribe()).
  bool bump_when_answered = false;
  // Since when nobody waits on it; UNSUBSCRIBE goes out after kLinger, so a
  // waiter that retries (LockClient prepares a new waiter per attempt) finds
  // the subscription still confirmed and pays no round trip for it.
  std::chrono::steady_clock::time_point idle_since;
  std::condition_variable cv;
  std::vector<Bell*> bells;  // of live Interests that asked for one
  detail::WakeList wakes;  // Interest::on_change, run at the next bump
  std::vector<Feed*> feeds;  // likewise
  // steady_clock ns when the last confirmation was read: everything sent
  // on the channel before the subscription took effect is behind it.
  std::int64_t confirmed_at = 0;
  std::string error;         // the server refused the last SUBSCRIBE (e.g. MOVED)
};

namespace {
constexpr auto kLinger = std::chrono::milliseconds(2000);
constexpr int kSweepMs = 1000;
bool is_pong(const redisReply* r) {
  // ["pong", ""] on a subscribed connection (RESP2), +PONG before it is.
  if (r->type == REDIS_REPLY_ARRAY && r->elements == 2 && r->element[0]->type == REDIS_REPLY_STRING)
    return std::string_view(r->element[0]->str, r->element[0]->len) == "pong";
  return r->type == REDIS_REPLY_STATUS && std::string_view(r->str, r->len) == "PONG";
}
}

Subscriber::Subscriber(Endpoint endpoint, bool sharded) : endpoint_(std::move(endpoint)), sharded_(sharded) {
  if (::pipe2(pipe_, O_NONBLOCK | O_CLOEXEC) != 0)
    throw IoError(std::string("weave redis: pipe: ") + std::strerror(errno));
}

Subscriber::~Subscriber() {
  {
    detail::Guard g(mutex_);
    stop_ = true;
    for (auto& [name, ch] : channels_) ch->cv.notify_all();
    state_cv_.notify_all();
  }
  wake_pipe();
  thread_.join();
  if (ctx_) redisFree(ctx_);
  ::close(pipe_[0]);
  ::close(pipe_[1]);
}

void Subscriber::wake_pipe() {
  char b = 1;
  [[maybe_unused]] auto n = ::write(pipe_[1], &b, 1);  // full pipe = already woken
}

void Subscriber::start_locked() {
  if (started_) return;
  started_ = true;
  thread_ = detail::OwnedThread("weave-sub", [this] { run(); });
}

void Subscriber::enqueue_locked(bool subscribe, const std::string& channel) {
  outgoing_.emplace_back(subscribe, channel);
}

Subscriber::Interest::Interest(Subscriber* s, std::shared_ptr<Channel> ch, std::uint64_t seen, std::shared_ptr<Bell> bell,
                               std::shared_ptr<Feed> feed)
    : sub_(s), keep_(s->weak_from_this().lock()), ch_(std::move(ch)), seen_(seen), bell_(std::move(bell)),
      feed_(std::move(feed)) {
  // under sub_->mutex_ (see subscribe)
  if (bell_) ch_->bells.push_back(bell_.get());
  if (feed_) {
    ch_->feeds.push_back(feed_.get());
    // The confirmation was read before this: its time, or the reader's last
    // mark if later, is a moment up to which nothing on it was missed.
    if (feed_->drained_at)
      feed_->drained_at->store(std::max(s->drained_at_.load(std::memory_order_acquire), ch_->confirmed_at));
    s->wake_pipe();  // the reader now polls at the feeds' tick, not the idle sweep
  }
}

void Subscriber::wake_all() {
  detail::Guard g(mutex_);
  for (auto& [name, ch] : channels_) {
    bump_locked(*ch);
    for (Feed* f : ch->feeds)
      if (f->on_state) f->on_state(false);
  }
}

void Subscriber::mark_drained_locked(std::int64_t at) {
  drained_at_.store(at, std::memory_order_release);
  for (auto& [name, ch] : channels_)
    for (Feed* f : ch->feeds)
      if (f->drained_at) f->drained_at->store(at, std::memory_order_release);
}

void Subscriber::bump_locked(Channel& ch, bool notify_waiters) {
  ++ch.generation;
  if (notify_waiters) ch.cv.notify_all();
  for (Bell* b : ch.bells) b->ring();
  ch.wakes.fire();
}

std::unique_ptr<Subscriber::Interest> Subscriber::subscribe(const std::string& name, std::shared_ptr<Bell> bell,
                                                          std::shared_ptr<Feed> feed) {
  detail::Guard g(mutex_);
  start_locked();
  auto& slot = channels_[name];
  if (!slot) {
    slot = std::make_shared<Channel>();
    slot->name = name;
  }
  std::shared_ptr<Channel> ch = slot;
  ++ch->refs;
  auto ready = [&]() WEAVE_REQUIRES(mutex_) { return connected_ && ch->active && ch->confirmed >= ch->want; };
  if (ready()) return std::make_unique<Interest>(this, ch, ch->generation, bell, feed);  // no round trip
  // A waiter (no feed) checks the state it waits on after subscribing: a
  // SUBSCRIBE still in flight after an earlier caller's wait ended is
  // waited for by its answer's bump, not here again.
  if (!feed && connected_ && ch->active && ch->bump_when_answered)
    return std::make_unique<Interest>(this, ch, ch->generation, bell, feed);
  if (connected_ && !ch->active) {
    ch->error.clear();
    ch->active = true;
    ++ch->want;
    enqueue_locked(true, name);
  }
  g.unlock();
  wake_pipe();
  g.lock();
  auto deadline = std::chrono::steady_clock::now() + endpoint_.connect_timeout + endpoint_.command_timeout;
  std::uint64_t failures_before = connect_failures_;
  const std::uint64_t generation_before = ch->generation;
  mutex_.wait_until(state_cv_, deadline, [&]() WEAVE_REQUIRES(mutex_) {
    return stop_ || connect_failures_ != failures_before || ready() || !ch->error.empty() ||
           (!feed && ch->generation != generation_before);
  });
  if (!stop_ && ready())
    return std::make_unique<Interest>(this, ch, ch->generation, bell, feed);
  if (!stop_ && !feed && connected_ && ch->error.empty()) {
    // A waiter needs no confirmation, only a wake-up when to look again (a
    // feed does: it must know from when on it missed nothing).
    if (ch->active) {
      // The SUBSCRIBE sent, its answer late (a busy server): the answer, a
      // confirmation or a refusal, bumps the channel and so wakes it.
      ch->bump_when_answered = true;
      return std::make_unique<Interest>(this, ch, ch->generation, bell, feed);
    }
    // Dropped since (a cluster slot moved away, its sunsubscribe may come
    // right after the confirmation): at the generation before the drop, the
    // waiter looks again at once, and its next wait subscribes anew.
    return std::make_unique<Interest>(this, ch, generation_before, bell, feed);
  }
  const bool connected = connected_;
  std::string why = connected ? std::string() : last_error_;
  std::string refused = ch->error;
  g.unlock();
  release_interest(ch, nullptr, nullptr);
  if (!refused.empty())
    throw ReplyError("weave redis: " + endpoint_.describe() + " refused to subscribe", refused, acl_hint(refused));
  if (!why.empty() || !connected)
    throw BackendUnavailable("weave redis: cannot subscribe at " + endpoint_.describe() + ": " +
                             (why.empty() ? std::string("not connected") : why));
  throw TimeoutError("weave redis: " + endpoint_.describe() + " did not confirm SUBSCRIBE in time");
}

void Subscriber::release_interest(const std::shared_ptr<Channel>& ch, Bell* bell, Feed* feed) {
  detail::Guard g(mutex_);
  if (bell) std::erase(ch->bells, bell);
  if (feed) std::erase(ch->feeds, feed);
  if (--ch->refs > 0) return;
  if (connected_) {
    // The reader sweeps idle channels at least every kLinger / 2 while any
    // subscription is active: no wake-up (and context switch) per waiter.
    ch->idle_since = std::chrono::steady_clock::now();
  } else {
    auto it = channels_.find(ch->name);
    if (it != channels_.end() && it->second == ch) channels_.erase(it);
  }
}

Subscriber::Interest::~Interest() {
  {
    detail::Guard g(sub_->mutex_);
    ch_->wakes.drop(this);
  }
  sub_->release_interest(ch_, bell_.get(), feed_.get());
}

void Subscriber::Interest::on_change(std::function<void()> wake) {
  bool armed;
  {
    detail::Guard g(sub_->mutex_);
    armed = ch_->wakes.arm(this, wake, /*changed=*/ch_->generation != seen_ || sub_->stop_);
  }
  if (!armed) wake();  // changed already
}

bool Subscriber::Interest::wait_until(std::chrono::steady_clock::time_point deadline, std::string* message) {
  detail::Guard g(sub_->mutex_);
  const bool changed = sub_->mutex_.wait_until(
      ch_->cv, deadline, [&]() WEAVE_REQUIRES(sub_->mutex_) { return ch_->generation != seen_ || sub_->stop_; });
  if (!changed) return false;
  if (message) {
    const bool just_one = ch_->generation == seen_ + 1 && ch_->last_message_generation == ch_->generation;
    if (just_one)
      *message = ch_->last_message;
    else
      message->clear();
  }
  seen_ = ch_->generation;
  return true;
}

bool Subscriber::connect_once() {
  redisContext* c = nullptr;
  try {
    c = connect_raw(endpoint_);
    handshake(c, endpoint_);
  } catch (const std::exception& e) {
    if (c) redisFree(c);
    detail::Guard g(mutex_);
    last_error_ = e.what();
    ++connect_failures_;
    state_cv_.notify_all();
    return false;
  }
  redisEnableKeepAlive(c);
  detail::Guard g(mutex_);
  ctx_ = c;
  connected_ = true;
  bool again = ever_connected_;
  ever_connected_ = true;
  if (again) ++reconnects_;
  const std::string lost_because = again ? last_error_ : std::string();
  outgoing_.clear();
  sent_subscribes_.clear();
  for (auto it = channels_.begin(); it != channels_.end();) {
    auto& ch = it->second;
    ch->want = ch->confirmed = 0;
    ch->error.clear();
    if (ch->refs == 0) {
      it = channels_.erase(it);
      continue;
    }
    ch->want = 1;
    ch->active = true;
    ch->bump_when_answered = again;
    enqueue_locked(true, ch->name);
    ++it;
  }
  state_cv_.notify_all();
  g.unlock();
  if (again)
    detail::emit_notice(EventKind::reconnected, "store", endpoint_.describe(),
                        "subscribed again (" + lost_because + ")");
  return true;
}

void Subscriber::disconnect_locked(const std::string& why) {
  if (ctx_) redisFree(ctx_);
  ctx_ = nullptr;
  pings_due_.clear();
  connected_ = false;
  last_error_ = why;
  outgoing_.clear();
  sent_subscribes_.clear();
  for (auto it = channels_.begin(); it != channels_.end();) {
    auto& ch = it->second;
    ch->want = ch->confirmed = 0;
    ch->active = false;
    bump_locked(*ch);  // waiters retry their try_acquire
    for (Feed* f : ch->feeds)
      if (f->on_state) f->on_state(false);
    if (ch->refs == 0)
      it = channels_.erase(it);
    else
      ++it;
  }
  state_cv_.notify_all();
}

void Subscriber::on_reply(redisReply* r) {
  if (is_pong(r)) {
    // Every message published before the PING reached the server is behind.
    if (pings_due_.empty()) return;
    const std::int64_t sent = pings_due_.front();
    pings_due_.pop_front();
    detail::Guard g(mutex_);
    mark_drained_locked(sent);
    return;
  }
  if (r->type == REDIS_REPLY_ERROR) {
    // A refused (S)SUBSCRIBE, e.g. MOVED when the channel's slot is served
    // elsewhere; replies come in the order the commands were sent.
    detail::Guard g(mutex_);
    if (sent_subscribes_.empty()) return;
    // A cluster also answers MOVED to an SUNSUBSCRIBE whose slot has left the
    // node (it dropped that subscription itself): a redirect naming another
    // slot than the oldest SSUBSCRIBE's is that answer, not this one's.
    const std::string_view text(r->str, r->len);
    if (const auto slot = redirect_slot(text); sharded_ && slot && *slot != key_slot(sent_subscribes_.front())) return;
    std::string name = std::move(sent_subscribes_.front());
    sent_subscribes_.pop_front();
    auto it = channels_.find(name);
    if (it == channels_.end()) return;
    auto& ch = it->second;
    ch->error.assign(r->str, r->len);
    ch->active = false;
    ch->want = ch->confirmed;
    if (std::exchange(ch->bump_when_answered, false)) bump_locked(*ch);  // its waiters subscribe again
    state_cv_.notify_all();
    return;
  }
  if (r->type != REDIS_REPLY_ARRAY || r->elements < 3 || r->element[0]->type != REDIS_REPLY_STRING ||
      r->element[1]->type != REDIS_REPLY_STRING)
    return;
  std::string_view kind(r->element[0]->str, r->element[0]->len);
  if (sharded_ && !kind.empty() && kind.front() == 's') kind.remove_prefix(1);  // smessage, ssubscribe, ...
  std::string name(r->element[1]->str, r->element[1]->len);
  // A message's waiters are told once the lock is given back (declared
  // before the guard, destroyed after it): told under it, each would wake
  // only to wait for the lock again.
  struct NotifyAfterUnlock {
    std::shared_ptr<Channel> channel;
    ~NotifyAfterUnlock() {
      if (channel) channel->cv.notify_all();
    }
  } notify;
  detail::Guard g(mutex_);
  auto it = channels_.find(name);
  if (it == channels_.end()) return;
  auto& ch = it->second;
  if (kind == "message") {
    bump_locked(*ch, /*notify_waiters=*/false);
    notify.channel = ch;
    if (r->element[2]->type == REDIS_REPLY_STRING) {
      ch->last_message.assign(r->element[2]->str, r->element[2]->len);
      ch->last_message_generation = ch->generation;
    }
    if (r->element[2]->type == REDIS_REPLY_STRING)
      for (Feed* f : ch->feeds)
        if (f->on_message) f->on_message(std::string_view(r->element[2]->str, r->element[2]->len));
  } else if (kind == "subscribe") {
    if (!sent_subscribes_.empty() && sent_subscribes_.front() == name) sent_subscribes_.pop_front();
    ++ch->confirmed;
    ch->confirmed_at = std::chrono::steady_clock::now().time_since_epoch().count();
    if (ch->bump_when_answered && ch->confirmed >= ch->want) {
      ch->bump_when_answered = false;
      bump_locked(*ch);
      for (Feed* f : ch->feeds)
        if (f->on_state) f->on_state(true);
    }
    state_cv_.notify_all();
  } else if (kind == "unsubscribe") {
    if (sharded_ && ch->active && ch->confirmed >= ch->want && ch->confirmed > 0) {
      // The server dropped a sharded subscription (its slot moved): wake the
      // waiters; their next prepare_wait subscribes again (and is routed anew).
      ch->active = false;
      ch->want = ch->confirmed = 0;
      bump_locked(*ch);
      for (Feed* f : ch->feeds)
        if (f->on_state) f->on_state(false);
      state_cv_.notify_all();  // a subscribe() still waiting for it
      return;
    }
    if (ch->refs == 0 && !ch->active && ch->confirmed >= ch->want) channels_.erase(it);
  }
}

void Subscriber::run() {
  int backoff_ms = 50;
  for (;;) {
    bool want_connection;
    {
      detail::Guard g(mutex_);
      if (stop_) return;
      want_connection = false;
      for (auto& [name, ch] : channels_)
        if (ch->refs > 0) want_connection = true;
    }
    if (!ctx_) {
      if (want_connection && connect_once()) {
        backoff_ms = 50;
      } else {
        // Nobody waits, or the server is down: sleep until woken (or the backoff).
        pollfd p{pipe_[0], POLLIN, 0};
        ::poll(&p, 1, want_connection ? backoff_ms : -1);
        char buf[64];
        while (::read(pipe_[0], buf, sizeof buf) > 0) {
        }
        if (want_connection) backoff_ms = std::min(backoff_ms * 2, 1000);
        continue;
      }
    }
    // Unsubscribe channels idle for kLinger; send what was queued.
    std::deque<std::pair<bool, std::string>> out;
    int poll_ms = -1;
    auto now = std::chrono::steady_clock::now();
    std::chrono::milliseconds confirm_every{0};  // 0: no feed asks
    {
      detail::Guard g(mutex_);
      for (auto& [name, ch] : channels_) {
        if (ch->active) poll_ms = poll_ms < 0 ? kSweepMs : std::min(poll_ms, kSweepMs);
        for (const Feed* f : ch->feeds)
          if (f->drained_at && f->confirm_every.count() > 0 &&
              (confirm_every.count() == 0 || f->confirm_every < confirm_every))
            confirm_every = f->confirm_every;
        if (ch->refs > 0 || !ch->active) continue;
        auto idle = now - ch->idle_since;
        if (idle >= kLinger) {
          ch->active = false;
          enqueue_locked(false, name);
        } else {
          auto left = std::chrono::duration_cast<std::chrono::milliseconds>(kLinger - idle).count() + 1;
          if (poll_ms < 0 || left < poll_ms) poll_ms = static_cast<int>(left);
        }
      }
      out.swap(outgoing_);
    }
    for (auto& [sub, name] : out) {
      Command c{sub ? (sharded_ ? "SSUBSCRIBE" : "SUBSCRIBE") : (sharded_ ? "SUNSUBSCRIBE" : "UNSUBSCRIBE"), name};
      redisAppendCommandArgv(ctx_, c.argc(), c.argv(), c.lens());
      if (sub) {
        ++subscribes_sent_;
        detail::Guard g(mutex_);
        sent_subscribes_.push_back(name);
      }
    }
    // One confirming PING at a time, one per confirm_every, after any
    // (S)SUBSCRIBE just queued (its reply then confirms them too).
    bool pinged = false;
    if (confirm_every.count() > 0) {
      if (pings_due_.empty() && now - last_ping_ >= confirm_every) {
        redisAppendCommand(ctx_, "PING");
        pings_due_.push_back(now.time_since_epoch().count());
        last_ping_ = now;
        pinged = true;
      }
      const auto next = std::chrono::ceil<std::chrono::milliseconds>(last_ping_ + confirm_every - now).count();
      const int wait = static_cast<int>(std::max<std::int64_t>(next, 1));
      if (poll_ms < 0 || wait < poll_ms) poll_ms = wait;
    }
    bool failed = false;
    if ((!out.empty() || pinged) && send_output(ctx_, /*wait=*/true) < 0) failed = true;
    if (!failed) {
      pollfd p[2] = {{ctx_->fd, POLLIN, 0}, {pipe_[0], POLLIN, 0}};
      ::poll(p, 2, poll_ms);
      if (p[1].revents) {
        char buf[64];
        while (::read(pipe_[0], buf, sizeof buf) > 0) {
        }
      }
      if (p[0].revents) {
        if (redisBufferRead(ctx_) != REDIS_OK) {
          failed = true;
        } else {
          for (;;) {
            void* raw = nullptr;
            if (redisReaderGetReply(ctx_->reader, &raw) != REDIS_OK) {
              failed = true;
              break;
            }
            if (!raw) break;
            Reply reply(static_cast<redisReply*>(raw));
            on_reply(reply.get());
          }
        }
      }
    }
    if (failed) {
      detail::Guard g(mutex_);
      std::string why = ctx_->errstr[0] ? ctx_->errstr : "protocol error";
      disconnect_locked("subscriber connection lost: " + why);
    }
  }
}

}  // namespace weave::store
