// The redlock:// backend: one lock over N independent Redis masters, held
// when a majority agrees (see docs/scale-out.md).
#pragma once

#include <memory>

#include "weave/lock.h"
#include "weave/lock_backend.h"

namespace WEAVE_NAMESPACE::redlock {

// options.url = "redlock://[user:password@]h1:p1,h2:p2,h3:p3[,...][/db]".
// Uses pool_size, connect_timeout, command_timeout and key_prefix for every
// master. Throws ConfigError for a bad URL.
std::shared_ptr<LockBackend> make_redlock_backend(const LockOptions& options);

}  // namespace weave::redlock
