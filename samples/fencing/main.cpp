// Two workers restock the same SKU. The first pauses past its 200 ms lease;
// the second takes the lock and writes with a newer fencing token; the first
// wakes up, finds its stop_token fired, and its late write (older token) is
// refused by the store. Its call then reports weave::LeaseLost.
//
//   ./fencing                                  embedded backend
//   WEAVE_LOCK_URL=redis://127.0.0.1:6379 ./fencing
#include <cstdio>
#include <thread>

#include "inventory.weave.h"
#include "weave/error.h"

using namespace std::chrono_literals;

int main() {
  fencing::FencedStore store;
  weave::Woven<fencing::Inventory> inventory(store);

  std::thread slow([&] {
    try {
      inventory.restock("lamp", 5, 500ms);
      std::printf("slow worker: returned normally (unexpected)\n");
    } catch (const weave::LeaseLost& e) {
      std::printf("slow worker: %s\n", e.what());
    }
  });
  std::this_thread::sleep_for(50ms);  // let the slow worker take the lock first
  std::thread fast([&] {
    bool ok = inventory.restock("lamp", 3, 0ms);  // waits until the slow lease runs out
    std::printf("fast worker: write %s\n", ok ? "accepted" : "rejected");
  });
  slow.join();
  fast.join();
  std::printf("lamp stock: %d (the stale +5 was refused)\n", store.value("lamp"));
  return store.value("lamp") == 3 ? 0 : 1;
}
