// The store layer's front door: a feature hands it a URL and connection
// settings and gets an Executor that builds, routes and sends its script calls
// and reads their replies (executor.h). A feature never opens a connection or
// reads a reply itself.
//
//   store::ConnectionSettings s{.connect_timeout = 2s, .command_timeout = 1s, .pool_size = 4};
//   std::shared_ptr<store::Executor> e = store::open_executor(url, s);
//   auto replies = e->run({my_call}, "cache get");
#pragma once

#include <chrono>
#include <memory>
#include <string_view>
#include <vector>

#include "store/connection.h"
#include "store/executor.h"
#include "weave/url.h"

namespace WEAVE_NAMESPACE::store {

struct ConnectionSettings {
  std::chrono::milliseconds connect_timeout{2'000};
  std::chrono::milliseconds command_timeout{1'000};
  int pool_size = 4;
};

// A feature's options (LockOptions, CacheOptions, DedupeOptions: each has
// these three fields, checked by detail::OptionCheck::store_settings) as the
// store's connection settings.
template <class Options>
ConnectionSettings connection_settings(const Options& o) {
  return {.connect_timeout = o.connect_timeout, .command_timeout = o.command_timeout, .pool_size = o.pool_size};
}

// One host of a parsed URL (its port already defaulted by parse_store_url) +
// the URL's credentials and db + the settings' timeouts.
Endpoint endpoint_from(const StoreUrl& url, const StoreUrl::Host& host, const ConnectionSettings& settings);
// Every host of the URL, the URL's credentials and db applying to each.
std::vector<Endpoint> endpoints_from(const StoreUrl& url, const ConnectionSettings& settings);

// redis:// -> NodeExecutor; redis+cluster:// -> ClusterExecutor (the hosts
// are seeds, the rest is discovered; database 0 only); redis+sentinel:// ->
// SentinelExecutor (the hosts are sentinels; credentials and db are the
// master's). Does not connect: the first call does. Throws ConfigError for
// another scheme (redlock:// is several stores: open each host with redis://
// semantics through endpoints_from) or a bad URL.
std::shared_ptr<Executor> open_executor(std::string_view url, const ConnectionSettings& settings);

// The schemes open_executor() serves: what each feature's Redis library
// registers for its store (redlock:// is the lock's alone).
inline constexpr const char* executor_schemes[] = {"redis", "redis+cluster", "redis+sentinel"};

}  // namespace weave::store
