// weave/store_check.h — is this Redis store ready for Weave? (`weave check`)
//
//   weave::StoreCheck c = weave::check_store("redis+cluster://127.0.0.1:7000");
//   for (const auto& m : c.masters) std::cout << m.address << " " << m.version << "\n";
//   if (!c.refused.empty()) std::cout << "ACL: add " << c.refused[0] << "\n";
//
// It connects to every master the URL leads to (redis://: the server;
// redis+cluster://: each master of the slot map; redis+sentinel://: the
// master the sentinels name), reads its version and mode, times a few
// PINGs, and tries every command Weave sends or runs in its scripts
// (weave::redis_acl_rule()) on a probe key and channel under "{weave:",
// so a user whose ACL refuses one is found before a feature needs it.
#pragma once

#include "weave/abi.h"

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

namespace WEAVE_NAMESPACE {

struct WEAVE_API StoreNode {
  std::string address;                  // host:port
  std::string version;                  // redis_version
  std::string mode;                     // redis_mode: standalone, cluster
  std::string role;                     // ROLE: master
  std::chrono::microseconds round_trip{0};  // the fastest of 5 PINGs
};

struct WEAVE_API StoreCheck {
  std::string scheme;              // redis, redis+cluster, redis+sentinel
  std::vector<StoreNode> masters;  // sorted by address
  // Commands Weave needs that the URL's user may not run (on any master),
  // as "+command" rule items; empty: the ACL permits everything Weave does.
  std::vector<std::string> refused;
};

// Throws BackendUnavailable (naming the node) when a master cannot be
// reached, ConfigError for a bad URL or a scheme that is not one store
// (redlock://: check each master's redis:// URL).
WEAVE_API StoreCheck check_store(std::string_view url,
                                 std::chrono::milliseconds timeout = std::chrono::milliseconds(2000));

}  // namespace weave
