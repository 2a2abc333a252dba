// A token no other caller in the deployment holds: names the owner of a
// dedupe claim, a cache fill lease or refresh claim, a cache process's
// invalidations. (Lock owner tokens are the lock library's own, from libuuid,
// which Weave::core does not link.)
#pragma once

#include <string>

#include "weave/abi.h"

namespace WEAVE_NAMESPACE::detail {

// 128 random bits per thread (getrandom, drawn again in a fork()ed child) and
// a counter: unique across processes and hosts, no system call per token.
WEAVE_API std::string unique_token();

}  // namespace weave::detail
