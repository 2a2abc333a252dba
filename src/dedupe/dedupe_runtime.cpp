#include "dedupe/dedupe_runtime.h"

#include <algorithm>
#include <utility>

#include "core/option_check.h"
#include "core/recycled.h"
#include "core/renewer.h"
#include "core/unique_token.h"

#include "weave/duration.h"
#include "weave/error.h"
#include "weave/url.h"

namespace WEAVE_NAMESPACE {

void DedupeOptions::validate() const {
  const detail::OptionCheck check("DedupeOptions");
  check.store_settings(url, connect_timeout, command_timeout, pool_size, key_prefix);
  check.duration("claim_lease", claim_lease, std::chrono::milliseconds(30));
  check.duration("max_window", max_window);
  if (max_key_bytes == 0) check.fail("max_key_bytes", "must be positive");
  detail::check_dedupe_scheme(url);  // an unknown scheme fails here, not at the first call
}

namespace detail {
namespace {

using Clock = std::chrono::steady_clock;

StoreSchemes<ClaimStoreFactory>& schemes() { return feature_schemes<ClaimStoreFactory>("dedupe"); }

std::shared_ptr<ClaimStore> make_store(const DedupeOptions& o) {
  return schemes().open(o, make_mem_claims);
}

}  // namespace

DedupeRuntimeSlot& dedupe_runtime_slot() { return never_freed<DedupeRuntimeSlot>(); }

void check_dedupe_scheme(const std::string& url) { schemes().check(url); }

void register_claim_store(std::string scheme, ClaimStoreFactory factory) {
  schemes().add(std::move(scheme), std::move(factory));
}

HeldClaim::HeldClaim(std::string_view key, std::string owner, std::string_view match,
                     std::chrono::milliseconds lease, Clock::time_point sent, bool in_process, DedupeSeries& series,
                     std::shared_ptr<const RenewGroup> runtime)
    : LeaseCore([&](Terms& terms) {
        terms.key = key;
        terms.owner = std::move(owner);
        terms.lease_time = lease;
        terms.renew_every = runtime ? renew_interval(lease) : std::chrono::milliseconds(0);  // none: a fixed ttl
        terms.acquired_at = sent;
        terms.group = std::move(runtime);
      }),
      DedupeClaim(static_cast<LeaseCore&>(*this)),
      match_(match),
      series_(series) {
  start_deadline(sent, in_process);
}

void DedupeRuntime::unanswered_claim(std::string_view key, const std::string& owner) {
  const auto now = std::chrono::steady_clock::now();
  Guard lock(unanswered_mutex_);
  if (unanswered_.size() >= kMaxUnanswered)
    std::erase_if(unanswered_, [now](const auto& u) { return u.second.until <= now; });
  if (unanswered_.size() >= kMaxUnanswered) return;  // its claim runs out by itself
  unanswered_[std::string(key)] = Unanswered{owner, now + options_.claim_lease};
  unanswered_count_.store(unanswered_.size(), std::memory_order_release);
}

std::string DedupeRuntime::owner_for(std::string_view key) {
  if (unanswered_count_.load(std::memory_order_acquire) != 0) {
    Guard lock(unanswered_mutex_);
    if (auto it = unanswered_.find(key); it != unanswered_.end()) {
      Unanswered u = std::move(it->second);
      unanswered_.erase(it);
      unanswered_count_.store(unanswered_.size(), std::memory_order_release);
      if (u.until > std::chrono::steady_clock::now()) return std::move(u.owner);
    }
  }
  return unique_token();
}

// The group of a held claim is the runtime that made it (hold()), which the
// claim keeps alive; its counters are not part of its renewing.
DedupeRuntime* HeldClaim::runtime() const noexcept {
  const RenewGroup* group = terms().group.get();
  return group ? const_cast<DedupeRuntime*>(static_cast<const DedupeRuntime*>(group)) : nullptr;
}

std::string HeldClaim::ran_out_cause() const {
  return "its claim lease ran out before it was renewed (the process was paused, or the store did not answer the "
         "renewals in time): another call may have claimed the key";
}

std::string HeldClaim::gone_cause() const {
  return "a renewal found the claim gone: it ran out and another call may have claimed the key";
}

void HeldClaim::count_lost() noexcept {
  if (DedupeRuntime* rt = runtime()) rt->count(series_, &DedupeCounterStripe::claims_lost);
}

void HeldClaim::report_lost() noexcept {
  if (DedupeRuntime* rt = runtime())
    report_to(rt->options().on_event, "dedupe", *this,
              "the call ran on without its claim: its outcome is not recorded and a duplicate may run");
}

std::shared_ptr<const ContextLink> HeldClaim::context_link(std::shared_ptr<const ContextLink> parent) {
  link_ = ContextLink{this, HeldKind::dedupe, std::move(parent)};
  return std::shared_ptr<const ContextLink>(shared_from_this(), &link_);
}

DedupeRuntime::DedupeRuntime(DedupeOptions options) : options_(std::move(options)) {
  options_.validate();
  store_ = make_store(options_);
  in_process_ = parse_store_url(options_.url).scheme == "mem";
}

std::shared_ptr<HeldClaim> DedupeRuntime::hold(std::string_view key, std::string owner, std::string_view match,
                                               Clock::time_point sent, DedupeSeries& series) {
  auto claim = std::allocate_shared<HeldClaim>(Recycled<HeldClaim>{}, key, std::move(owner), match,
                                               options_.claim_lease, sent, in_process_, series, shared_from_this());
  Renewer::instance().watch(*claim, claim, /*fresh=*/true);
  return claim;
}

void DedupeRuntime::release(HeldClaim& claim) noexcept { claim.drop_hold(); }

void DedupeRuntime::renew(std::span<LeaseCore* const> claims, std::vector<bool>& owned) const {
  std::vector<ClaimStore::Renewal> items;
  items.reserve(claims.size());
  for (LeaseCore* core : claims) {
    const HeldClaim& c = static_cast<const HeldClaim&>(*core);
    items.push_back({c.key(), c.owner_token(), c.match(), c.lease_time()});
  }
  owned = store_->renew(items);
}

DedupeStats DedupeRuntime::stats() const {
  using S = DedupeCounterStripe;
  using T = DedupeStats;
  static constexpr std::pair<std::uint64_t T::*, std::atomic<std::uint64_t> S::*> fields[] = {
      {&T::first_calls, &S::first_calls}, {&T::duplicates, &S::duplicates}, {&T::replays, &S::replays},
      {&T::waited, &S::waited}, {&T::in_flight_refused, &S::in_flight_refused}, {&T::mismatches, &S::mismatches},
      {&T::forgotten, &S::forgotten}, {&T::remembered, &S::remembered}, {&T::claims_lost, &S::claims_lost},
      {&T::errors, &S::errors}};
  DedupeStats s;
  for (const auto& [out, in] : fields) s.*out = counters_.sum(in);
  return s;
}

void DedupeRuntime::report(const HeldClaim& claim, const std::exception& error) noexcept {
  count(claim.series(), &DedupeCounterStripe::errors);
  const std::string_view key = claim.key();
  report_event(options_.on_event, EventKind::dedupe_error, "dedupe", key, error,
               "dedupe key '" + std::string(key) + "'");
}

std::shared_ptr<DedupeRuntime> dedupe_runtime() { return dedupe_runtime_slot().get(); }

}  // namespace detail

// ---- DedupeClaim: the HeldClaim it is ----

namespace {
const detail::HeldClaim& held(const DedupeClaim& c) noexcept { return static_cast<const detail::HeldClaim&>(c); }
}  // namespace

std::shared_ptr<const DedupeClaim> DedupeClaim::share() const { return held(*this).shared_from_this(); }

const DedupeClaim* current_dedupe_claim() noexcept {
  const detail::ContextLink* n = detail::find_in_context(detail::HeldKind::dedupe, [](const HeldLease&) { return true; });
  return n ? static_cast<const DedupeClaim*>(n->held) : nullptr;
}

const DedupeClaim* current_dedupe_claim(std::string_view key) noexcept {
  const detail::ContextLink* n =
      detail::find_in_context(detail::HeldKind::dedupe, [key](const HeldLease& h) { return h.key() == key; });
  return n ? static_cast<const DedupeClaim*>(n->held) : nullptr;
}

void configure_dedupe(DedupeOptions options) {
  options.validate();
  detail::dedupe_runtime_slot().configure(std::move(options));
}

DedupeStats dedupe_stats() { return detail::dedupe_runtime()->stats(); }

DedupeRecordInfo inspect_dedupe(std::string_view key) {
  DedupeRecordInfo info;
  const std::optional<detail::ClaimOutcome> found = detail::dedupe_runtime()->store().read(key);
  if (!found) return info;
  info.expires_in = found->ttl_left;
  info.age = found->age;
  if (!found->readable) {
    info.state = DedupeRecordInfo::State::unreadable;
    return info;
  }
  const detail::DedupeRecord& r = found->existing;
  info.match = r.match;
  switch (r.kind) {
    case 'r': info.state = DedupeRecordInfo::State::running; info.owner = r.rest; break;
    case 'd': info.state = DedupeRecordInfo::State::done; info.result = r.rest; break;
    case 'e': info.state = DedupeRecordInfo::State::failed; info.result = r.rest; break;
    default: info.state = DedupeRecordInfo::State::unreadable;
  }
  return info;
}

}  // namespace weave
