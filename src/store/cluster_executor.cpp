#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <mutex>
#include <thread>

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

std::optional<Redirect> redirect_of(const redisReply* r) {
  if (r->type != REDIS_REPLY_ERROR) return std::nullopt;
  return parse_redirect(std::string_view(r->str, r->len));
}

bool is_tryagain(const redisReply* r) {
  return r->type == REDIS_REPLY_ERROR && std::string_view(r->str, r->len).rfind("TRYAGAIN", 0) == 0;
}

// Redirect rounds per run(): a slot that keeps moving is an error.
constexpr int kRounds = 5;

}  // namespace

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
  const std::string name = host + ":" + std::to_string(port);
  {
    std::shared_lock g(mutex_);
    if (auto it = nodes_.find(name); it != nodes_.end()) return it->second;
  }
  store::Endpoint ep = seeds_.front();  // credentials and timeouts
  ep.host = host;
  ep.port = port;
  ep.db = 0;
  std::unique_lock g(mutex_);
  auto& slot = nodes_[name];
  if (!slot) slot = std::make_shared<store::NodeExecutor>(ep, pool_size_, /*sharded=*/true);
  return slot;
}

std::string ClusterExecutor::node_of(unsigned slot) {
  NodePtr n = route(slot);
  return n->endpoint().describe();
}

ClusterExecutor::NodePtr ClusterExecutor::route(unsigned slot) {
  {
    std::shared_lock g(mutex_);
    if (slots_[slot]) return slots_[slot];
  }
  refresh();
  std::shared_lock g(mutex_);
  if (!slots_[slot])
    throw BackendUnavailable("weave cluster: no node serves slot " + std::to_string(slot) +
                             " (is the cluster fully configured?)");
  return slots_[slot];
}

void ClusterExecutor::refresh() {
  std::lock_guard only_one(refresh_mutex_);
  std::vector<std::pair<std::string, int>> candidates;
  {
    std::shared_lock g(mutex_);
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
    for (auto& [lo, hi, h, p] : ranges) {
      NodePtr n = node(h, p);
      for (unsigned s = lo; s <= hi && s < kSlots; ++s) fresh[s] = n;
    }
    std::unique_lock g(mutex_);
    slots_.swap(fresh);
    ++refreshes_;
    return;
  }
  throw BackendUnavailable("weave cluster: cannot read the slot map: " + last_error);
}

std::vector<store::Reply> ClusterExecutor::run(const std::vector<store::ScriptCall>& calls, const char* what) {
  std::vector<store::Reply> replies(calls.size());
  std::vector<std::size_t> pending(calls.size());
  for (std::size_t i = 0; i < pending.size(); ++i) pending[i] = i;
  std::string last_io;
  // TRYAGAIN (a multi-key script while its slot migrates) is retried until
  // the command timeout; redirects and I/O errors for kRounds rounds.
  const auto tryagain_deadline = std::chrono::steady_clock::now() + seeds_.front().command_timeout;
  int round = 0;
  while (!pending.empty()) {
    if (round == kRounds)
      throw IoError(std::string("weave cluster: ") + what + " still redirected after " + std::to_string(kRounds) +
                    " rounds" + (last_io.empty() ? "" : ": " + last_io));
    if (std::chrono::steady_clock::now() > tryagain_deadline)
      throw TimeoutError(std::string("weave cluster: ") + what + " not served in time: " + last_io);
    bool redirected = false, tryagain = false;
    // One pipeline per node.
    std::map<NodePtr, std::vector<std::size_t>> by_node;
    for (auto i : pending) by_node[route(key_slot(calls[i].keys.empty() ? "" : calls[i].keys[0]))].push_back(i);
    pending.clear();
    std::map<std::string, std::vector<std::size_t>> asks;  // "host:port" -> calls
    std::map<std::string, std::pair<std::string, int>> ask_targets;
    bool stale = false;
    auto collect = [&](const std::vector<std::size_t>& idx, std::vector<store::Reply>& got) {
      for (std::size_t j = 0; j < idx.size(); ++j) {
        const std::size_t i = idx[j];
        if (got[j]->type == REDIS_REPLY_ERROR) last_io.assign(got[j]->str, got[j]->len);
        if (auto rd = redirect_of(got[j].get())) {
          if (rd->ask) {
            ++asked_;
            const std::string name = rd->host + ":" + std::to_string(rd->port);
            asks[name].push_back(i);
            ask_targets[name] = {rd->host, rd->port};  // a migration: bounded by the deadline
          } else {
            ++moved_;
            redirected = true;
            NodePtr to = node(rd->host, rd->port);
            std::unique_lock g(mutex_);
            slots_[rd->slot] = to;
            stale = true;
            pending.push_back(i);
          }
        } else if (is_tryagain(got[j].get())) {
          tryagain = true;
          pending.push_back(i);  // a multi-key call during a slot migration
        } else {
          replies[i] = std::move(got[j]);
        }
      }
    };
    for (auto& [n, idx] : by_node) {
      std::vector<store::ScriptCall> part;
      part.reserve(idx.size());
      for (auto i : idx) part.push_back(calls[i]);
      std::vector<store::Reply> got;
      try {
        got = n->run_raw(part);
      } catch (const IoError& e) {
        // The node may be gone (failover, resharding): re-read the map and retry.
        if (round + 1 >= kRounds) throw;
        last_io = e.what();
        stale = redirected = true;
        for (auto i : idx) pending.push_back(i);
        continue;
      }
      collect(idx, got);
    }
    for (auto& [name, idx] : asks) {
      std::vector<store::ScriptCall> part;
      for (auto i : idx) part.push_back(calls[i]);
      auto& [h, p] = ask_targets[name];
      std::vector<store::Reply> got = node(h, p)->run_raw(part, /*asking=*/true);
      for (std::size_t j = 0; j < idx.size(); ++j) {
        if (got[j]->type == REDIS_REPLY_ERROR) last_io.assign(got[j]->str, got[j]->len);
        if (redirect_of(got[j].get()) || is_tryagain(got[j].get())) {
          tryagain = true;
          pending.push_back(idx[j]);  // retried through the map next round
        }
        else
          replies[idx[j]] = std::move(got[j]);
      }
    }
    if (stale) {
      try {
        refresh();
      } catch (const IoError& e) {
        if (round + 1 >= kRounds) throw;
        last_io = e.what();
      }
    }
    if (redirected) ++round;
    if (tryagain)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    else if (!pending.empty() && round > 1)
      std::this_thread::sleep_for(std::chrono::milliseconds(5 * round));
  }
  for (auto& r : replies)
    if (r->type == REDIS_REPLY_ERROR) store::bad_reply(r.get(), what);
  return replies;
}

