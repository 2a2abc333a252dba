// The shared tier of [[cache]]: where values live for every process, and the
// feed of invalidations that keeps local tiers honest. mem:// keeps it in this
// process (remote_mem.cpp); Redis URLs run it through the store layer.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "weave/abi.h"

namespace WEAVE_NAMESPACE::detail {

// A read of one key: its value, if any, and the key's write version at the
// time of the read (bumped by every put and evict).
struct WEAVE_API RemoteRead {
  std::optional<std::string> json;
  std::uint64_t version = 0;
};

class WEAVE_API RemoteTier {
 public:
  virtual ~RemoteTier() = default;
  // Every call may throw weave::IoError / ReplyError; the cache fails open.

  virtual RemoteRead get(std::string_view name, std::string_view key) = 0;
  // Stores a value loaded after a miss, only if no put or evict of the key
  // came after the read that missed (`read_version`): a slow load never
  // installs a value older than a write. Sends no invalidation (nobody else
  // can hold an entry for a key that was missing). False when refused.
  virtual bool fill(std::string_view name, std::string_view key, std::string_view json,
                    std::chrono::milliseconds ttl, std::uint64_t read_version) = 0;
  // A write: stores and tells every other process to drop `key`.
  virtual void put(std::string_view name, std::string_view key, std::string_view json,
                   std::chrono::milliseconds ttl) = 0;
  // Drops `key` (or every key of `name` when key is null) everywhere.
  virtual void evict(std::string_view name, const std::string_view* key) = 0;

  // Invalidations from other processes: (name, key) or (name, null) for
  // all of a name; on_gap when the feed may have missed some or is coming
  // back after missing some: every local tier is dropped (which also refuses
  // every fill stamped before), and bypassed while not live().
  struct Listener {
    std::function<void(std::string_view name, const std::string_view* key)> on_invalidate;
    std::function<void()> on_gap;
  };
  virtual void listen(Listener listener) = 0;
  // True while the invalidation feed is known to be complete up to about
  // `now` (subscribed, and its reader has drained the socket recently: a
  // process resuming from a pause is not live until its reader caught up).
  // A local tier may serve only then.
  virtual bool live(std::chrono::steady_clock::time_point now) const noexcept = 0;
};

// mem://[name]: a table in this process shared by every cache of the same
// URL; always live (there is no other process to hear from).
WEAVE_API std::shared_ptr<RemoteTier> make_mem_remote(std::string_view table);

}  // namespace weave::detail
