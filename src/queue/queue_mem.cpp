// mem:// queues: the states and rules of queue_store.h in this process, under
// one mutex per queue; the "server clock" is this machine's system clock.
// Not durable: the messages live as long as the process.
#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>

#include "core/feature_runtime.h"
#include "queue/queue_store.h"

namespace WEAVE_NAMESPACE::detail {
namespace {

using std::chrono::milliseconds;

std::int64_t now_ms() {
  return std::chrono::duration_cast<milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

struct Message {
  std::string payload, last_error;
  std::uint64_t seq = 0, token = 0;
  std::int64_t due = 0;
  std::int64_t until = 0;  // in flight: its lease deadline; dead: when it died (its key in active_ / dead_)
  int retries = 0, failures = 0, deliveries = 0;
  milliseconds backoff{0}, cap{0};
  char state = 'z';
};

// The queues of each mem:// table that hold a schedule's ticks
// (ticking_queues()), for the process's life.
struct TickingQueues {
  Mutex mutex;
  std::map<std::string, std::set<std::string>, std::less<>> by_table WEAVE_GUARDED_BY(mutex);
};
// A fork()ed child starts with none, as with its tables (mem_table).
TickingQueues& ticking() {
  static TickingQueues* all = [] {
    auto* made = new TickingQueues;  // usable during exit
    guard_across_fork(made->mutex, [made]() WEAVE_NO_THREAD_SAFETY_ANALYSIS { made->by_table.clear(); });
    return made;
  }();
  return *all;
}

class MemQueue final : public QueueStore {
 public:
  MemQueue(std::string table, std::string name) : table_(std::move(table)), name_(std::move(name)) {}
  bool in_process() const noexcept override { return true; }
  QueueOffered offer(const QueueOffer& o) override {
    Guard g(mutex_);
    const std::int64_t now = now_ms();
    std::int64_t delay = o.delay.count();
    if (!o.schedule.empty()) {  // a schedule's tick (batch.lua's offer, step for step)
      ScheduleTicks& t = schedule_ticks(o.schedule);
      if (!o.last_run.empty()) t.last_run = o.last_run;
      if (o.tick_ms < 0 || t.paused || messages_.contains(o.id)) return {false};
      if (t.last_tick >= o.tick_ms) return {false};
      if (o.if_last_tick && *o.if_last_tick != t.last_tick) return {false};
      t.last_tick = o.tick_ms;
      t.missed += o.missed;
      delay = std::max<std::int64_t>(o.tick_ms - now, 0);
    }
    if (auto it = messages_.find(o.id); it != messages_.end()) return {false};
    Message& m = messages_[std::string(o.id)];
    m.payload = o.payload;
    m.seq = ++counter_;
    m.retries = o.retries;
    m.backoff = o.backoff;
    m.cap = o.backoff_cap;
    schedule(std::string(o.id), m, now + delay);
    return {true};
  }

  QueueTaken take(milliseconds lease, double jitter, std::size_t max) override {
    Guard g(mutex_);
    return take_locked(lease, jitter, max);
  }

  Settled settle(std::string_view id, std::uint64_t token, SettleAction action, milliseconds delay,
                 std::string_view reason, double jitter) override {
    Guard g(mutex_);
    return settle_locked(id, token, action, delay, reason, jitter);
  }

  AckedAndTaken ack_and_take(std::span<const Held> done, milliseconds lease, double jitter,
                             std::size_t max) override {
    Guard g(mutex_);
    AckedAndTaken out;
    out.acked.reserve(done.size());
    out.errors.resize(done.size());
    for (const Held& d : done)
      out.acked.push_back(settle_locked(d.id, d.token, SettleAction::ack, milliseconds(0), {}, jitter));
    out.taken = take_locked(lease, jitter, max);
    return out;
  }

 private:
  QueueTaken take_locked(milliseconds lease, double jitter, std::size_t max) WEAVE_REQUIRES(mutex_) {
    const std::int64_t now = now_ms();
    QueueTaken out;
    out.dead_lettered = reclaim(now, jitter);
    out.now_ms = now;
    while (out.messages.size() < max && !scheduled_.empty() && scheduled_.begin()->first.first <= now) {
      const std::string id = scheduled_.begin()->second;
      scheduled_.erase(scheduled_.begin());
      Message& m = messages_.at(id);
      m.state = 'a';
      m.token = ++counter_;
      ++m.deliveries;
      m.until = now + lease.count();
      active_.emplace(std::make_pair(m.until, m.seq), id);
      out.messages.push_back(
          QueueMessage{id, m.payload, m.token, m.due, now, m.deliveries, m.failures, m.retries, m.last_error});
    }
    if (out.messages.size() == max) return out;
    if (!scheduled_.empty()) out.next_ms = scheduled_.begin()->first.first;
    if (!active_.empty() && (out.next_ms < 0 || active_.begin()->first.first < out.next_ms))
      out.next_ms = active_.begin()->first.first;
    return out;
  }

  Settled settle_locked(std::string_view id, std::uint64_t token, SettleAction action, milliseconds delay,
                        std::string_view reason, double jitter) WEAVE_REQUIRES(mutex_) {
    auto it = messages_.find(id);
    if (it == messages_.end()) return Settled::gone;
    Message& m = it->second;
    if (m.state != 'a' || m.token != token) return Settled::taken_back;
    active_.erase(std::make_pair(m.until, m.seq));
    const std::int64_t now = now_ms();
    switch (action) {
      case SettleAction::ack:
        messages_.erase(it);
        return Settled::done;
      case SettleAction::retry:
        schedule(it->first, m, now + delay.count());
        return Settled::done;
      case SettleAction::fail:
        return fail_attempt(it->first, m, now, reason, jitter) ? Settled::dead : Settled::done;
      case SettleAction::dead:
        m.last_error = reason;
        kill(it->first, m, now);
        return Settled::dead;
    }
    return Settled::gone;
  }


 public:
  std::vector<bool> renew(std::span<const Held> items, milliseconds lease) override {
    Guard g(mutex_);
    const std::int64_t now = now_ms();
    std::vector<bool> out;
    for (const Held& r : items) {
      auto it = messages_.find(r.id);
      const bool held = it != messages_.end() && it->second.state == 'a' && it->second.token == r.token;
      if (held) {
        Message& m = it->second;
        active_.erase(std::make_pair(m.until, m.seq));
        m.until = now + lease.count();
        active_.emplace(std::make_pair(m.until, m.seq), it->first);
      }
      out.push_back(held);
    }
    return out;
  }

  Edited edit(std::string_view id, EditAction action, milliseconds delay) override {
    Guard g(mutex_);
    auto it = messages_.find(id);
    if (it == messages_.end()) return Edited::absent;
    Message& m = it->second;
    const std::int64_t now = now_ms();
    switch (action) {
      case EditAction::cancel:
        unlink(m);
        messages_.erase(it);
        return Edited::done;
      case EditAction::reschedule:
        if (m.state != 'z') return Edited::wrong_state;
        unlink(m);
        schedule(it->first, m, now + delay.count());
        return Edited::done;
      case EditAction::requeue:
        if (m.state != 'd') return Edited::wrong_state;
        unlink(m);
        m.failures = 0;
        schedule(it->first, m, now);
        return Edited::done;
    }
    return Edited::absent;
  }

  QueueCounts counts(double jitter) override {
    Guard g(mutex_);
    const std::int64_t now = now_ms();
    QueueCounts c;
    c.dead_lettered = reclaim(now, jitter);
    for (const auto& [due_seq, id] : scheduled_) (due_seq.first <= now ? c.ready : c.delayed)++;
    c.in_flight = active_.size();
    c.dead = dead_.size();
    return c;
  }

  QueueMessageState inspect(std::string_view id) override {
    Guard g(mutex_);
    QueueMessageState s;
    s.now_ms = now_ms();
    auto it = messages_.find(id);
    if (it == messages_.end()) return s;
    const Message& m = it->second;
    s.state = m.state;
    s.due_ms = m.due;
    s.deliveries = m.deliveries;
    s.failures = m.failures;
    s.last_error = m.last_error;
    return s;
  }

  QueueTicks ticks(std::string_view schedule) override {
    Guard g(mutex_);
    const auto t = ticks_.find(schedule);
    const std::uint64_t live = scheduled_.size() + active_.size();
    if (t == ticks_.end()) return {-1, now_ms(), 0, {}, live, false};
    return {t->second.last_tick, now_ms(), t->second.missed, t->second.last_run, live, t->second.paused};
  }

  void pause_schedule(std::string_view schedule, bool paused) override {  // (pause.lua, step for step)
    Guard g(mutex_);
    ScheduleTicks& t = schedule_ticks(schedule);
    if (paused) {
      t.paused = true;
    } else if (t.paused) {
      t.paused = false;
      t.last_tick = std::max(t.last_tick, now_ms());
    }
  }

  std::vector<std::string> ticking_queues() override {
    TickingQueues& all = ticking();
    const Guard registry(all.mutex);
    const auto it = all.by_table.find(table_);
    return it == all.by_table.end() ? std::vector<std::string>{} : std::vector<std::string>(it->second.begin(), it->second.end());
  }

  std::uint64_t purge_dead() override {
    Guard g(mutex_);
    const std::uint64_t n = dead_.size();
    for (const auto& [at, id] : dead_) messages_.erase(id);
    dead_.clear();
    return n;
  }

  std::vector<QueueListed> list(char state, std::size_t limit) override {
    Guard g(mutex_);
    std::vector<QueueListed> out;
    auto add = [&](const std::string& id) WEAVE_REQUIRES(mutex_) {
      const Message& m = messages_.find(id)->second;
      out.push_back({id, m.payload, m.last_error, m.due, m.deliveries, m.failures});
    };
    if (state == 'd') {
      for (auto it = dead_.rbegin(); it != dead_.rend() && out.size() < limit; ++it) add(it->second);
    } else {
      for (auto it = scheduled_.begin(); it != scheduled_.end() && out.size() < limit; ++it) add(it->second);
    }
    return out;
  }

  void wake() override {
    Guard g(mutex_);
    ++wakes_;
    cv_.notify_all();
  }

  std::unique_ptr<QueueWaiter> prepare_wait() override {
    Guard g(mutex_);
    return std::make_unique<Waiter>(*this, wakes_);
  }

 private:
  class Waiter final : public QueueWaiter {
   public:
    Waiter(MemQueue& q, std::uint64_t seen) : q_(q), seen_(seen) {}
    bool wait_until(std::chrono::steady_clock::time_point deadline) override {
      Guard g(q_.mutex_);
      if (!q_.mutex_.wait_until(q_.cv_, deadline, [&]() WEAVE_REQUIRES(q_.mutex_) { return q_.wakes_ != seen_; }))
        return false;
      seen_ = q_.wakes_;
      return true;
    }

   private:
    MemQueue& q_;  // tables live as long as the process
    std::uint64_t seen_;
  };

  void schedule(const std::string& id, Message& m, std::int64_t due) WEAVE_REQUIRES(mutex_) {
    m.state = 'z';
    m.due = due;
    m.token = 0;
    scheduled_.emplace(std::make_pair(due, m.seq), id);
    if (scheduled_.begin()->second == id) {
      ++wakes_;
      cv_.notify_all();
    }
  }
  void kill(const std::string& id, Message& m, std::int64_t now) WEAVE_REQUIRES(mutex_) {
    m.state = 'd';
    m.token = 0;
    m.until = now;
    dead_.emplace(std::make_pair(m.until, m.seq), id);
  }
  // True when it went dead.
  bool fail_attempt(const std::string& id, Message& m, std::int64_t now, std::string_view reason, double jitter)
      WEAVE_REQUIRES(mutex_) {
    m.last_error = reason;
    if (++m.failures > m.retries) {
      kill(id, m, now);
      return true;
    }
    double d = double(m.backoff.count()) * std::pow(2.0, m.failures - 1);
    d = std::min(d, double(m.cap.count()));
    schedule(id, m, now + std::int64_t(d / 2 + d / 2 * jitter));
    return false;
  }
  // Returns the ids it dead-lettered.
  std::vector<std::string> reclaim(std::int64_t now, double jitter) WEAVE_REQUIRES(mutex_) {
    std::vector<std::string> dead;
    while (!active_.empty() && active_.begin()->first.first <= now) {
      const std::string id = active_.begin()->second;
      active_.erase(active_.begin());
      if (fail_attempt(id, messages_.at(id), now, kStalled, jitter)) dead.push_back(id);
    }
    return dead;
  }
  // The schedule's record, made (and its queue listed: ticking_queues()) on first use.
  struct ScheduleTicks;
  ScheduleTicks& schedule_ticks(std::string_view schedule) WEAVE_REQUIRES(mutex_) {
    auto [it, made] = ticks_.try_emplace(std::string(schedule));
    if (made) {
      TickingQueues& all = ticking();
      const Guard registry(all.mutex);
      all.by_table[table_].insert(name_);
    }
    return it->second;
  }
  void unlink(const Message& m) WEAVE_REQUIRES(mutex_) {
    if (m.state == 'z') scheduled_.erase(std::make_pair(m.due, m.seq));
    if (m.state == 'a') active_.erase(std::make_pair(m.until, m.seq));
    if (m.state == 'd') dead_.erase(std::make_pair(m.until, m.seq));
  }

  Mutex mutex_;
  std::condition_variable cv_;
  std::uint64_t wakes_ WEAVE_GUARDED_BY(mutex_) = 0, counter_ WEAVE_GUARDED_BY(mutex_) = 0;
  std::map<std::string, Message, std::less<>> messages_ WEAVE_GUARDED_BY(mutex_);
  using Order = std::map<std::pair<std::int64_t, std::uint64_t>, std::string>;
  Order scheduled_ WEAVE_GUARDED_BY(mutex_);  // (due, offer seq) -> id
  struct ScheduleTicks {
    std::int64_t last_tick = -1;  // the last tick offered
    std::uint64_t missed = 0;
    std::string last_run;
    bool paused = false;
  };
  const std::string table_, name_;
  std::map<std::string, ScheduleTicks, std::less<>> ticks_ WEAVE_GUARDED_BY(mutex_);
  Order active_ WEAVE_GUARDED_BY(mutex_);     // (lease deadline, seq) -> id
  Order dead_ WEAVE_GUARDED_BY(mutex_);       // (died at, seq) -> id
};

}  // namespace

std::shared_ptr<QueueStore> make_mem_queue(std::string_view table, std::string_view name) {
  std::string key(table);
  key += '\0';
  key += name;
  return mem_table<MemQueue>(key, [&] { return std::make_shared<MemQueue>(std::string(table), std::string(name)); });
}

}  // namespace weave::detail
