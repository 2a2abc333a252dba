// Writes a key the way another program would, bypassing every interceptor,
// routed by the store layer (any Redis URL): what a feature suite uses to
// plant a value of another version's shape; and reads one back, to see what
// a feature leaves in the store.
#pragma once

#include <optional>
#include <string>

#include "store/open.h"

inline std::string test_store_url();
// Where a test acts as the operator or another program (CLIENT KILL, raw
// writes): the store's own URL unless its header names another (acl_store.h:
// the default user, not the least-privilege one under test).
#ifndef WEAVE_TEST_STORE_HAS_ADMIN
inline std::string test_admin_url() { return test_store_url(); }
#else
inline std::string test_admin_url();
#endif

inline void write_raw(const std::string& key, const std::string& value) {
  auto exec = weave::store::open_executor(test_admin_url(), {});
  exec->command(weave::store::Command{"SET", key, value, "PX", "60000"}, key, "test write");
}

inline std::optional<std::string> read_raw(const std::string& key) {
  auto exec = weave::store::open_executor(test_admin_url(), {});
  weave::store::Reply r = exec->command(weave::store::Command{"GET", key}, key, "test read");
  if (r->type != REDIS_REPLY_STRING) return std::nullopt;
  return std::string(r->str, r->len);
}
