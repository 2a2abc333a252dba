// [[dedupe]] records on the Redis URLs (claim_redis.cpp), for the scheme
// registration and for tests that reach the claim store itself.
#pragma once

#include <memory>

#include "dedupe/claim_store.h"
#include "weave/dedupe.h"

namespace WEAVE_NAMESPACE::detail {

// The claim store for `o.url` (redis://, redis+cluster://, redis+sentinel://).
// A claim is SET NX GET (Redis 7), or with `claim_by_script` always the claim
// script (what a server before 7.0 gets once it refuses SET NX GET).
std::shared_ptr<ClaimStore> make_redis_claims(const DedupeOptions& o, bool claim_by_script = false);

}  // namespace weave::detail
