#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <exception>
#include <mutex>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include <hiredis/hiredis.h>

#include "core/events.h"
#include "store/cluster_executor.h"
#include "weave/error.h"

namespace WEAVE_NAMESPACE::store {
namespace {

std::uint16_t crc16(std::string_view s) noexcept {
  std::uint16_t crc = 0;
  for (unsigned char c : s) {
    crc ^= static_cast<std::uint16_t>(c) << 8;
    for (int b = 0; b < 8; ++b)
      crc = (crc & 0x8000) ? static_cast<std::uint16_t>((crc << 1) ^ 0x1021) : static_cast<std::uint16_t>(crc << 1);
  }
  return crc;
}

// "MOVED <slot> <host>:<port>" / "ASK <slot> <host>:<port>".
struct Redirect {
  bool ask = false;
  unsigned slot = 0;
  std::string host;
  int port = 0;
};

// Parses a redirect error's text ("MOVED 5168 127.0.0.1:7001").
std::optional<Redirect> parse_redirect(std::string_view e) {
  Redirect out;
  if (e.rfind("MOVED ", 0) == 0)
    e.remove_prefix(6);
  else if (e.rfind("ASK ", 0) == 0) {
    e.remove_prefix(4);
    out.ask = true;
  } else
    return std::nullopt;
  const auto sp = e.find(' ');
  const auto colon = e.rfind(':');
  if (sp == std::string_view::npos || colon == std::string_view::npos || colon < sp) return std::nullopt;
  try {
    out.slot = static_cast<unsigned>(std::stoul(std::string(e.substr(0, sp))));
    out.host = std::string(e.substr(sp + 1, colon - sp - 1));
    out.port = std::stoi(std::string(e.substr(colon + 1)));
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (out.slot >= kSlots) return std::nullopt;
  return out;
}

// MOVED and I/O error rounds per request: a slot that keeps moving is an error.
constexpr int kRounds = 5;

// The nodes one follow() sent to, kept until it ends; the first few inside
// it (a request to one node touches no heap).
class Held {
 public:
  store::NodeExecutor* keep(std::shared_ptr<store::NodeExecutor> n) {
    store::NodeExecutor* const p = n.get();
    for (std::size_t i = 0; i < inline_count_; ++i)
      if (inline_[i] == n) return p;
    if (inline_count_ < inline_.size())
      inline_[inline_count_++] = std::move(n);
    else if (std::find(more_.begin(), more_.end(), n) == more_.end())
      more_.push_back(std::move(n));
    return p;
  }

 private:
  std::array<std::shared_ptr<store::NodeExecutor>, 4> inline_;
  std::size_t inline_count_ = 0;
  std::vector<std::shared_ptr<store::NodeExecutor>> more_;
};

// A vector of plain values whose first N live inside it: follow()'s
// bookkeeping for one command, or a small batch, touches no heap.
template <class T, std::size_t N = 8>
class Small {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_default_constructible_v<T>);

 public:
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* begin() { return data(); }
  T* end() { return data() + size_; }
  T& operator[](std::size_t i) { return data()[i]; }
  std::span<const T> span() { return {data(), size_}; }
  void clear() { size_ = 0; }
  void swap(Small& o) noexcept {
    // Bytes, not values: the slots past size() were never written.
    unsigned char held[sizeof inline_];
    std::memcpy(held, inline_, sizeof inline_);
    std::memcpy(inline_, o.inline_, sizeof inline_);
    std::memcpy(o.inline_, held, sizeof inline_);
    std::swap(size_, o.size_);
    std::swap(spilled_, o.spilled_);
    heap_.swap(o.heap_);
  }
  void push_back(const T& v) {
    if (!spilled_ && size_ < N) [[likely]]
      inline_[size_++] = v;
    else
      spill(v);
  }

 private:
  [[gnu::noinline]] void spill(const T& v) {
    if (!spilled_) {
      heap_.assign(inline_, inline_ + size_);
      spilled_ = true;
    }
    heap_.resize(size_);  // what clear() left
    heap_.push_back(v);
    ++size_;
  }
  T* data() { return spilled_ ? heap_.data() : inline_; }
  T inline_[N];
  std::size_t size_ = 0;
  bool spilled_ = false;
  std::vector<T> heap_;
};

}  // namespace

bool is_cluster_redirect(std::string_view error) {
  return parse_redirect(error).has_value() || error.starts_with("TRYAGAIN");
}

std::optional<unsigned> redirect_slot(std::string_view error) {
  if (auto rd = parse_redirect(error)) return rd->slot;
  return std::nullopt;
}

unsigned key_slot(std::string_view key) noexcept {
  if (const auto open = key.find('{'); open != std::string_view::npos) {
    const auto close = key.find('}', open + 1);
    if (close != std::string_view::npos && close > open + 1) key = key.substr(open + 1, close - open - 1);
  }
  return crc16(key) % kSlots;
}

ClusterExecutor::ClusterExecutor(std::vector<store::Endpoint> seeds, int pool_size)
    : seeds_(std::move(seeds)), pool_size_(pool_size), slots_(kSlots) {}

ClusterExecutor::NodePtr ClusterExecutor::node(const std::string& host, int port) {
  const std::string name = host + ":" + std::to_string(port);  // Endpoint::describe()
  {
    detail::SharedGuard g(mutex_);
    if (auto it = nodes_.find(name); it != nodes_.end()) return it->second;
  }
  store::Endpoint ep = seeds_.front();  // credentials and timeouts
  ep.host = host;
  ep.port = port;
  ep.db = 0;
  detail::Guard g(mutex_);
  auto& slot = nodes_[name];
  if (!slot) slot = std::make_shared<store::NodeExecutor>(ep, pool_size_, /*sharded=*/true);
  return slot;
}

std::vector<std::string> ClusterExecutor::node_names() {
  detail::SharedGuard g(mutex_);
  std::vector<std::string> out;
  for (const auto& [name, n] : nodes_) out.push_back(name);
  std::sort(out.begin(), out.end());
  return out;
}

std::string ClusterExecutor::node_of(unsigned slot) {
  NodePtr n = route(slot);
  return n->endpoint().describe();
}

store::Executor::Direct ClusterExecutor::direct(const std::vector<store::ScriptCall>& calls) {
  if (calls.empty() || calls.front().keys.empty()) return {};
  const unsigned slot = key_slot(calls.front().keys.front());
  for (const store::ScriptCall& c : calls)
    if (c.keys.empty() || key_slot(c.keys.front()) != slot) return {};
  detail::SharedGuard g(mutex_);
  return {slots_[slot].get(), true, slots_[slot]};
}

ClusterExecutor::NodePtr ClusterExecutor::route(unsigned slot) {
  {
    detail::SharedGuard g(mutex_);
    if (slots_[slot]) return slots_[slot];
  }
  refresh();
  detail::SharedGuard g(mutex_);
  if (!slots_[slot])
    throw BackendUnavailable("weave cluster: no node serves slot " + std::to_string(slot) +
                             " (is the cluster fully configured?)");
  return slots_[slot];
}

namespace {

// Between two reads of the map: a master whose slots all went to one node
// that served none before was failed over (a replica promoted), not
// resharded: a failover_followed event.
void report_failovers(const ClusterExecutor::MapRead& before, const ClusterExecutor::MapRead& now) {
  std::map<std::uint16_t, std::uint16_t> went_to;  // old master -> its slots' one new owner (indexes + 1)
  std::set<std::uint16_t> split;
  for (std::size_t s = 0; s < before.owner.size() && s < now.owner.size(); ++s) {
    const std::uint16_t was = before.owner[s], is = now.owner[s];
    if (!was || !is || before.masters[was - 1] == now.masters[is - 1]) continue;
    auto [it, first] = went_to.emplace(was, is);
    if (!first && it->second != is) split.insert(was);
  }
  auto has = [](const std::vector<std::string>& v, const std::string& x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  };
  for (const auto& [was, is] : went_to) {
    const std::string &old_master = before.masters[was - 1], &address = now.masters[is - 1];
    if (split.count(was) || has(now.masters, old_master) || has(before.masters, address)) continue;
    detail::emit_notice(EventKind::failover_followed, "store", address,
                        "the slots of " + old_master + " are served by " + address + " now");
  }
}

}  // namespace

void ClusterExecutor::refresh() {
  detail::Guard only_one(refresh_mutex_);
  std::vector<std::pair<std::string, int>> candidates;
  {
    detail::SharedGuard g(mutex_);
    for (auto& [name, n] : nodes_) candidates.emplace_back(n->endpoint().host, n->endpoint().port);
  }
  for (auto& s : seeds_) candidates.emplace_back(s.host, s.port);
  std::string last_error = "no node to ask";
  for (auto& [host, port] : candidates) {
    store::Reply r;
    try {
      r = node(host, port)->command(store::Command{"CLUSTER", "SLOTS"});
    } catch (const IoError& e) {
      last_error = e.what();
      continue;
    }
    if (r->type != REDIS_REPLY_ARRAY) {
      last_error = r->type == REDIS_REPLY_ERROR ? std::string(r->str, r->len) : "unexpected CLUSTER SLOTS reply";
      continue;
    }
    std::vector<std::tuple<unsigned, unsigned, std::string, int>> ranges;
    for (std::size_t i = 0; i < r->elements; ++i) {
      const redisReply* e = r->element[i];
      if (e->type != REDIS_REPLY_ARRAY || e->elements < 3) continue;
      const redisReply* m = e->element[2];
      if (m->type != REDIS_REPLY_ARRAY || m->elements < 2) continue;
      std::string h(m->element[0]->str ? m->element[0]->str : "", m->element[0]->len);
      if (h.empty() || h == "?") h = host;  // "unknown endpoint": the node we asked
      ranges.emplace_back(static_cast<unsigned>(e->element[0]->integer),
                          static_cast<unsigned>(e->element[1]->integer), h,
                          static_cast<int>(m->element[1]->integer));
    }
    if (ranges.empty()) {
      last_error = "CLUSTER SLOTS lists no slots";
      continue;
    }
    std::vector<NodePtr> fresh(kSlots);
    MapRead read;
    read.owner.assign(kSlots, 0);
    for (auto& [lo, hi, h, p] : ranges) {
      NodePtr n = node(h, p);
      const std::string name = n->endpoint().describe();  // its key in nodes_
      auto at = std::find(read.masters.begin(), read.masters.end(), name);
      if (at == read.masters.end()) at = read.masters.insert(at, name);
      const auto index = static_cast<std::uint16_t>(at - read.masters.begin() + 1);
      for (unsigned s = lo; s <= hi && s < kSlots; ++s) {
        fresh[s] = n;
        read.owner[s] = index;
      }
    }
    {
      detail::Guard g(mutex_);
      slots_.swap(fresh);
      ++refreshes_;
      // A node that serves no slot any more (it left, or became a replica)
      // goes with its connections and subscriber once nothing uses it (a
      // request in flight, a subscription on it: its Interest keeps the
      // subscriber). It is made again if a redirect names it.
      for (auto it = nodes_.begin(); it != nodes_.end();)
        if (std::find(read.masters.begin(), read.masters.end(), it->first) == read.masters.end())
          it = nodes_.erase(it);
        else
          ++it;
    }
    if (!last_read_.owner.empty()) report_failovers(last_read_, read);
    last_read_ = std::move(read);
    return;
  }
  throw BackendUnavailable("weave cluster: cannot read the slot map: " + last_error);
}

// Every request the executor sends goes through here: `r` holds r.size()
// requests, request i for the master serving slot r.slot(i). Each round sends
// the pending requests, one round trip per node (r.send), and reads each
// answer's error text (r.error(i)):
//   MOVED slot host:port  the map entry is set and the map re-read (with this
//                         round's MOVED entries kept over it: the node asked
//                         may not know yet); the request is sent again;
//   ASK slot host:port    ASKING + the request on that node, in the same
//                         round; the map is not changed;
//   TRYAGAIN              (a multi-key request while its slot migrates, or an
//                         ASK target not ready) sent again after 10 ms, until
//                         the command timeout; a script call with optional
//                         keys (ScriptCall::required_keys) first goes again
//                         at once without them;
//   an I/O error          the map re-read, the requests sent again (not a
//                         TimeoutError: it ends the request, as on one node).
// I/O errors end after kRounds such rounds; MOVED after kRounds rounds too,
// unless the command timeout since the first has not passed yet: while a
// slot's new owner is still learning of it through gossip, two nodes send
// its callers to each other, and that ends on its own. Any other answer is
// final: `r` keeps it. A request that meets no redirect costs one round trip
// and no heap allocation. Requests name their nodes by plain pointer; `held`
// keeps each node they were sent to until the end (a refresh drops the nodes
// that left the map).
template <class Requests>
void ClusterExecutor::follow(Requests& r, const char* what) {
  struct Ask {
    std::size_t request;
    store::NodeExecutor* node;
  };
  Small<std::size_t> pending, next, which;
  Small<store::NodeExecutor*> to;  // per pending request, this round
  Small<Ask> asks;
  Held held;
  std::vector<std::pair<unsigned, NodePtr>> moves;  // MOVED this round
  for (std::size_t i = 0; i < r.size(); ++i) pending.push_back(i);
  std::string last;  // the last redirect or I/O error, for the message
  std::optional<std::chrono::steady_clock::time_point> tryagain_until;
  int round = 0;
  bool stale = false, tryagain = false, io_failed = false;  // this round
  std::optional<std::chrono::steady_clock::time_point> moved_until;
  // Sends `which` to `target` and sorts the answers.
  auto send = [&](store::NodeExecutor& target, bool asking) {
    try {
      r.send(target, which.span(), asking);
    } catch (const TimeoutError&) {
      // Not answered in time: the node may have run the requests, and sending
      // them again would hold the caller past its command timeout once more.
      throw;
    } catch (const IoError& e) {
      // The node may be gone (failover, resharding): re-read the map and send again.
      if (round + 1 >= kRounds) throw;
      last = e.what();
      stale = io_failed = true;
      for (const std::size_t i : which) next.push_back(i);
      return;
    }
    for (const std::size_t i : which) {
      const std::string_view error = r.error(i);
      if (error.empty()) continue;
      if (auto rd = parse_redirect(error)) {
        last.assign(error);
        if (!rd->ask) {
          ++moved_;
          NodePtr owner = node(rd->host, rd->port);
          {
            detail::Guard g(mutex_);
            slots_[rd->slot] = owner;
          }
          moves.emplace_back(rd->slot, std::move(owner));
          stale = true;
          next.push_back(i);
        } else if (!asking) {
          ++asked_;
          asks.push_back({i, held.keep(node(rd->host, rd->port))});
        } else {
          tryagain = true;  // redirected again by the ASK target: through the map, after a pause
          next.push_back(i);
        }
      } else if (error.starts_with("TRYAGAIN")) {
        last.assign(error);
        if (!r.drop_optional_keys(i)) tryagain = true;  // (without them it may go at once)
        next.push_back(i);
      }
    }
  };
  while (!pending.empty()) {
    if (round >= kRounds && (io_failed || std::chrono::steady_clock::now() > *moved_until))
      throw IoError(std::string("weave cluster: ") + what + " still redirected after " + std::to_string(round) +
                    " rounds" + (last.empty() ? "" : ": " + last));
    stale = tryagain = io_failed = false;
    next.clear();
    asks.clear();
    moves.clear();
    // One pipeline per node, then one per ASK target.
    to.clear();
    for (const std::size_t i : pending) to.push_back(held.keep(route(r.slot(i))));
    for (std::size_t j = 0; j < pending.size(); ++j) {
      store::NodeExecutor* const target = to[j];
      if (!target) continue;  // sent with an earlier request's node
      which.clear();
      for (std::size_t k = j; k < pending.size(); ++k)
        if (to[k] == target) {
          which.push_back(pending[k]);
          to[k] = nullptr;
        }
      send(*target, false);
    }
    for (std::size_t j = 0; j < asks.size(); ++j) {
      store::NodeExecutor* const target = asks[j].node;
      if (!target) continue;
      which.clear();
      for (std::size_t k = j; k < asks.size(); ++k)
        if (asks[k].node == target) {
          which.push_back(asks[k].request);
          asks[k].node = nullptr;
        }
      send(*target, true);
    }
    if (next.empty()) return;  // every answer final (always so without redirects)
    if (stale) {
      try {
        refresh();
      } catch (const IoError& e) {
        if (round + 1 >= kRounds) throw;
        last = e.what();
      }
      if (!moves.empty()) {
        detail::Guard g(mutex_);
        for (auto& [slot, owner] : moves) slots_[slot] = owner;
      }
      if (!moved_until) moved_until = std::chrono::steady_clock::now() + seeds_.front().command_timeout;
      ++round;
    }
    pending.swap(next);
    std::sort(pending.begin(), pending.end());
    if (tryagain) {
      const auto now = std::chrono::steady_clock::now();
      if (!tryagain_until)
        tryagain_until = now + seeds_.front().command_timeout;
      else if (now > *tryagain_until)
        throw TimeoutError(std::string("weave cluster: ") + what + " not served in time: " + last);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    } else if (round > 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(std::min(5 * round, 50)));
    }
  }
}

