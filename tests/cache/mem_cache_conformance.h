// The cache suite (test_cache.cpp) on mem://.
#pragma once

#include <chrono>
#include <string>

#include "cache/remote_tier.h"

inline std::string cache_store_url() { return "mem://cache-suite"; }

// Writes a value the way another program would, bypassing the interceptors.
inline void store_raw_json(const std::string& name, const std::string& key, const std::string& json) {
  weave::detail::make_mem_remote("cache-suite")->put(name, key, json, std::chrono::minutes(1));
}
