// Writes a key the way another program would, bypassing every interceptor,
// routed by the store layer (any Redis URL): what a feature suite uses to
// plant a value of another version's shape.
#pragma once

#include <string>

#include "store/open.h"

inline std::string test_store_url();

inline void write_raw(const std::string& key, const std::string& value) {
  auto exec = weave::store::open_executor(test_store_url(), {});
  exec->command(weave::store::Command{"SET", key, value, "PX", "60000"}, key, "test write");
}
