#include "lock/redis/requests.h"

#include <algorithm>

#include "core/glob.h"
#include "core/unique_token.h"
#include "lock/scripts.h"

namespace WEAVE_NAMESPACE::lock_redis {
namespace {

using std::chrono::milliseconds;

// Items per renew script call; all calls of one batch go in one pipelined write.
constexpr std::size_t kRenewChunk = 256;

// The names of a lock's keys after its own "{<prefix><key>}" (src/lock/scripts/).
constexpr char kFence[] = ":fence", kLine[] = ":line", kLineUntil[] = ":line:until", kReaders[] = ":readers",
               kReaderFences[] = ":readers:fence", kWriters[] = ":writers", kReleased[] = ":released",
               kReleasedBy[] = ":released_by", kReadersReleased[] = ":readers:released", kForced[] = ":forced";

// A script's number (an integer, or a string holding one); 0 for anything else (nil).
long long number_or_zero(store::ReplyView v) {
  return v.is_integer() || v.is_text() ? v.number() : 0;
}

std::string ms_text(milliseconds d, long long least) { return std::to_string(std::max<long long>(least, d.count())); }
std::string lease_ms(milliseconds lease) { return ms_text(lease, 1); }
std::string grace_ms(const CounterPolicy& c) { return ms_text(c.grace, 1); }
std::string_view floor_flag(const CounterPolicy& c) { return c.clock_floor ? "1" : "0"; }

}  // namespace

std::string lock_key_for(std::string_view prefix, std::string_view key) {
  std::string k;
  k.reserve(prefix.size() + key.size() + 2);
  k += '{';
  k += prefix;
  k += key;
  k += '}';
  return k;
}

CounterPolicy CounterPolicy::from(const LockOptions& options, bool clock_floor) {
  return CounterPolicy{options.key_grace, clock_floor};
}

std::string release_channel(std::string_view prefix, std::string_view key) {
  return lock_key_for(prefix, key) + kReleased;
}

AcquireCommand::AcquireCommand(std::string_view prefix, std::string_view key, std::string_view owner,
                               milliseconds lease, const CounterPolicy& counter, LockType type, milliseconds entry,
                               milliseconds handoff_turn, bool starving)
    : type_(type),
      lock_(lock_key_for(prefix, key)),
      fence_(lock_ + kFence),
      ms_(lease_ms(lease)),
      entry_(ms_text(type == LockType::reentrant ? handoff_turn : entry, 0)),
      grace_(grace_ms(counter)),
      owner_(owner),
      floor_(floor_flag(counter)),
      starving_(starving ? "1" : "0") {
  if (type == LockType::fair || (type == LockType::reentrant && handoff_turn > milliseconds(0))) {
    a_ = lock_ + kLine;
    b_ = lock_ + kLineUntil;
  } else if (type == LockType::read || type == LockType::write) {
    a_ = lock_ + kReaders;
    b_ = lock_ + kReaderFences;
    writers_ = lock_ + kWriters;
  }
}

store::ScriptCall AcquireCommand::call() const {
  std::vector<std::string_view> args{owner_, ms_, entry_, grace_, floor_};
  switch (type_) {
    case LockType::fair:
      return {scripts::acquire_fair, {lock_, fence_, a_, b_}, std::move(args)};
    case LockType::read:
      return {scripts::acquire_read, {lock_, fence_, a_, b_, writers_}, std::move(args)};
    case LockType::write:
      return {scripts::acquire_write, {lock_, fence_, a_, b_, writers_}, std::move(args)};
    case LockType::reentrant:
      break;
  }
  if (a_.empty()) return {scripts::acquire, {lock_, fence_}, std::move(args)};
  args.push_back(starving_);
  // The line may be left out while the slot migrates: barging for that while.
  return {scripts::acquire, {lock_, fence_, a_, b_}, std::move(args), 2};
}

AcquireResult AcquireCommand::parse(const store::Reply& reply) {
  const store::ReplyView r(reply, "acquire");
  if (r.size() != 2) r.unexpected();
  AcquireResult out;
  const long long flag = number_or_zero(r[0]), value = number_or_zero(r[1]);
  if (flag == 1) {
    out.acquired = true;
    out.fencing_token = static_cast<std::uint64_t>(value);
  } else {
    out.holder_ttl_left = milliseconds(value > 0 ? value : 0);
  }
  return out;
}

ReleaseCommand::ReleaseCommand(std::string_view prefix, std::string_view key, std::string_view owner,
                               const CounterPolicy& counter, LockType type, milliseconds handoff_turn)
    : read_(type == LockType::read), grace_(grace_ms(counter)), owner_(owner) {
  const std::string lock = lock_key_for(prefix, key);
  channel_ = lock + kReleased;
  if (read_) {
    keys_[0] = lock + kReaders;
    keys_[1] = lock + kReaderFences;
    keys_[2] = lock + kFence;
    keys_[3] = lock + kReadersReleased;
  } else {
    keys_[1] = lock + kFence;
    keys_[2] = lock + kReleasedBy;
    keys_[0] = lock;
    if (type == LockType::reentrant && handoff_turn > milliseconds(0)) {
      keys_[3] = lock + kLine;
      keys_[4] = lock + kLineUntil;
      turn_ = ms_text(handoff_turn, 1);
    }
  }
}

// The keys after L and its counter (a read release's: after its readers,
// their fences and the counter) are optional (required_keys): while the slot
// migrates and only some have moved, the release goes without them, as it did
// before they existed (a resend of that release may answer lost).
store::ScriptCall ReleaseCommand::call() const {
  if (read_)
    return {scripts::release_read, {keys_[0], keys_[1], keys_[2], keys_[3]}, {owner_, channel_, grace_}, 3};
  if (turn_.empty()) return {scripts::release, {keys_[0], keys_[1], keys_[2]}, {owner_, channel_, grace_}, 2};
  return {scripts::release, {keys_[0], keys_[1], keys_[2], keys_[3], keys_[4]}, {owner_, channel_, grace_, turn_},
          2};
}

ReleaseResult ReleaseCommand::parse(const store::Reply& reply) {
  return store::ReplyView(reply, "release").integer() == 1 ? ReleaseResult::released : ReleaseResult::lost;
}

LeaveLineCommand::LeaveLineCommand(std::string_view prefix, std::string_view key, std::string_view owner,
                                   LockType type)
    : line_(type != LockType::write), lock_(lock_key_for(prefix, key)), owner_(owner) {
  places_ = lock_ + (line_ ? kLineUntil : kWriters);
  if (line_) line_key_ = lock_ + kLine;
  channel_ = lock_ + kReleased;
}

store::ScriptCall LeaveLineCommand::call() const {
  store::ScriptCall call{scripts::leave_line, {places_, lock_}, {owner_, channel_}};
  if (line_) call.keys.push_back(line_key_);
  return call;
}

RenewCommand::RenewCommand(std::string_view prefix, std::span<const RenewItem> items, const store::Executor& executor,
                           const CounterPolicy& counter)
    : items_(items.size()) {
  struct Item {
    unsigned shard;
    bool read;
    std::size_t index;
  };
  std::vector<Item> order;
  std::vector<const std::string*> names(items.size());
  order.reserve(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    names[i] = &storage_.emplace_back(lock_key_for(prefix, items[i].key));
    order.push_back({executor.shard_of(*names[i]), items[i].type == LockType::read, i});
  }
  std::stable_sort(order.begin(), order.end(), [](const Item& a, const Item& b) {
    return a.shard != b.shard ? a.shard < b.shard : a.read < b.read;
  });
  const std::string& grace = storage_.emplace_back(grace_ms(counter));
  for (std::size_t i = 0; i < order.size();) {
    const unsigned shard = order[i].shard;
    const bool read = order[i].read;
    store::ScriptCall call{read ? scripts::renew_read : scripts::renew, {}, {grace}};
    std::vector<std::size_t> idx;
    for (; i < order.size() && order[i].shard == shard && order[i].read == read && idx.size() < kRenewChunk; ++i) {
      const std::size_t j = order[i].index;
      const std::string& lock = *names[j];
      idx.push_back(j);
      if (read) {
        call.keys.push_back(storage_.emplace_back(lock + kReaders));
        call.keys.push_back(storage_.emplace_back(lock + kReaderFences));
      } else {
        call.keys.push_back(lock);
      }
      call.keys.push_back(storage_.emplace_back(lock + kFence));
      call.args.push_back(items[j].owner_token);
      call.args.push_back(storage_.emplace_back(lease_ms(items[j].lease)));
    }
    calls_.push_back(std::move(call));
    members_.push_back(std::move(idx));
  }
}

std::vector<RenewResult> RenewCommand::parse(const std::vector<store::Reply>& replies) const {
  std::vector<RenewResult> out(items_, RenewResult::lost);
  for (std::size_t c = 0; c < calls_.size(); ++c) {
    const store::ReplyView r(replies.at(c), "renew");
    if (r.size() != members_[c].size()) r.unexpected();
    for (std::size_t j = 0; j < r.size(); ++j)
      out[members_[c][j]] = number_or_zero(r[j]) == 1 ? RenewResult::owned : RenewResult::lost;
  }
  return out;
}

RaiseFenceCommand::RaiseFenceCommand(std::string_view prefix, std::string_view key, std::uint64_t token,
                                     milliseconds lease, const CounterPolicy& counter)
    : fence_(lock_key_for(prefix, key) + kFence),
      token_(std::to_string(token)),
      keep_ms_(lease_ms(std::max(lease, milliseconds(1)) + std::max(counter.grace, milliseconds(1)))) {}

store::ScriptCall RaiseFenceCommand::call() const { return {scripts::raise_fence, {fence_}, {token_, keep_ms_}}; }

void RaiseFenceCommand::parse(const store::Reply& reply) {
  store::ReplyView(reply, "raise fencing counter").integer();
}

namespace {

// The holders in a flat {owner, ms left, token, ...} reply.
std::vector<LockHolder> holders_of(const store::ReplyView& flat) {
  std::vector<LockHolder> out;
  for (std::size_t i = 0; i + 2 < flat.size(); i += 3)
    out.push_back({std::string(flat[i].text()), static_cast<std::uint64_t>(number_or_zero(flat[i + 2])),
                   milliseconds(number_or_zero(flat[i + 1]))});
  return out;
}

}  // namespace

InspectCommand::InspectCommand(std::string_view prefix, std::string_view key) : key_(key) {
  const std::string lock = lock_key_for(prefix, key);
  keys_[0] = lock;
  keys_[1] = lock + kFence;
  keys_[2] = lock + kLine;
  keys_[3] = lock + kReaders;
  keys_[4] = lock + kReaderFences;
  keys_[5] = lock + kWriters;
}

store::ScriptCall InspectCommand::call() const {
  return {scripts::inspect, {keys_[0], keys_[1], keys_[2], keys_[3], keys_[4], keys_[5]}, {}};
}

LockState InspectCommand::parse(const store::Reply& reply) const {
  const store::ReplyView r(reply, "inspect");
  if (r.size() != 6) r.unexpected();
  LockState st;
  st.key = key_;
  st.fence = static_cast<std::uint64_t>(number_or_zero(r[2]));
  if (!r[0].text().empty()) {
    st.holders.push_back({std::string(r[0].text()), st.fence, milliseconds(number_or_zero(r[1]))});
  } else {
    st.holders = holders_of(r[4]);
    st.read = !st.holders.empty();
  }
  for (std::size_t i = 0; i < r[3].size(); ++i) st.line.emplace_back(r[3][i].text());
  for (std::size_t i = 0; i < r[5].size(); ++i) st.line.emplace_back(r[5][i].text());
  return st;
}

ForceReleaseCommand::ForceReleaseCommand(std::string_view prefix, std::string_view key, const CounterPolicy& counter)
    : grace_(grace_ms(counter)), request_(detail::unique_token()), floor_(floor_flag(counter)) {
  const std::string lock = lock_key_for(prefix, key);
  keys_[0] = lock;
  keys_[1] = lock + kFence;
  keys_[2] = lock + kReaders;
  keys_[3] = lock + kReaderFences;
  keys_[4] = lock + kForced;
  channel_ = lock + kReleased;
}

store::ScriptCall ForceReleaseCommand::call() const {
  return {scripts::force_release, {keys_[0], keys_[1], keys_[2], keys_[3], keys_[4]},
          {channel_, grace_, floor_, request_}};
}

ForcedRelease ForceReleaseCommand::parse(const store::Reply& reply) {
  const store::ReplyView r(reply, "force release");
  if (r.size() != 2) r.unexpected();
  return {holders_of(r[0]), static_cast<std::uint64_t>(number_or_zero(r[1]))};
}

std::string lock_scan_pattern(std::string_view prefix, std::string_view pattern) {
  // "{<prefix><pattern>}" and its suffixed keys ("...}:fence"); the caller
  // matches the lock key itself against `pattern` (a '*' may span a '}').
  std::string out;  // (appended: g++ 12 -O3 warns (-Wrestrict) on "{" + ...)
  out.append("{").append(detail::glob_literal(prefix)).append(pattern).append("}*");
  return out;
}

std::string lock_of_redis_key(std::string_view prefix, std::string_view redis_key) {
  const std::string head = std::string("{").append(prefix);
  if (!redis_key.starts_with(head)) return {};
  for (std::string_view suffix :
       {"", kFence, kLine, kLineUntil, kReaders, kReaderFences, kReadersReleased, kWriters, kForced, kReleasedBy}) {
    const std::string tail = std::string("}").append(suffix);
    if (redis_key.size() >= head.size() + tail.size() && redis_key.ends_with(tail))
      return std::string(redis_key.substr(head.size(), redis_key.size() - head.size() - tail.size()));
  }
  return {};
}

}  // namespace weave::lock_redis