namespace {

std::string_view error_text(const redisReply* r) {
  return r->type == REDIS_REPLY_ERROR ? std::string_view(r->str, r->len) : std::string_view();
}

// run(): script calls, one pipeline per node.
struct ScriptRequests {
  const std::vector<store::ScriptCall>& calls;
  std::vector<store::Reply> replies;
  // Calls sent without their optional keys (drop_optional_keys), by index.
  std::vector<std::pair<std::size_t, store::ScriptCall>> trimmed{};

  std::size_t size() const { return calls.size(); }
  unsigned slot(std::size_t i) const { return key_slot(calls[i].keys.empty() ? "" : calls[i].keys[0]); }
  const store::ScriptCall& call(std::size_t i) const {
    for (const auto& [index, c] : trimmed)
      if (index == i) return c;
    return calls[i];
  }
  void send(store::NodeExecutor& node, std::span<const std::size_t> which, bool asking) {
    bool all = which.size() == calls.size() && trimmed.empty();
    for (std::size_t j = 0; all && j < which.size(); ++j) all = which[j] == j;
    std::vector<store::Reply> got;
    if (all) {
      got = node.run_raw(calls, asking);
    } else {
      std::vector<store::ScriptCall> part;
      part.reserve(which.size());
      for (const std::size_t i : which) part.push_back(call(i));
      got = node.run_raw(part, asking);
    }
    for (std::size_t j = 0; j < which.size(); ++j) replies[which[j]] = std::move(got[j]);
  }
  std::string_view error(std::size_t i) const { return error_text(replies[i].get()); }
  // Call i goes on without its optional keys; false when it has none (left).
  bool drop_optional_keys(std::size_t i) {
    const store::ScriptCall& c = call(i);
    if (c.required_keys == 0 || c.keys.size() <= c.required_keys) return false;
    store::ScriptCall less = c;
    less.keys.resize(c.required_keys);
    trimmed.emplace_back(i, std::move(less));
    return true;
  }
};

// command() and publish(): one plain command.
struct CommandRequest {
  const store::Command& command;
  unsigned key_slot;
  store::Reply reply;

