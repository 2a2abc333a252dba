// Writes a cache entry the way another program would, bypassing the
// interceptors: "<version>:<json>" under the entry's key (docs/cache.md),
// routed by the store layer (any Redis URL).
#pragma once

#include <string>

#include "store/open.h"

inline void store_raw_entry(const std::string& url, const std::string& name, const std::string& key,
                            const std::string& json) {
  auto exec = weave::store::open_executor(url, {});
  const std::string k = "{weave:cache:" + name + ":" + key + "}";
  const std::string v = "1:" + json;
  exec->command(weave::store::Command{"SET", k, v, "PX", "60000"}, k, "test write");
}
