// What to do when the server's ACL refuses a request: the words every
// refused request of the store carries (src/store/acl.cpp).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "weave/abi.h"

namespace WEAVE_NAMESPACE::store {

// For an error reply of the ACL (NOPERM, or a script's "can't run this
// command"): names the command to add when the server named it, and gives
// Weave's whole rule (weave::redis_acl_rule()). Empty for any other error.
std::string acl_hint(std::string_view reply);

class NodeExecutor;
// Tries every command of weave::redis_acl_rule() on `node` (probe keys and
// channel under "{weave:check}") and returns those its ACL refuses, as
// "+command" rule items (check_store, `weave check`).
std::vector<std::string> refused_commands(NodeExecutor& node);

}  // namespace weave::store
