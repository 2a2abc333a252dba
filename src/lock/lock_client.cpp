// LockClient: acquisition (waiting without polling, reentrancy through the
// call chain), and the process-wide client.
#include <mutex>
#include <optional>

#include "internal.h"
#include "weave/config.h"
#include "weave/error.h"

namespace weave {

using detail::Clock;
using detail::LeaseControl;
using std::chrono::milliseconds;

namespace {

// Longer waits count as forever; longer ttls are refused (clock arithmetic
// on steady_clock nanoseconds would overflow).
constexpr milliseconds k_longest = std::chrono::hours(24 * 365 * 10);

milliseconds since(Clock::time_point t0) {
  return std::chrono::duration_cast<milliseconds>(Clock::now() - t0);
}

void validate(std::string_view key, const LockSpec& spec) {
  if (key.empty()) throw UsageError("lock key is empty");
  if (spec.ttl < milliseconds(0)) throw UsageError("lock ttl is negative");
  if (spec.ttl > k_longest)
    throw UsageError("lock '" + std::string(key) +
                     "': ttl=forever (or over 10 years) is not supported; omit ttl for a lease the watchdog renews");
  if (spec.wait < milliseconds(0)) throw UsageError("lock wait is negative");
  if (spec.release == LockSpec::Release::on_expiry && spec.ttl == milliseconds(0))
    throw UsageError("lock '" + std::string(key) +
                     "': release=on_expiry needs a ttl (a renewed lease would never run out)");
}

std::shared_ptr<const detail::ClientShared> make_shared_state(LockOptions o,
                                                              std::shared_ptr<LockBackend> b) {
  if (!b) throw UsageError("LockClient needs a backend");
  if (o.watchdog_lease <= milliseconds(0)) throw UsageError("LockOptions::watchdog_lease must be > 0");
  auto s = std::make_shared<detail::ClientShared>();
  s->options = std::move(o);
  s->backend = std::move(b);
  return s;
}

}  // namespace

LockClient::LockClient(LockOptions options) {
  auto backend = make_lock_backend(options);
  shared_ = make_shared_state(std::move(options), std::move(backend));
}

LockClient::LockClient(LockOptions options, std::shared_ptr<LockBackend> backend)
    : shared_(make_shared_state(std::move(options), std::move(backend))) {}

const LockOptions& LockClient::options() const noexcept { return shared_->options; }
LockBackend& LockClient::backend() const noexcept { return *shared_->backend; }

LeaseHandle LockClient::acquire(std::string_view key, const LockSpec& spec) {
  milliseconds waited{0};
  LeaseHandle h = try_acquire(key, spec, &waited);
  if (!h) throw LockBusy(std::string(key), waited);
  return h;
}

LeaseHandle LockClient::try_acquire(std::string_view key, const LockSpec& spec,
                                    milliseconds* waited) {
  validate(key, spec);
  const auto start = Clock::now();
  if (waited) *waited = milliseconds(0);

  // Reentrancy: the running call chain already holds this key here.
  for (const detail::ChainNode* n = LeaseControl::head().get(); n; n = n->parent.get()) {
    Lease& outer = *n->lease;
    if (outer.key() != key || LeaseControl::client(outer).backend != shared_->backend) continue;
    if (LeaseControl::add_hold(outer)) return LeaseHandle(n->lease, true);
    break;  // released already (a stale chain): acquire afresh
  }

  LockBackend& backend = *shared_->backend;
  const bool watchdog = spec.ttl == milliseconds(0);
  const milliseconds lease_time = watchdog ? shared_->options.watchdog_lease : spec.ttl;
  const bool forever_wait = spec.wait == forever || spec.wait > k_longest;  // no clock overflow
  const Clock::time_point deadline =
      forever_wait ? Clock::time_point::max() : start + spec.wait;
  std::string owner = detail::new_owner_token();

  for (;;) {
    // Prepared before trying, so a release in between is not missed.
    std::unique_ptr<LockWaiter> waiter;
    if (spec.wait > milliseconds(0)) waiter = backend.prepare_wait(key);
    const auto sent = Clock::now();
    AcquireResult r = backend.try_acquire(key, owner, lease_time);
    if (r.acquired) {
      detail::LeaseInit init;
      init.key.assign(key);
      init.owner = std::move(owner);
      init.fence = r.fencing_token;
      init.watchdog = watchdog;
      init.on_expiry = spec.release == LockSpec::Release::on_expiry;
      init.lease_time = lease_time;
      init.acquired_at = sent;  // conservative: the backend's lease started later
      init.client = shared_;
      auto lease = std::make_shared<Lease>(std::move(init));
      if (r.validity > milliseconds(0) && r.validity < lease_time)
        LeaseControl::set_expires_at(*lease, sent + r.validity);  // the backend's shorter validity
      detail::Watchdog::instance().watch(lease);
      if (waited) *waited = since(start);
      return LeaseHandle(std::move(lease), false);
    }
    const auto now = Clock::now();
    if (!waiter || now >= deadline) {
      if (waited) *waited = since(start);
      return {};
    }
    // Wake on a release, when the holder's lease runs out, or at our deadline.
    Clock::time_point wake = deadline;
    if (r.holder_ttl_left > milliseconds(0) && r.holder_ttl_left < deadline - now)
      wake = now + r.holder_ttl_left + milliseconds(1);
    waiter->wait_until(wake);
  }
}

// ---- the process-wide client ----

namespace {
struct Global {
  std::mutex mutex;
  std::optional<LockClient> client;
};
Global& global() {
  static Global* g = new Global;  // usable during exit
  return *g;
}
}  // namespace

void configure_locks(LockOptions options) {
  LockClient client(std::move(options));  // may throw ConfigError; keeps the old one then
  Global& g = global();
  std::lock_guard lock(g.mutex);
  g.client = std::move(client);
}

LockClient default_lock_client() {
  Global& g = global();
  std::lock_guard lock(g.mutex);
  if (!g.client) g.client.emplace(load_lock_options());
  return *g.client;
}

}  // namespace weave
