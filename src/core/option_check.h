// The one check of every feature's options struct: each failure is a
// ConfigError naming the struct and the field ("CacheOptions::pool_size
// must be 1..1024, got 0"), and the settings every store-backed feature has
// (url, timeouts, pool size, key prefix) are checked by one function.
//
//   const OptionCheck check("DedupeOptions");
//   check.store_settings(url, connect_timeout, command_timeout, pool_size, key_prefix);
//   check.duration("claim_lease", claim_lease, std::chrono::milliseconds(30));
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "weave/abi.h"

namespace WEAVE_NAMESPACE::detail {

class OptionCheck {
 public:
  explicit OptionCheck(std::string_view options) : options_(options) {}
  // At least `at_least` (1 ms unless given) and at most weave::max_duration.
  void duration(std::string_view field, std::chrono::milliseconds d,
                std::chrono::milliseconds at_least = std::chrono::milliseconds(1)) const;
  // A count within lo..hi.
  void count(std::string_view field, long long value, long long lo, long long hi) const;
  // The URL's shape (its scheme is the feature's registry's to check), both
  // timeouts, a pool of 1..1024 connections, a non-empty key prefix.
  void store_settings(const std::string& url, std::chrono::milliseconds connect_timeout,
                      std::chrono::milliseconds command_timeout, int pool_size, const std::string& key_prefix) const;
  [[noreturn]] void fail(std::string_view field, std::string_view why) const;

 private:
  std::string_view options_;
};

}  // namespace weave::detail
