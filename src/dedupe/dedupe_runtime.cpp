#include "dedupe/dedupe_runtime.h"

#include <sys/random.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
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

std::mutex& factories_mutex() {
  static std::mutex m;
  return m;
}
std::map<std::string, ClaimStoreFactory, std::less<>>& factories() {
  static std::map<std::string, ClaimStoreFactory, std::less<>> f;
  return f;
}

std::shared_ptr<ClaimStore> make_store(const DedupeOptions& o) {
  std::string url = o.url;
  if (url.empty())
    for (const char* env : {"WEAVE_DEDUPE_URL", "WEAVE_URL"})
      if (const char* v = std::getenv(env); v && *v && url.empty()) url = v;
  if (url.empty()) url = "mem://";
  const StoreUrl u = parse_store_url(url);
  if (u.scheme == "mem") return make_mem_claims(u.name);
  std::lock_guard g(factories_mutex());
  auto it = factories().find(u.scheme);
  if (it == factories().end())
    throw ConfigError("dedupe url '" + url + "': no dedupe store for '" + u.scheme +
                      "://' in this program (link Weave::redis for the Redis URLs)");
  DedupeOptions resolved = o;
  resolved.url = url;
  return it->second(resolved);
}

std::mutex& runtime_mutex() {
  static std::mutex m;
  return m;
}
std::shared_ptr<DedupeRuntime>& runtime_slot() {
  static std::shared_ptr<DedupeRuntime> r;
  return r;
}
// What configure_dedupe() said; the runtime is made from it on first use.
DedupeOptions& configured_options() {
  static DedupeOptions o;
  return o;
}

}  // namespace

void check_dedupe_scheme(const std::string& url) {
  if (url.empty()) return;
  const std::string scheme = parse_store_url(url).scheme;
  if (scheme == "mem") return;
  std::lock_guard lock(factories_mutex());
  if (!factories().count(scheme))
    throw ConfigError("dedupe url '" + url + "': no dedupe store for '" + scheme +
                      "://' in this program (link Weave::redis for the Redis URLs)");
}

void register_claim_store(std::string scheme, ClaimStoreFactory factory) {
  std::lock_guard g(factories_mutex());
  factories()[std::move(scheme)] = std::move(factory);
}

std::string unique_token() {
  struct Source {
    pid_t pid = 0;
    std::string prefix;
    std::uint64_t next = 0;
  };
  thread_local Source source;
  if (source.pid != ::getpid()) {
    unsigned char bytes[16];
    if (::getrandom(bytes, sizeof bytes, 0) != static_cast<ssize_t>(sizeof bytes))
      throw IoError("weave: getrandom failed");
    char hex[33];
    for (int i = 0; i < 16; ++i) std::snprintf(hex + 2 * i, 3, "%02x", bytes[i]);
    source = {::getpid(), std::string(hex, 32) + ":", 0};
  }
  return source.prefix + std::to_string(source.next++);
}

HeldClaim::HeldClaim(std::string key, std::string owner, std::string match, std::chrono::milliseconds lease)
    : key_(std::move(key)), owner_(std::move(owner)), match_(std::move(match)), lease_(lease),
      expires_((Clock::now() + lease).time_since_epoch().count()) {}

bool HeldClaim::lost() const noexcept {
  return lost_.load() || Clock::now().time_since_epoch().count() >= expires_.load();
}

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
  if (renewer_.joinable()) renewer_.join();
}

std::shared_ptr<HeldClaim> DedupeRuntime::hold(std::string key, std::string owner, std::string match) {
  auto claim = std::make_shared<HeldClaim>(std::move(key), std::move(owner), std::move(match), options_.claim_lease);
  std::lock_guard g(mutex_);
  held_[claim.get()] = claim;
  if (!renewer_.joinable()) renewer_ = std::thread([this] { renew_loop(); });
  return claim;
}

void DedupeRuntime::release(const std::shared_ptr<HeldClaim>& claim) {
  std::lock_guard g(mutex_);
  held_.erase(claim.get());
}

void DedupeRuntime::renew_loop() {
  const auto every = options_.claim_lease / 3;
  std::unique_lock g(mutex_);
  while (!stop_) {
    cv_.wait_for(g, every, [&] { return stop_; });
    if (stop_) return;
    std::vector<std::shared_ptr<HeldClaim>> batch;
    for (auto& [p, c] : held_)
      if (!c->lost_.load()) batch.push_back(c);
    if (batch.empty()) continue;
    g.unlock();
    std::vector<ClaimStore::Renewal> items;
    for (auto& c : batch) items.push_back({c->key_, c->owner_, c->match_, c->lease_});
    const auto sent = Clock::now();
    try {
      std::vector<bool> owned = store_->renew(items);
      for (std::size_t i = 0; i < batch.size() && i < owned.size(); ++i) {
        if (owned[i]) batch[i]->expires_.store((sent + batch[i]->lease_).time_since_epoch().count());
        else batch[i]->lost_.store(true);
      }
    } catch (const std::exception&) {
      // Not renewed this time: the claims keep their deadlines and run out
      // if the store stays away.
    }
    g.lock();
  }
}

DedupeStats DedupeRuntime::stats() const {
  auto get = [](const std::atomic<std::uint64_t>& a) { return a.load(std::memory_order_relaxed); };
  const DedupeCounters& k = counters_;
  DedupeStats s;
  s.first_calls = get(k.first_calls);
  s.duplicates = get(k.duplicates);
  s.replays = get(k.replays);
  s.waited = get(k.waited);
  s.in_flight_refused = get(k.in_flight_refused);
  s.mismatches = get(k.mismatches);
  s.forgotten = get(k.forgotten);
  s.remembered = get(k.remembered);
  s.claims_lost = get(k.claims_lost);
  s.errors = get(k.errors);
  return s;
}

void DedupeRuntime::report(std::string_view key, const std::exception& error, bool store_failure) noexcept {
  if (store_failure) counters_.errors.fetch_add(1, std::memory_order_relaxed);
  if (!options_.on_event) return;
  try {
    const auto* typed = dynamic_cast<const Error*>(&error);
    const Error wrapped(std::string("dedupe key '") + std::string(key) + "': " + error.what());
    options_.on_event(Event{EventKind::dedupe_error, "dedupe", key, error.what(), typed ? *typed : wrapped, nullptr});
  } catch (...) {
  }
}

std::shared_ptr<DedupeRuntime> dedupe_runtime() {
  std::lock_guard g(runtime_mutex());
  auto& r = runtime_slot();
  if (!r) r = std::make_shared<DedupeRuntime>(configured_options());
  return r;
}

}  // namespace detail

void configure_dedupe(DedupeOptions options) {
  options.validate();
  detail::check_dedupe_scheme(options.url);  // an unknown scheme fails here, not at the first call
  std::shared_ptr<detail::DedupeRuntime> old;  // released outside the lock
  {
    std::lock_guard g(detail::runtime_mutex());
    detail::configured_options() = std::move(options);
    old = std::exchange(detail::runtime_slot(), nullptr);
  }
}

DedupeStats dedupe_stats() { return detail::dedupe_runtime()->stats(); }

}  // namespace weave
