// A program that links Weave::cache and nothing else of Weave's features
// calls weave::configure(): the cache gets its options from the file, and
// the file's lock section (a feature this program does not have) is left
// alone. Exit 0 when so; a line on stderr and 1 otherwise.
#include <cstdio>
#include <fstream>
#include <string>

#include "cache/cache_runtime.h"
#include "weave/config.h"
#include "weave/error.h"

int main() {
  char path[] = "/tmp/weave-cache-only-XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return 1;
  std::ofstream(path) << R"({"cache": {"local_max_entries": 123, "fill_lease": "7s"}, "lock": {"watchdog_lease": "9s"}})";
  int failed = 0;
  try {
    weave::configure({.file = std::string(path), .environment = false});
    const weave::CacheOptions& o = weave::detail::cache_runtime()->options();
    if (o.local_max_entries != 123 || o.fill_lease != std::chrono::seconds(7)) {
      std::fprintf(stderr, "the cache did not get the file's options\n");
      failed = 1;
    }
    for (const weave::ConfigSetting& s : weave::effective_config({.file = std::string(path), .environment = false}))
      if (s.key.rfind("cache.", 0) != 0) {
        std::fprintf(stderr, "an option of a feature not linked: %s\n", s.key.c_str());
        failed = 1;
      }
  } catch (const weave::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    failed = 1;
  }
  std::remove(path);
  return failed;
}
