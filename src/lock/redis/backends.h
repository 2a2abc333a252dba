// The lock feature over the store layer: which backend serves which Redis
// scheme. redis://, redis+cluster:// and redis+sentinel:// run the same
// scripts (src/lock/scripts/) through the store's Executor for the URL; redlock://
// sends them to N independent masters at once (docs/scale-out.md).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "store/executor.h"
#include "store/open.h"
#include "weave/lock.h"
#include "weave/lock_backend.h"

namespace WEAVE_NAMESPACE::lock_redis {

// The lock scripts over any executor; uses options.key_prefix and key_grace.
std::shared_ptr<LockBackend> make_script_backend(std::shared_ptr<store::Executor> executor,
                                                 const LockOptions& options);

// options.url = redis://, redis+cluster:// or redis+sentinel:// (store::open_executor).
std::shared_ptr<LockBackend> make_store_backend(const LockOptions& options);

// options.url = "redlock://[user:password@]h1:p1,h2:p2,h3:p3[,...][/db]".
// Uses pool_size, connect_timeout, command_timeout and key_prefix for every
// master. Throws ConfigError for a bad URL.
std::shared_ptr<LockBackend> make_redlock_backend(const LockOptions& options);

}  // namespace weave::lock_redis