  std::size_t size() const { return 1; }
  unsigned slot(std::size_t) const { return key_slot; }
  void send(store::NodeExecutor& node, std::span<const std::size_t>, bool asking) {
    reply = node.command(command, asking);
  }
  std::string_view error(std::size_t) const { return error_text(reply.get()); }
  bool drop_optional_keys(std::size_t) { return false; }
};

// subscribe(): SSUBSCRIBE through the node's subscriber, whose refusal
// (MOVED) is a ReplyError. Sharded channels get no ASK (Redis 7: the slot's
// source serves them until the slot is handed over, then drops the
// subscriptions with `sunsubscribe`), so `asking` is never set here; the
// subscriber's connection could not send ASKING anyway.
struct SubscribeRequest {
  const std::string& channel;
  const std::shared_ptr<store::Bell>& bell;
  const std::shared_ptr<store::Feed>& feed;
  std::unique_ptr<store::Subscriber::Interest> interest;
  std::string refused;
  std::exception_ptr refusal;

  std::size_t size() const { return 1; }
  unsigned slot(std::size_t) const { return key_slot(channel); }
  void send(store::NodeExecutor& node, std::span<const std::size_t>, bool) {
    refused.clear();
    refusal = nullptr;
    try {
      interest = node.subscribe(channel, bell, feed);
    } catch (const ReplyError& e) {
      refused = e.reply();
      refusal = std::current_exception();
    }
  }
  std::string_view error(std::size_t) const { return refused; }
  bool drop_optional_keys(std::size_t) { return false; }
};

}  // namespace

