#include "dedupe/dedupe_runtime.h"

#include <utility>

#include "weave/duration.h"
#include "weave/error.h"
#include "weave/url.h"

namespace WEAVE_NAMESPACE {

void DedupeOptions::validate() const {
  auto bad = [](const std::string& field, const std::string& why) {
    return ConfigError("dedupe option " + field + ": " + why);
  };
  auto positive = [&](const char* field, std::chrono::milliseconds d) {
    if (d <= std::chrono::milliseconds(0) || d > max_duration)
      throw bad(field, std::to_string(d.count()) + "ms is not a positive duration");
  };
  positive("claim_lease", claim_lease);
  positive("max_window", max_window);
  positive("connect_timeout", connect_timeout);
  positive("command_timeout", command_timeout);
  if (claim_lease < std::chrono::milliseconds(30)) throw bad("claim_lease", "must be at least 30ms");
  if (max_key_bytes == 0) throw bad("max_key_bytes", "must be positive");
  if (pool_size < 1 || pool_size > 1024) throw bad("pool_size", std::to_string(pool_size) + " is outside 1..1024");
  if (key_prefix.empty()) throw bad("key_prefix", "must not be empty");
  if (!url.empty()) parse_store_url(url);
}

namespace detail {
namespace {

using Clock = std::chrono::steady_clock;

StoreSchemes<ClaimStoreFactory>& schemes() {
  static auto* s = new StoreSchemes<ClaimStoreFactory>("dedupe");  // usable during exit
  return *s;
}

std::shared_ptr<ClaimStore> make_store(const DedupeOptions& o) {
  const std::string url = feature_url(o.url, "WEAVE_DEDUPE_URL");
  const StoreUrl u = parse_store_url(url);
  if (u.scheme == "mem") return make_mem_claims(u.name);
  ClaimStoreFactory factory = schemes().find(url, u.scheme);
  DedupeOptions resolved = o;
  resolved.url = url;
  return factory(resolved);
}

}  // namespace

DedupeRuntimeSlot& dedupe_runtime_slot() {
  static auto* s = new DedupeRuntimeSlot;  // usable during exit
  return *s;
}

void check_dedupe_scheme(const std::string& url) { schemes().check(url); }

void register_claim_store(std::string scheme, ClaimStoreFactory factory) {
  schemes().add(std::move(scheme), std::move(factory));
}

namespace {
constexpr const char* kRanOut =
    "its claim lease ran out before it was renewed (the process was paused, or the store did not answer the "
    "renewals in time): another call may have claimed the key";
constexpr const char* kGone = "a renewal found the claim gone: it ran out and another call may have claimed the key";

thread_local const HeldClaim* current_claim = nullptr;
}  // namespace

HeldClaim::HeldClaim(std::string_view key, std::string owner, std::string_view match,
                     std::chrono::milliseconds lease, Clock::time_point sent)
    : key_(key), owner_(std::move(owner)), match_(match), lease_(lease),
      expires_((sent + lease).time_since_epoch().count()) {}

bool HeldClaim::check(Clock::time_point now) const noexcept {
  if (cause_.load(std::memory_order_acquire)) return true;
  if (now.time_since_epoch().count() < expires_.load(std::memory_order_acquire) ||
      released_.load(std::memory_order_acquire))
    return false;
  mark_lost(kRanOut);
  return true;
}

void HeldClaim::mark_lost(const char* cause) const noexcept {
  const char* none = nullptr;
  if (!cause_.compare_exchange_strong(none, cause, std::memory_order_acq_rel)) return;  // lost already
  // std::stop_source is a handle to shared state: firing it is not a change
  // of this object. Stop callbacks run here.
  std::stop_source(stop_).request_stop();
}

ClaimScope::ClaimScope(HeldClaim& claim) noexcept {
  claim.enclosing_ = current_claim;
  current_claim = &claim;
}

ClaimScope::~ClaimScope() { current_claim = current_claim->enclosing(); }

DedupeRuntime::DedupeRuntime(DedupeOptions options) : options_(std::move(options)) {
  options_.validate();
  store_ = make_store(options_);
}

DedupeRuntime::~DedupeRuntime() {
  {
    std::lock_guard g(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  renewer_.join();
}

std::shared_ptr<HeldClaim> DedupeRuntime::hold(std::string_view key, std::string owner, std::string_view match,
                                               Clock::time_point sent) {
  auto claim = std::make_shared<HeldClaim>(key, std::move(owner), match, options_.claim_lease, sent);
  std::lock_guard g(mutex_);
  claim->next_ = held_;
  if (held_) held_->prev_ = claim.get();
  held_ = claim.get();
  if (!renewer_.running()) renewer_ = OwnedThread([this] { renew_loop(); });
  return claim;
}

void DedupeRuntime::release(HeldClaim& claim) noexcept {
  std::lock_guard g(mutex_);
  if (claim.prev_) claim.prev_->next_ = claim.next_;
  else held_ = claim.next_;
  if (claim.next_) claim.next_->prev_ = claim.prev_;
  claim.prev_ = claim.next_ = nullptr;
  claim.released_.store(true, std::memory_order_release);
}

void DedupeRuntime::renew_loop() {
  const auto every = options_.claim_lease / 3;
  std::unique_lock g(mutex_);
  std::vector<std::shared_ptr<HeldClaim>> batch;
  std::vector<ClaimStore::Renewal> items;
  while (!stop_) {
    cv_.wait_for(g, every, [&] { return stop_; });
    if (stop_) return;
    // Linked claims are alive: release() unlinks them under this mutex first.
    // A claim past its local deadline that nobody has seen lost yet is still
    // renewed: the store says whether it is still its owner's (a late
    // renewer on a loaded machine), and a claim that is gone is marked lost.
    for (HeldClaim* c = held_; c; c = c->next_)
      if (!c->cause_.load(std::memory_order_acquire)) batch.push_back(c->shared_from_this());
    if (batch.empty()) continue;
    g.unlock();
    items.clear();
    for (auto& c : batch) items.push_back({c->key_, c->owner_, c->match_, c->lease_});
    const auto sent = Clock::now();
    try {
      std::vector<bool> owned = store_->renew(items);
      for (std::size_t i = 0; i < batch.size() && i < owned.size(); ++i) {
        if (owned[i]) batch[i]->expires_.store((sent + batch[i]->lease_).time_since_epoch().count(),
                                               std::memory_order_release);
        else batch[i]->mark_lost(kGone);
      }
    } catch (const std::exception&) {
      // Not renewed this time: the claims keep their deadlines, and those
      // past theirs are lost (nothing can say otherwise while the store is
      // away): their kept stop tokens fire.
      const auto now = Clock::now();
      for (auto& c : batch) c->check(now);
    }
    batch.clear();  // the last reference may be ours: released outside the mutex
    g.lock();
  }
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

void DedupeRuntime::report(std::string_view key, const std::exception& error, bool store_failure) noexcept {
  if (store_failure) counters_.add(&DedupeCounterStripe::errors);
  report_event(options_.on_event, EventKind::dedupe_error, "dedupe", key, error,
               "dedupe key '" + std::string(key) + "'");
}

std::shared_ptr<DedupeRuntime> dedupe_runtime() { return dedupe_runtime_slot().get(); }

}  // namespace detail

// ---- DedupeClaim: its accessors read the HeldClaim it is ----

namespace {
const detail::HeldClaim& held(const DedupeClaim& c) noexcept { return static_cast<const detail::HeldClaim&>(c); }
}  // namespace

const std::string& DedupeClaim::key() const noexcept { return held(*this).key_; }
const std::string& DedupeClaim::owner_token() const noexcept { return held(*this).owner_; }

bool DedupeClaim::lost() const noexcept { return held(*this).check(clock::now()); }

std::stop_token DedupeClaim::stop_token() const noexcept {
  held(*this).check(clock::now());  // fires the token first when the deadline has passed
  return held(*this).stop_.get_token();
}

std::string DedupeClaim::lost_cause() const {
  const detail::HeldClaim& c = held(*this);
  c.check(clock::now());
  const char* cause = c.cause_.load(std::memory_order_acquire);
  return cause ? cause : "";
}

DedupeClaim::clock::time_point DedupeClaim::expires_at() const noexcept {
  return clock::time_point(clock::duration(held(*this).expires_.load(std::memory_order_acquire)));
}

std::shared_ptr<const DedupeClaim> DedupeClaim::share() const { return held(*this).shared_from_this(); }

const DedupeClaim* current_dedupe_claim() noexcept { return detail::current_claim; }

const DedupeClaim* current_dedupe_claim(std::string_view key) noexcept {
  for (const detail::HeldClaim* c = detail::current_claim; c; c = c->enclosing())
    if (c->key() == key) return c;
  return nullptr;
}

void configure_dedupe(DedupeOptions options) {
  options.validate();
  detail::check_dedupe_scheme(options.url);  // an unknown scheme fails here, not at the first call
  detail::dedupe_runtime_slot().configure(std::move(options));
}

DedupeStats dedupe_stats() { return detail::dedupe_runtime()->stats(); }

}  // namespace weave
