// Chain resolution keeps memory flat: many woven methods whose per-thread
// cache slots collide, called round-robin from many short-lived threads.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "weave/generated.h"

namespace {

// TSan keeps per-thread shadow state for every thread that ever ran, so the
// resident-size bound only means something in other builds.
#if defined(__SANITIZE_THREAD__)
constexpr bool k_thread_sanitizer = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
constexpr bool k_thread_sanitizer = true;
#else
constexpr bool k_thread_sanitizer = false;
#endif
#else
constexpr bool k_thread_sanitizer = false;
#endif

long resident_kib() {
  long pages = 0, resident = 0;
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return resident * (::sysconf(_SC_PAGESIZE) / 1024);
}

constexpr weave::AnnotationSpec k_annotations[] = {{"test_memory_noop", 0, {}, 1, 1}};
constexpr int k_methods = 200;

// 200 methods, as weavegen emits them: one MethodInfo constant each (distinct
// addresses, so per-thread cache slots collide).
const std::vector<weave::MethodInfo>& methods() {
  static const std::vector<weave::MethodInfo> infos(k_methods,
                                                    weave::MethodInfo{"mem::Svc::m", "mem.h", 1, k_annotations, {}});
  return infos;
}

int call(const weave::MethodInfo& info, int v) {
  return weave::detail::invoke<int>(info, {}, {}, [&] { return v + 1; }, weave::detail::CannotSkip{});
}

// Each of `threads` short-lived threads calls every method `rounds` times.
long run_threads(int threads, int rounds) {
  long sum = 0;
  for (int t = 0; t < threads; ++t) {
    std::thread worker([&] {
      for (int r = 0; r < rounds; ++r)
        for (const auto& info : methods()) sum += call(info, r);
    });
    worker.join();
  }
  return sum;
}

}  // namespace

TEST_CASE("resident memory stays flat with 200 woven methods called round-robin from short-lived threads") {
  weave::InterceptorRegistry::global().add("test_memory_noop", [](weave::Invocation& inv) { inv.proceed(); });
  run_threads(4, 10);  // warm up: every chain built once
  const long before = resident_kib();
  // 1,000,000 calls; before chains were shared, each cache miss built and kept
  // a new chain (about 70 MB here).
  const long sum = run_threads(50, 100);
  const long grown = resident_kib() - before;
  weave::InterceptorRegistry::global().remove("test_memory_noop");
  CHECK(sum == 50L * k_methods * (100 * 101 / 2));
  INFO("resident memory grew by " << grown << " KiB");
  if (!k_thread_sanitizer) CHECK(grown < 4 * 1024);
}