std::vector<store::Reply> ClusterExecutor::run(const std::vector<store::ScriptCall>& calls, const char* what) {
  ScriptRequests r{calls, std::vector<store::Reply>(calls.size())};
  follow(r, what);
  for (auto& reply : r.replies)
    if (reply->type == REDIS_REPLY_ERROR) store::bad_reply(reply.get(), what);
  return std::move(r.replies);
}

std::unique_ptr<store::BlockingPop> ClusterExecutor::blocking_pop(const std::string& key) {
  return route(key_slot(key))->blocking_pop(key);
}

store::Reply ClusterExecutor::command(const store::Command& c, std::string_view key, const char* what) {
  CommandRequest r{c, key_slot(key), nullptr};
  follow(r, what);
  if (r.reply->type == REDIS_REPLY_ERROR) store::bad_reply(r.reply.get(), what);
  return std::move(r.reply);
}

void ClusterExecutor::for_each_master(const std::function<void(store::NodeExecutor&)>& f) {
  refresh();
  std::vector<NodePtr> masters;
  {
    detail::SharedGuard g(mutex_);
    for (const NodePtr& n : slots_)
      if (n && std::find(masters.begin(), masters.end(), n) == masters.end()) masters.push_back(n);
  }
  for (const NodePtr& n : masters) f(*n);
}

