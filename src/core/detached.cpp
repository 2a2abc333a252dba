// Detached calls (weave/invocation.h): the rest of a chain re-made from
// copies of the arguments, run on one background thread per process; a woven
// object's destructor waits for the ones on it (retire_detached).
#include <pthread.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "chain.h"
#include "core/process.h"
#include "weave/generated.h"
#include "weave/invocation.h"

namespace WEAVE_NAMESPACE {
namespace detail {
namespace {

// Everything one process's background work needs. A forked child gets a new
// one (the parent's thread is not in the child, and its queue and counts are
// the parent's): the old one is left as it was, never touched again.
struct Background {
  Mutex mutex;
  std::condition_variable changed;
  std::deque<std::function<void()>> jobs WEAVE_GUARDED_BY(mutex);
  std::thread thread;  // started on first use, under `mutex` before `started` is set
  bool started WEAVE_GUARDED_BY(mutex) = false;
  bool stopped WEAVE_GUARDED_BY(mutex) = false;  // at exit: nothing more runs
  std::unordered_map<const void*, int> in_flight WEAVE_GUARDED_BY(mutex);  // owner -> detached calls held
  std::unordered_set<const void*> retiring WEAVE_GUARDED_BY(mutex);

  void loop() {
    Guard lock(mutex);
    for (;;) {
      mutex.wait(changed, [&]() WEAVE_REQUIRES(mutex) { return stopped || !jobs.empty(); });
      if (stopped) return;
      auto job = std::move(jobs.front());
      jobs.pop_front();
      lock.unlock();
      try {
        job();
      } catch (...) {
        // a job reports its own failures; nothing may end the thread
      }
      job = nullptr;  // the Detached it held is released before the lock is taken again
      lock.lock();
    }
  }
};

std::atomic<Background*> current{nullptr};

void after_fork_in_child() { current.store(new Background, std::memory_order_release); }

// Stops the thread at exit: the running job finishes, queued ones are dropped
// unrun (left allocated: what they would release may be gone by now).
struct Stopper {
  ~Stopper() {
    Background* b = current.load(std::memory_order_acquire);
    Guard lock(b->mutex);
    b->stopped = true;
    b->changed.notify_all();
    if (!b->started) return;
    lock.unlock();
    if (b->thread.joinable() && b->thread.get_id() != std::this_thread::get_id()) b->thread.join();
    lock.lock();
    if (!b->jobs.empty()) new std::deque<std::function<void()>>(std::move(b->jobs));  // leaked on purpose
    b->in_flight.clear();
    b->changed.notify_all();
  }
};

Background& background() {
  static const bool once = [] {
    current.store(new Background, std::memory_order_release);
    pthread_atfork(nullptr, nullptr, &after_fork_in_child);
    return true;
  }();
  (void)once;
  return *current.load(std::memory_order_acquire);
}

}  // namespace

DetachedCall::~DetachedCall() = default;

Detached::Detached() noexcept = default;
Detached::Detached(Detached&& o) noexcept
    : call_(std::move(o.call_)),
      method_(o.method_),
      chain_(o.chain_),
      depth_(o.depth_),
      registry_(o.registry_),
      stored_(o.stored_) {
  o.registry_ = nullptr;
}
Detached& Detached::operator=(Detached&& o) noexcept {
  if (this != &o) {
    release();
    call_ = std::move(o.call_);
    method_ = o.method_;
    chain_ = o.chain_;
    depth_ = o.depth_;
    registry_ = o.registry_;
    stored_ = o.stored_;
    o.registry_ = nullptr;
  }
  return *this;
}
Detached::~Detached() { release(); }

void Detached::release() noexcept {
  const void* owner = call_ ? call_->owner : nullptr;
  call_.reset();  // the copies go before the owner may
  auto* b = static_cast<Background*>(registry_);
  registry_ = nullptr;
  if (!b || !owner) return;
  Guard lock(b->mutex);
  auto it = b->in_flight.find(owner);
  if (it != b->in_flight.end() && --it->second == 0) b->in_flight.erase(it);
  b->changed.notify_all();
}

void Detached::run_with(void (*body)(Invocation&, void*), void* ctx) {
  if (!call_) throw UsageError("a detached call was run twice, or it is empty");
  DetachedCall& call = *call_;
  Invocation inv(*method_, call.args(), call.rendered(), [](void* c) { static_cast<DetachedCall*>(c)->run_target(); },
                 &call, call.result_slot());
  inv.chain_ = chain_;
  inv.depth_ = depth_;
  inv.stored_replay_ = stored_;
  if (depth_ > 0) inv.current_ = Annotation(method_->annotations[depth_ - 1], call.rendered());
  struct Done {  // once: the copies go, and the owner's destructor may go on
    Detached& d;
    ~Done() { d.release(); }
  } done{*this};
  body(inv, ctx);
}

}  // namespace detail

namespace detail {

Detached InvocationAccess::adopt(const MethodInfo& method, const void* chain, std::size_t depth,
                                 std::unique_ptr<DetachedCall> call, bool stored) {
  Detached d;
  if (!call) return d;
  if (const void* owner = call->owner) {
    Background& b = background();
    Guard lock(b.mutex);
    if (b.stopped || b.retiring.count(owner)) return d;  // being destroyed: no new calls on it
    ++b.in_flight[owner];
    d.registry_ = &b;
  }
  d.call_ = std::move(call);
  d.method_ = &method;
  d.chain_ = chain;
  d.depth_ = depth;
  d.stored_ = stored;
  return d;
}

}  // namespace detail

detail::Detached Invocation::detach() {
  if (!can_detach() || depth_ == 0) return {};
  return detail::InvocationAccess::adopt(*method_, chain_, depth_, detach_->make(detach_->ctx), false);
}

namespace detail {

bool run_in_background(std::function<void()> job) {
  Background& b = background();
  Guard lock(b.mutex);
  if (b.stopped) return false;
  if (!b.started) {
    static Stopper stopper;  // constructed once; destroyed at exit, before the statics made earlier
    b.thread = std::thread([&b] { b.loop(); });
    name_thread(b.thread.native_handle(), "weave-detached");
    b.started = true;
  }
  b.jobs.push_back(std::move(job));
  b.changed.notify_all();
  return true;
}

void retire_detached(const void* owner) noexcept {
  Background* b = current.load(std::memory_order_acquire);
  if (!b || !owner) return;  // nothing was ever detached in this process
  Guard lock(b->mutex);
  if (b->in_flight.find(owner) == b->in_flight.end()) return;
  // A background call that destroys the object it runs on would wait for itself.
  if (b->started && b->thread.get_id() == std::this_thread::get_id()) return;
  b->retiring.insert(owner);
  b->mutex.wait(b->changed, [&]() WEAVE_REQUIRES(b->mutex) {
    return b->stopped || b->in_flight.find(owner) == b->in_flight.end();
  });
  b->retiring.erase(owner);
}

}  // namespace detail
}  // namespace WEAVE_NAMESPACE
