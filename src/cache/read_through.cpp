#include "cache/read_through.h"

#include <algorithm>
#include <exception>

#include "core/unique_token.h"

namespace WEAVE_NAMESPACE::detail::cache {

void ReadThrough::run() {
  for (;;) {
    const Step step = look();
    if (step.kind == Step::done) return;
    if (step.kind == Step::load) break;
    waiter_->wait_until(step.until);
  }
  load(false);
}

ReadThrough::Step ReadThrough::look() {
  waiter_.reset();
  // sync=true: how long a miss waits for other processes' loads in all.
  if (fill_deadline_ == Clock::time_point{}) fill_deadline_ = Clock::now() + rt_.options().fill_guard;
  for (;;) {
    // Taken before anything is read: an invalidation from here on refuses the fill.
    stamp_ = cache_.local().stamp(key_);
    land_.stamp = stamp_;
    land_.read_at = Clock::now();
    read_version_.reset();
    if (s_.tier == Tier::local) return {Step::load};
    RemoteRead stored;
    if (!guarded(rt_, cache_, key_, s_, [&] { stored = rt_.remote().get(cache_.name(), key_); })) return {Step::load};
    read_version_ = stored.version;
    if (stored.json) {
      if (shared_hit(stored)) return {Step::done};
      return {Step::load};  // stored by another version of the type: a miss, overwritten after the load
    }
    if (!waited_) count_.add(&Counts::remote_misses);
    if (stored.absent) {
      std::optional<std::uint64_t> version;
      const milliseconds guard = rt_.options().fill_guard;
      if (!guarded(rt_, cache_, key_, s_, [&] { version = rt_.remote().version_for_load(cache_.name(), key_, guard); })) {
        read_version_.reset();  // nothing known to fill over
        return {Step::load};
      }
      if (!version) continue;  // stored meanwhile
      read_version_ = stored.version = *version;
    }
    if (!s_.sync) return {Step::load};
    // One loader in the deployment; the others wait for its value.
    if (held_.token.empty()) held_.token = unique_token();
    FillClaimed claim;
    const auto sent = Clock::now();
    if (!guarded(rt_, cache_, key_, s_, [&] {
          waiter_ = rt_.remote().watch_fill(cache_.name(), key_);  // before the claim: no wake is missed
          claim = rt_.remote().try_claim_fill(cache_.name(), key_, held_.token, rt_.options().fill_lease,
                                              stored.version);
        }))
      return {Step::load};
    if (claim.claim == FillClaim::load) {
      held_.take(sent);
      return {Step::load};
    }
    if (claim.claim == FillClaim::read_again) continue;
    // Held by another caller: wait for its fill (or its lease's end), up to
    // fill_guard in all, then load without the lease.
    if (Clock::now() >= fill_deadline_) return {Step::load};
    if (!waited_) {
      waited_ = true;
      count_.add(&Counts::sync_waits);
    }
    return {Step::wait, std::min(fill_deadline_, claim.held_until)};
  }
}

bool ReadThrough::shared_hit(const RemoteRead& stored) {
  try {
    inv_.complete_from_json(*stored.json);
  } catch (const std::exception&) {
    count_.add(&Counts::decode_failures);  // stored by another version of the type, aged or not
    return false;
  }
  count_.add(&Counts::remote_hits);
  if (s_.refresh_after > milliseconds(0) && wall_ms() - stored.written_ms >= s_.refresh_after.count()) {
    refresh(stored);
    return true;
  }
  land_.value = codec_.share(inv_.result());
  install(land_.value, stored.json->size(), stored.written_ms);
  return true;
}

void ReadThrough::load(bool refreshing) {
  const auto started = Clock::now();
  try {
    inv_.proceed();
  } catch (...) {
    count_.add(&Counts::load_failures);  // the lease: given back by ~Held, or kept by a failed reload
    throw;
  }
  loaded(started, refreshing);
}

void ReadThrough::load_failed() noexcept {
  waiter_.reset();
  count_.add(&Counts::load_failures);
  held_.give_back();  // a waiter loads at once instead of waiting for the lease to run out
}

void ReadThrough::loaded(Clock::time_point started, bool refreshing) {
  waiter_.reset();
  count_.add(&Counts::loads);
  if (refreshing) count_.add(&Counts::refreshes);
  const auto took = Clock::now() - started;
  count_.add(&Counts::load_ns, static_cast<std::uint64_t>(took.count()));
  cache_.load_times().observe(took);
  const void* result = inv_.result();
  land_.value = codec_.share(result);
  const milliseconds ttl = codec_.empty(result) ? s_.null_ttl : s_.ttl;
  if (ttl <= milliseconds(0)) return;  // null_ttl=0ms: empty results are not kept
  // JSON: for the shared tier, and as the local entry's weight under a byte bound.
  std::string json;
  const bool use_remote = s_.tier != Tier::local;
  if (use_remote || rt_.options().local_max_bytes > 0)
    if (!guarded(rt_, cache_, key_, s_, [&] { json = codec_.encode(result); })) return;
  if (use_remote) {
    if (!read_version_) return;  // the shared tier could not be read: nothing known to fill over
    // The token of any claim this call sent, answered or not: a claim whose
    // answer never came may have taken the lease, and the fill drops it.
    const std::string_view token = held_.token;
    if (held_.lease) held_.lease->settle();  // the fill drops it: a renewal meeting the value is not a loss
    if (guarded(rt_, cache_, key_, s_, [&] {
          rt_.remote().fill(cache_.name(), key_, json, jittered(ttl, key_), *read_version_, token);
        }))
      held_.stop_renewing();  // dropped by the fill, stored or refused
  }
  install(land_.value, json.size(), wall_ms(), ttl);
}

void ReadThrough::install(const std::shared_ptr<const void>& value, std::size_t weight, std::int64_t written_ms,
             std::optional<milliseconds> ttl) {
  if (s_.tier == Tier::remote || !rt_.remote().live(Clock::now())) return;
  milliseconds local_ttl = std::min(s_.local_ttl, ttl.value_or(s_.local_ttl));
  if (codec_.empty(value.get())) local_ttl = std::min(local_ttl, s_.null_ttl);
  // A local copy never outlives refresh_after: the read after it goes to
  // the shared tier, which refreshes it for the deployment.
  if (s_.refresh_after > milliseconds(0))
    local_ttl = std::min(local_ttl, milliseconds(written_ms + s_.refresh_after.count() - wall_ms()));
  if (local_ttl <= milliseconds(0)) return;
  LocalEntry entry;
  entry.value = value;
  entry.kind = &codec_;
  entry.weight = std::max<std::size_t>(1, weight);
  entry.expires = Clock::now() + jittered(local_ttl, key_);
  cache_.local().put(std::string(key_), std::move(entry), stamp_);  // a refusal is counted by the tier
}

}  // namespace weave::detail::cache
