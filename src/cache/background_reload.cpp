// refresh_after: an aged value is returned at once, and one caller in the
// deployment claims its reload, run on core's background thread when the
// call can be copied (Invocation::detach).
#include <exception>

#include "cache/read_through.h"
#include "core/unique_token.h"
#include "weave/generated/chain.h"

namespace WEAVE_NAMESPACE::detail::cache {

// A value older than refresh_after: every caller in the deployment gets it
// at once, and one of them claims the reload. When the proxy can copy the
// call (Invocation::detach), the claimer returns the aged value too and the
// reload (the rest of the chain, then the method, then the fill) runs on
// the runtime's background thread. Otherwise (a proxy from an older
// weavegen, or the object is being destroyed) the claimer reloads on its
// own thread and returns the new value; if that reload throws, the old one.
bool ReadThrough::refresh(const RemoteRead& stored) {
  land_.json = *stored.json;
  land_.now();
  held_.token = unique_token();
  const auto sent = Clock::now();
  bool claimed = false;
  guarded(rt_, cache_, key_, s_, [&] {
    claimed = rt_.remote().claim_refresh(cache_.name(), key_, stored, held_.token, rt_.options().fill_lease);
  });
  std::exception_ptr failed;
  if (claimed) {
    held_.take(sent);
    if (inv_.can_detach() && reload_in_background(stored)) return true;
    try {
      load(true);
      return true;
    } catch (...) {
      failed = std::current_exception();
    }
    // Kept until the lease ends: at most one failing reload per fill_lease.
    held_.stop_renewing();
  }
  try {
    inv_.complete_from_json(*stored.json);
  } catch (const std::exception&) {
    if (failed) std::rethrow_exception(failed);
    count_.add(&Counts::decode_failures);
    return false;
  }
  count_.add(&Counts::remote_hits);
  return true;
}

// The claimer's way out with a background reload: true when the call was
// completed with the aged value and the reload queued, which now holds the
// claim. False (nothing done) when the aged value does not decode or the
// call cannot be copied: the caller reloads on its own thread.
bool ReadThrough::reload_in_background(const RemoteRead& stored) {
  std::shared_ptr<CacheRuntime> owned = cache_runtime();
  if (owned.get() != &rt_) return false;  // reconfigured meanwhile
  auto job = std::make_shared<Reload>(Reload{std::move(owned), &cache_, s_, &codec_, std::string(key_), stamp_,
                                             read_version_, nullptr, inv_.detach()});
  if (!job->call) return false;
  try {
    inv_.complete_from_json(*stored.json);
  } catch (const std::exception&) {
    return false;  // stored by another version of the type: reload now, on this thread
  }
  count_.add(&Counts::remote_hits);
  job->lease = std::move(held_.lease);  // the reload has it now
  if (!run_in_background([job] { job->run(); }))
    held_.lease = std::move(job->lease);  // stopped (exit): the claim goes with this call
  return true;
}
void ReadThrough::Reload::run() {
  call.run([this](Invocation& inv) {
    ReadThrough r(inv, settings, *codec, *rt, *cache, key, nullptr);
    r.stamp_ = stamp;
    r.read_version_ = read_version;
    r.held_.token = lease->owner_;
    r.held_.lease = std::move(lease);
    try {
      r.load(true);
    } catch (...) {
      // counted by load; the claim is kept until its lease ends, as on the caller's thread
      r.held_.stop_renewing();
    }
  });
}

}  // namespace weave::detail::cache
