// The JSON configuration file loader: load_lock_options({.file = ...})
// (src/core/config.cpp, whose reader is internal) on the input as the
// file's text. Oracle: LockOptions or a weave::ConfigError, never a crash or
// another exception; options it returns validate again. And a file built
// from the input's first bytes, {"lock": {"lease": <n> or "<n><unit>"}},
// gives exactly that lease when it lies in 1 ms .. 10 years, else a ConfigError.
//
// The lock library's scheme table (src/lock/backends.cpp, with every lock
// backend behind it) is not linked: check_lock_scheme below stands in for
// it as in a program that links Weave::redis (mem, redis, redis+cluster,
// redis+sentinel, redlock known). configure() is not fuzzed: configure_locks
// is never called here.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "weave/config.h"
#include "weave/duration.h"
#include "weave/error.h"
#include "weave/url.h"

namespace WEAVE_NAMESPACE {
namespace detail {
void check_lock_scheme(const std::string& url) {
  const std::string scheme = parse_store_url(url).scheme;
  for (std::string_view known : {"mem", "redis", "redis+cluster", "redis+sentinel", "redlock"})
    if (scheme == known) return;
  throw ConfigError("lock url '" + redact_url(url) + "': unknown scheme '" + std::string(scheme) + "'");
}
}  // namespace detail
void configure_locks(LockOptions) { std::abort(); }
}  // namespace WEAVE_NAMESPACE

namespace {
// One file for every run, rewritten each time (memfd: no disk).
const std::string& file_with(std::string_view text) {
  static const int fd = memfd_create("weave-config", 0);
  static const std::string path = "/proc/self/fd/" + std::to_string(fd);
  if (fd < 0 || ftruncate(fd, 0) != 0 ||
      (!text.empty() && pwrite(fd, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size())))
    std::abort();
  return path;
}

// The options from `text`, or nothing on a ConfigError; anything else escapes (a finding).
std::optional<weave::LockOptions> load(std::string_view text) {
  try {
    return weave::load_lock_options({.file = file_with(text), .environment = false});
  } catch (const weave::ConfigError&) {
    return std::nullopt;
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  if (const auto o = load(in)) o->validate();  // throws (uncaught: a finding) if it let a bad value through

  if (size < 9) return 0;
  std::uint64_t n;
  std::memcpy(&n, data + 1, 8);
  const std::int64_t max = weave::max_duration.count();
  std::string file = R"({"lock": {"lease": )";
  std::optional<std::int64_t> expected;  // the lease in ms, when valid
  if (data[0] % 5 == 0) {
    file += std::to_string(n);  // integer milliseconds
    if (n >= 1 && n <= static_cast<std::uint64_t>(max)) expected = static_cast<std::int64_t>(n);
  } else {
    static constexpr std::int64_t scales[] = {1, 1000, 60'000, 3'600'000};
    static constexpr const char* units[] = {"ms", "s", "min", "h"};
    const int u = data[0] % 5 - 1;
    file += '"' + std::to_string(n) + units[u] + '"';
    if (n >= 1 && n <= static_cast<std::uint64_t>(max / scales[u])) expected = static_cast<std::int64_t>(n) * scales[u];
  }
  file += "}}";
  const auto o = load(file);
  if (o.has_value() != expected.has_value()) std::abort();
  if (o && o->watchdog_lease.count() != *expected) std::abort();
  return 0;
}
