#include "core/striped.h"

#include "core/process.h"

#include <climits>
#include <mutex>
#include <vector>

namespace WEAVE_NAMESPACE::detail {
namespace {

// Slots of exited threads are handed out again, so a program that starts
// threads as it goes (a thread per task) keeps its live threads in the owned
// stripes instead of all ending in the shared one.
struct SlotPool {
  Mutex mutex;
  std::vector<unsigned> freed WEAVE_GUARDED_BY(mutex);  // most recently freed last
  unsigned next WEAVE_GUARDED_BY(mutex) = 0;
};
// Never destroyed: threads may exit after static destruction. Held across
// fork(), so a child never inherits it locked by a thread it does not have.
SlotPool& pool() { return fork_guarded<SlotPool>(); }

// The slot a thread uses once its slot went back to the pool (in TLS
// destructors that run after the owner's): beyond every owned stripe.
constexpr unsigned k_after_exit = UINT_MAX - 1;

struct SlotOwner {
  unsigned slot;
  ~SlotOwner() {
    t_thread_slot = k_after_exit + 1;
    Guard g(pool().mutex);
    pool().freed.push_back(slot);
  }
};

}  // namespace

constinit thread_local unsigned t_thread_slot = 0;

unsigned take_thread_slot() noexcept {
  unsigned slot;
  {
    SlotPool& p = pool();
    Guard g(p.mutex);
    if (!p.freed.empty()) {
      slot = p.freed.back();
      p.freed.pop_back();
    } else {
      slot = p.next++;
    }
  }
  thread_local SlotOwner owner{slot};  // returns the slot when the thread exits
  t_thread_slot = slot + 1;
  return slot;
}

}  // namespace weave::detail
