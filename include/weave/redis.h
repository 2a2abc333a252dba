// weave/redis.h — the redis:// lock backend (single Redis instance, hiredis).
//
// Normally you never include this: `WEAVE_LOCK_URL=redis://[user:password@]host:port[/db]`
// (or LockOptions::url / the JSON config) makes LockClient build it. Include
// it to build the backend yourself (e.g. to wrap it):
//
//   weave::LockOptions o{.url = "redis://127.0.0.1:6379/0", .key_prefix = "billing:lock:"};
//   auto backend = weave::make_redis_lock_backend(o);
//   weave::LockClient locks(o, backend);
//
// Protocol, fencing and failure modes: docs/redis.md.
#pragma once

#include "weave/abi.h"

#include <memory>
#include <string>

#include "weave/lock.h"
#include "weave/lock_backend.h"

namespace WEAVE_NAMESPACE {

// Builds a redis backend for options.url (must be redis://...), using
// options.pool_size, connect_timeout, command_timeout and key_prefix (a lock
// on "order:1" lives in the Redis key "{weave:lock:order:1}", its fencing
// counter in "{weave:lock:order:1}:fence"). Does not connect yet: the first
// command does (and throws BackendUnavailable if it cannot). Throws
// ConfigError for a bad URL.
WEAVE_API std::shared_ptr<LockBackend> make_redis_lock_backend(const LockOptions& options);

}  // namespace weave
