// LockClient: made from options (its backend chosen by URL) or given a
// backend; its counts, the operator's calls (locks, lock_state,
// force_unlock) and the entry points of a request, which acquisition.cpp runs.
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/glob.h"
#include "internal.h"
#include "mem_backend.h"
#include "weave/error.h"

namespace WEAVE_NAMESPACE {

using detail::LeaseControl;
using std::chrono::milliseconds;

namespace {

std::shared_ptr<const detail::ClientShared> make_shared_state(LockOptions o,
                                                              std::shared_ptr<LockBackend> b) {
  if (!b) throw UsageError("LockClient needs a backend");
  detail::validate_values(o);  // the URL's scheme matters only when the URL picks the backend
  auto s = std::make_shared<detail::ClientShared>();
  s->options = std::move(o);
  s->backend = std::move(b);
  s->in_process = detail::is_mem_backend(s->backend.get());
  return s;
}

}  // namespace

LockClient::LockClient(LockOptions options) {
  options.validate();
  auto backend = make_lock_backend(options);
  shared_ = make_shared_state(std::move(options), std::move(backend));
}

LockClient::LockClient(LockOptions options, std::shared_ptr<LockBackend> backend)
    : shared_(make_shared_state(std::move(options), std::move(backend))) {}

const LockOptions& LockClient::options() const noexcept { return shared_->options; }

LockStats LockClient::stats() const noexcept {
  LockStats s;
  using C = detail::ClientShared::Counters;
  const auto& k = shared_->stats;
  s.acquired = k.sum(&C::acquired);
  s.reentered = k.sum(&C::reentered);
  s.busy = k.sum(&C::busy);
  s.errors = k.sum(&C::errors);
  s.released = k.sum(&C::released);
  s.lost = k.sum(&C::lost);
  s.release_failures = k.sum(&C::release_failures);
  s.renewals = k.sum(&C::renewals);
  s.acquiring = std::chrono::microseconds(k.sum(&C::acquiring_us));
  return s;
}
std::vector<LockState> LockClient::locks(std::string_view pattern) const { return shared_->backend->list(pattern); }

std::optional<LockState> LockClient::lock_state(std::string_view key) const {
  for (LockState& s : locks(detail::glob_literal(key)))
    if (s.key == key) return std::move(s);
  return std::nullopt;
}

ForcedRelease LockClient::force_unlock(std::string_view key) const {
  if (key.empty()) throw UsageError("force_unlock: no key given");
  try {
    return shared_->backend->force_release(key);
  } catch (Error& e) {
    detail::name_key(e, key);
    throw;
  }
}

bool LockClient::made_in_other_process() const noexcept { return shared_->pid != detail::current_pid(); }
LockBackend& LockClient::backend() const noexcept { return *shared_->backend; }

LeaseHandle LockClient::acquire(std::string_view key, const LockSpec& spec) {
  milliseconds waited{0};
  LeaseHandle h = try_acquire(key, spec, &waited);
  if (!h) detail::throw_busy(spec, std::string(key), waited);
  return h;
}




LeaseHandle LockClient::try_acquire(std::string_view key, const LockSpec& spec,
                                    milliseconds* waited) {
  return try_acquire_all(std::span<const std::string_view>(&key, 1), spec, waited);
}

LeaseHandle LockClient::acquire_all(std::span<const std::string_view> keys, const LockSpec& spec) {
  milliseconds waited{0};
  std::string busy;
  LeaseHandle h = try_acquire_all(keys, spec, &waited, &busy);
  if (!h) detail::throw_busy(spec, busy, waited);
  return h;
}

LeaseHandle LockClient::try_acquire_all(std::span<const std::string_view> keys, const LockSpec& spec,
                                        milliseconds* waited, std::string* busy_key) {
  static detail::LockSeries& direct = detail::lock_series("");
  return try_acquire_counted(keys, spec, /*spec_checked=*/false, waited, busy_key, direct, detail::context_head(),
                             /*lend_client=*/false);
}


namespace detail {

LockClient LeaseControl::thread_copy(const LockClient& c) {
  LockClient copy = c;
  copy.shared_ = std::shared_ptr<const ClientShared>(c.shared_.get(), [keep = c.shared_](const ClientShared*) {});
  return copy;
}
}  // namespace detail

}  // namespace weave
