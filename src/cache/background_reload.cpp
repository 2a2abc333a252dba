// refresh_after: an aged value is returned at once, and one caller in the
// deployment claims its reload, run on core's background thread from a copy
// of the call (Invocation::detach).
#include <exception>

#include "cache/read_through.h"
#include "core/unique_token.h"
#include "weave/generated/chain.h"

namespace WEAVE_NAMESPACE::detail::cache {

// A value older than refresh_after, which this call returns: every caller in
// the deployment gets it at once (this process's waiters now, with no local
// copy), the claimer too, and one of them claims its reload, which runs on
// the runtime's background thread from a copy of the call (the rest of the
// chain, then the method, then the fill).
void ReadThrough::refresh(const RemoteRead& stored) {
  land_.json = *stored.json;
  land_.now();
  held_.token = unique_token();
  const auto sent = Clock::now();
  bool claimed = false;
  guarded(rt_, cache_, key_, s_, [&] {
    claimed = rt_.remote().claim_refresh(cache_.name(), key_, stored, held_.token, rt_.options().fill_lease);
  });
  if (claimed) {
    held_.take(sent);
    reload_in_background();
  }
}

// Queues the claimed reload, which then holds the claim. When the call cannot
// be copied (its object is being destroyed, or the runtime is stopping at
// exit) or the runtime was reconfigured meanwhile, the claim stays with this
// call, which drops it on its way out: the next caller reloads.
void ReadThrough::reload_in_background() {
  std::shared_ptr<CacheRuntime> owned = cache_runtime();
  if (owned.get() != &rt_) return;  // reconfigured meanwhile
  auto job = std::make_shared<Reload>(Reload{std::move(owned), cache_.shared_from_this(), s_, &codec_, std::string(key_), stamp_,
                                             read_version_, nullptr, inv_.detach()});
  if (!job->call) return;
  job->lease = std::move(held_.lease);  // the reload has it now
  if (!run_in_background([job] { job->run(); }))
    held_.lease = std::move(job->lease);  // stopped (exit): the claim goes with this call
}
void ReadThrough::Reload::run() {
  call.run([this](Invocation& inv) {
    ReadThrough r(inv, settings, *codec, *rt, *cache, key, nullptr);
    r.stamp_ = stamp;
    r.read_version_ = read_version;
    r.held_.token = lease->terms().owner;
    r.held_.lease = std::move(lease);
    try {
      r.load(true);
    } catch (...) {
      // counted by load; the claim is kept until its lease ends: at most one failing reload per fill_lease
      r.held_.stop_renewing();
    }
  });
}

}  // namespace weave::detail::cache
