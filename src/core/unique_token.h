// A token no other caller in the deployment holds: the one owner-token maker.
// It names the owner of every lease (a lock's, a dedupe claim, a cache fill
// lease or refresh claim) and a cache process's invalidations. Drawn from
// getrandom(), the kernel's generator libuuid's random UUIDs come from too,
// so a program using only the cache links no libuuid.
#pragma once

#include <string>

#include "weave/abi.h"

namespace WEAVE_NAMESPACE::detail {

// 128 random bits per thread (getrandom, drawn again in a fork()ed child) and
// a counter: unique across processes and hosts, no system call per token.
std::string unique_token();

}  // namespace weave::detail
