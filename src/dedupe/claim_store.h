// Where [[dedupe]] keeps one record per key: a running call's claim (a
// lease), then the call's outcome for the window. mem:// keeps it in this
// process (claim_mem.cpp); the Redis URLs run scripts through the store
// layer (redis/claim_redis.cpp, scripts/).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/change_waiter.h"
#include "weave/abi.h"

namespace WEAVE_NAMESPACE::detail {

// A record's text: "<kind>|<match size>|<match><rest>", kind r (running;
// rest = the claim's owner), d (done; rest = the result as JSON, "" when not
// kept), e (failed, remembered; rest = the error's text).
struct DedupeRecord {
  char kind = 0;
  std::string match, rest;
  std::string encode() const;
  // Appends the text of a record to `out` (encode() without the object).
  static void encode_to(std::string& out, char kind, std::string_view match, std::string_view rest);
  // False for text of another shape (written by another version).
  static bool decode(std::string_view text, DedupeRecord& out);
};

struct ClaimOutcome {
  bool claimed = false;         // the caller now holds the key's claim
  DedupeRecord existing;        // when not claimed: the record found
  bool readable = true;         // false: the record found has an unknown shape
  std::chrono::milliseconds ttl_left{0};  // of the record found (0 unknown: ttl_left(key) asks)
  // read() only: how long ago the outcome was written (none: running, or unknown).
  std::optional<std::chrono::milliseconds> age;
};

// A duplicate's wait for the key's record to change.
using ClaimWaiter = ChangeWaiter;

class ClaimStore {
 public:
  virtual ~ClaimStore() = default;
  // All may throw IoError / ReplyError.

  // One atomic step: if `key` has no record, records a running claim for
  // `owner` lasting `lease`; else returns the record.
  virtual ClaimOutcome claim(std::string_view key, std::string_view owner, std::string_view match,
                             std::chrono::milliseconds lease) = 0;
  // Replaces `owner`'s running claim by `outcome` for `window` and wakes
  // waiters. False when the claim is no longer `owner`'s (it ran out).
  virtual bool finish(std::string_view key, std::string_view owner, std::string_view match,
                      const DedupeRecord& outcome, std::chrono::milliseconds window) = 0;
  // Drops `owner`'s running claim (a failed call that leaves no record) and
  // wakes waiters. False when it was no longer `owner`'s.
  virtual bool forget(std::string_view key, std::string_view owner, std::string_view match) = 0;
  // Extends each claim still held by its owner; one result per item.
  struct Renewal {
    std::string_view key, owner, match;
    std::chrono::milliseconds lease;
  };
  virtual std::vector<bool> renew(std::span<const Renewal> items) = 0;
  // How long the key's record lasts, for a duplicate that waits on a running
  // claim whose claim() did not say (ClaimOutcome::ttl_left 0): at least 1 ms
  // while it may still be there, 0 when unknown.
  virtual std::chrono::milliseconds ttl_left(std::string_view /*key*/) { return std::chrono::milliseconds(0); }
  // Made BEFORE the claim() it follows, so a finish in between is not missed.
  virtual std::unique_ptr<ClaimWaiter> prepare_wait(std::string_view key) = 0;
  // The key's record as it is (claimed false; ttl_left its time left), or
  // nothing when there is none. Read-only, for operators (`weave dedupe show`).
  virtual std::optional<ClaimOutcome> read(std::string_view key) = 0;
};

std::shared_ptr<ClaimStore> make_mem_claims(std::string_view table);

}  // namespace weave::detail
