// weave/error.h — the typed errors every part of Weave throws.
//
// One hierarchy, rooted at weave::Error, so callers can catch broadly or
// precisely. Every error says whether retrying the same call can succeed:
//
//   try { svc.pay("o-1", 100); }
//   catch (const weave::LockBusy& e) { log(e.key(), e.waited()); }     // someone else holds it
//   catch (const weave::Error& e)    { if (e.retryable()) retry(); else throw; }
//
//   Error
//   ├── ConfigError            bad URL, bad JSON, unknown option (fix the config)
//   ├── UsageError             API misuse: missing interceptor, wrong argument kind
//   ├── LockError              carries the key
//   │   ├── LockBusy           not acquired within `wait` (retryable)
//   │   └── LeaseLost          the lease expired or was taken while the method ran
//   └── IoError                backend I/O failed (retryable)
//       ├── BackendUnavailable cannot connect to the backend
//       └── TimeoutError       the backend did not answer in time
#pragma once

#include <chrono>
#include <stdexcept>
#include <string>

namespace weave {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what, bool retryable = false)
      : std::runtime_error(what), retryable_(retryable) {}
  // True when the same call may succeed if tried again later.
  bool retryable() const noexcept { return retryable_; }

 private:
  bool retryable_;
};

class ConfigError : public Error {
 public:
  explicit ConfigError(const std::string& what) : Error("weave config: " + what) {}
};

class UsageError : public Error {
 public:
  explicit UsageError(const std::string& what) : Error("weave: " + what) {}
};

class LockError : public Error {
 public:
  LockError(std::string key, const std::string& what, bool retryable)
      : Error(what, retryable), key_(std::move(key)) {}
  const std::string& key() const noexcept { return key_; }

 private:
  std::string key_;
};

class LockBusy : public LockError {
 public:
  LockBusy(std::string key, std::chrono::milliseconds waited)
      : LockError(key,
                  "weave: lock '" + key + "' is busy (waited " +
                      std::to_string(waited.count()) + " ms)",
                  true),
        waited_(waited) {}
  std::chrono::milliseconds waited() const noexcept { return waited_; }

 private:
  std::chrono::milliseconds waited_;
};

class LeaseLost : public LockError {
 public:
  LeaseLost(std::string key, const std::string& cause)
      : LockError(key, "weave: lease on '" + key + "' was lost: " + cause, false) {}
};

class IoError : public Error {
 public:
  explicit IoError(const std::string& what) : Error(what, true) {}
};

class BackendUnavailable : public IoError {
 public:
  explicit BackendUnavailable(const std::string& what) : IoError(what) {}
};

class TimeoutError : public IoError {
 public:
  explicit TimeoutError(const std::string& what) : IoError(what) {}
};

}  // namespace weave