long long ClusterExecutor::publish(std::string_view channel, std::string_view message) {
  // SPUBLISH on the channel's slot (the subscribers SSUBSCRIBE there).
  return publish_with("SPUBLISH", channel, message);
}

long long ClusterExecutor::publish_broadcast(std::string_view channel, std::string_view message) {
  return publish_with("PUBLISH", channel, message);
}

long long ClusterExecutor::publish_with(const char* publish_command, std::string_view channel,
                                        std::string_view message) {
  store::Reply r = command(store::Command{publish_command, channel, message}, channel, "publish");
  if (r->type != REDIS_REPLY_INTEGER) store::bad_reply(r.get(), "publish");
  return r->integer;
}

std::unique_ptr<store::Subscriber::Interest> ClusterExecutor::subscribe_broadcast(const std::string& channel,
                                                                                  std::shared_ptr<store::Bell> bell,
                                                                                  std::shared_ptr<store::Feed> feed) {
  const unsigned slot = key_slot(channel);
  try {
    return route(slot)->subscribe_broadcast(channel, bell, feed);
  } catch (const IoError&) {
    refresh();  // the node may have left or failed over: ask the map again, once
    return route(slot)->subscribe_broadcast(channel, std::move(bell), std::move(feed));
  }
}

std::unique_ptr<store::Subscriber::Interest> ClusterExecutor::subscribe(const std::string& channel,
                                                                        std::shared_ptr<store::Bell> bell,
                                                                        std::shared_ptr<store::Feed> feed) {
  SubscribeRequest r{channel, bell, feed, nullptr, {}, nullptr};
  follow(r, "subscribe");
  if (r.refusal) std::rethrow_exception(r.refusal);
  return std::move(r.interest);
}

}  // namespace weave::store
