#include "redis/lock_requests.h"

#include <algorithm>

#include "redis/scripts.h"

namespace weave::redis {
namespace {

// Items per renew script call; all calls of one batch go in one pipelined write.
constexpr std::size_t kRenewChunk = 256;

long long int_at(const redisReply* r, std::size_t i) {
  const redisReply* e = r->element[i];
  if (e->type == REDIS_REPLY_INTEGER) return e->integer;
  if (e->type == REDIS_REPLY_STRING) return std::stoll(std::string(e->str, e->len));
  return 0;
}

std::string lease_ms(std::chrono::milliseconds lease) { return std::to_string(std::max<long long>(1, lease.count())); }

}  // namespace

AcquireRequest::AcquireRequest(std::string_view prefix, std::string_view key, std::string_view owner,
                               std::chrono::milliseconds lease)
    : lock_(lock_key_for(prefix, key)), fence_(lock_ + ":fence"), ms_(lease_ms(lease)), owner_(owner) {}

ScriptCall AcquireRequest::call() const { return {kAcquireScript, {lock_, fence_}, {owner_, ms_}}; }

AcquireResult AcquireRequest::parse(const redisReply* r) {
  if (r->type != REDIS_REPLY_ARRAY || r->elements != 2) bad_reply(r, "acquire");
  AcquireResult out;
  const long long flag = int_at(r, 0), value = int_at(r, 1);
  if (flag == 1) {
    out.acquired = true;
    out.fencing_token = static_cast<std::uint64_t>(value);
  } else {
    out.holder_ttl_left = std::chrono::milliseconds(value > 0 ? value : 0);
  }
  return out;
}

ReleaseRequest::ReleaseRequest(std::string_view prefix, std::string_view key, std::string_view owner)
    : lock_(lock_key_for(prefix, key)), channel_(lock_ + ":released"), owner_(owner) {}

ScriptCall ReleaseRequest::call() const { return {kReleaseScript, {lock_}, {owner_, channel_}}; }

ReleaseResult ReleaseRequest::parse(const redisReply* r) {
  if (r->type != REDIS_REPLY_INTEGER) bad_reply(r, "release");
  return r->integer == 1 ? ReleaseResult::released : ReleaseResult::lost;
}

RenewRequest::RenewRequest(std::string_view prefix, std::span<const RenewItem> items, const Executor& executor)
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
  for (std::size_t i = 0; i < order.size();) {
    const unsigned shard = order[i].shard;
    const bool read = order[i].read;
    ScriptCall call{read ? kRenewReadScript : kRenewScript, {}, {}};
    std::vector<std::size_t> idx;
    for (; i < order.size() && order[i].shard == shard && order[i].read == read && idx.size() < kRenewChunk; ++i) {
      const std::size_t j = order[i].index;
      idx.push_back(j);
      if (read) {
        call.keys.push_back(storage_.emplace_back(*names[j] + ":readers"));
        call.keys.push_back(storage_.emplace_back(*names[j] + ":readers:fence"));
      } else {
        call.keys.push_back(*names[j]);
      }
      call.args.push_back(items[j].owner_token);
      call.args.push_back(storage_.emplace_back(lease_ms(items[j].lease)));
    }
    calls_.push_back(std::move(call));
    members_.push_back(std::move(idx));
  }
}

std::vector<RenewResult> RenewRequest::parse(const std::vector<Reply>& replies) const {
  std::vector<RenewResult> out(items_, RenewResult::lost);
  for (std::size_t c = 0; c < calls_.size(); ++c) {
    const redisReply* r = replies.at(c).get();
    if (r->type == REDIS_REPLY_ERROR) bad_reply(r, "renew");
    if (r->type != REDIS_REPLY_ARRAY || r->elements != members_[c].size()) bad_reply(r, "renew");
    for (std::size_t j = 0; j < r->elements; ++j)
      out[members_[c][j]] = int_at(r, j) == 1 ? RenewResult::owned : RenewResult::lost;
  }
  return out;
}

}  // namespace weave::redis
