#include "core/striped.h"

namespace WEAVE_NAMESPACE::detail {

unsigned thread_slot() noexcept {
  static std::atomic<unsigned> next{0};
  thread_local unsigned slot = 0;  // 1 + the slot once taken: constant-initialized, no guard per call
  if (slot == 0) slot = next.fetch_add(1, std::memory_order_relaxed) + 1;
  return slot - 1;
}

}  // namespace weave::detail