store::Reply ClusterExecutor::command(const store::Command& c, std::string_view key, const char* what) {
  for (int attempt = 0;; ++attempt) {
    NodePtr n = route(key_slot(key));
    try {
      store::Reply r = n->command(c);
      if (r->type == REDIS_REPLY_ERROR) {
        const std::string_view text(r->str, r->len);
        if ((text.starts_with("MOVED ") || text.starts_with("TRYAGAIN")) && attempt < kRounds) {
          moved_.fetch_add(1);
          refresh();
          continue;
        }
        store::bad_reply(r.get(), what);
      }
      return r;
    } catch (const IoError&) {
      if (attempt >= kRounds) throw;
      refresh();
    }
  }
}

void ClusterExecutor::for_each_master(const std::function<void(store::NodeExecutor&)>& f) {
  refresh();
  std::vector<NodePtr> masters;
  {
    std::shared_lock g(mutex_);
    for (const NodePtr& n : slots_)
      if (n && std::find(masters.begin(), masters.end(), n) == masters.end()) masters.push_back(n);
  }
  for (const NodePtr& n : masters) f(*n);
}

long long ClusterExecutor::publish(std::string_view channel, std::string_view message) {
  // SPUBLISH on the channel's slot (the subscribers SSUBSCRIBE there).
  for (int attempt = 0;; ++attempt) {
    NodePtr n = route(key_slot(channel));
    try {
      return n->publish(channel, message);
    } catch (const ReplyError& e) {
      if (e.code() != "MOVED" || attempt >= kRounds) throw;
      moved_.fetch_add(1);
      refresh();
    } catch (const IoError&) {
      if (attempt >= kRounds) throw;
      refresh();
    }
  }
}

std::unique_ptr<store::Subscriber::Interest> ClusterExecutor::subscribe(const std::string& channel,
                                                                        std::shared_ptr<store::Bell> bell,
                                                                        std::shared_ptr<store::Feed> feed) {
  const unsigned slot = key_slot(channel);
  NodePtr n = route(slot);
  for (int attempt = 0;; ++attempt) {
    try {
      return n->subscribe(channel, bell, feed);
    } catch (const ReplyError& e) {
      // MOVED: the slot moved since the map was read (during a migration the
      // other nodes may not know yet): go where the refusal points.
      auto moved = e.code() == "MOVED" ? parse_redirect(e.reply()) : std::nullopt;
      if (!moved || attempt >= kRounds) throw;
      n = node(moved->host, moved->port);
    } catch (const IoError&) {
      // A dead node: re-read the map and subscribe where the slot is now.
      if (attempt >= kRounds) throw;
      refresh();
      n = route(slot);
    }
  }
}

}  // namespace weave::store
