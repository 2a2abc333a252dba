#include "store/executor.h"

#include <poll.h>

#include <algorithm>
#include <chrono>

#include <hiredis/hiredis.h>

#include "store/acl.h"
#include "store/reply.h"
#include "weave/error.h"

namespace WEAVE_NAMESPACE::store {

Command ScriptCall::build(std::string_view head, std::string_view sha_or_body, const std::string& numkeys) const {
  Command c;
  c.reserve(3 + keys.size() + args.size());
  c.add(head).add(sha_or_body).add(numkeys);
  for (auto k : keys) c.add(k);
  for (auto a : args) c.add(a);
  return c;
}

Reply run_one(Executor& exec, ScriptCall call, const char* what) {
  std::vector<ScriptCall> one;
  one.push_back(std::move(call));
  return std::move(exec.run(one, what).front());
}

bool is_noscript(const redisReply* r) {
  return r->type == REDIS_REPLY_ERROR && r->len >= 8 && std::string_view(r->str, 8) == "NOSCRIPT";
}

void bad_reply(const redisReply* r, const char* what) {
  if (r->type == REDIS_REPLY_ERROR)
    throw ReplyError(std::string("weave redis: ") + what + " refused", std::string_view(r->str, r->len),
                     acl_hint(std::string_view(r->str, r->len)));
  throw IoError(std::string("weave redis: unexpected reply to ") + what);
}

void scan_keys(Executor& exec, std::string_view pattern,
               const std::function<void(const std::vector<std::string>& keys)>& batch, const char* what) {
  exec.for_each_master([&](NodeExecutor& node) {
    std::string cursor = "0";
    std::vector<std::string> keys;
    do {
      const Reply reply = node.command(Command{"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"});
      const ReplyView r(reply, what);
      if (r.size() != 2) r.unexpected();
      cursor.assign(r[0].text());
      const ReplyView page = r[1];
      keys.clear();
      for (std::size_t i = 0; i < page.size(); ++i) keys.emplace_back(page[i].text());
      if (!keys.empty()) batch(keys);
    } while (cursor != "0");
  });
}

NodeExecutor::NodeExecutor(Endpoint endpoint, int pool_size, bool sharded)
    : pool_(std::make_shared<Pool>(endpoint, pool_size)),
      sub_(std::make_shared<Subscriber>(endpoint, sharded)),
      waits_(std::make_shared<Pool>(endpoint, kWaitingConnections)),
      sharded_(sharded) {}

std::unique_ptr<BlockingPop> NodeExecutor::blocking_pop(const std::string& key) {
  std::optional<Pool::Borrowed> conn = waits_->try_borrow();
  if (!conn) return nullptr;
  return std::make_unique<BlockingPop>(waits_, std::move(*conn), key);
}

std::vector<Reply> NodeExecutor::run(const std::vector<ScriptCall>& calls, const char* what) {
  std::vector<Reply> replies = run_raw(calls);
  for (auto& r : replies)
    if (r->type == REDIS_REPLY_ERROR) bad_reply(r.get(), what);
  return replies;
}

std::unique_ptr<Subscriber::Interest> NodeExecutor::subscribe(const std::string& channel, std::shared_ptr<Bell> bell,
                                                             std::shared_ptr<Feed> feed) {
  return sub_->subscribe(channel, std::move(bell), std::move(feed));
}

Reply NodeExecutor::command(const Command& c, std::string_view, const char* what) {
  Reply r = command(c);
  if (r->type == REDIS_REPLY_ERROR) bad_reply(r.get(), what);
  return r;
}

long long NodeExecutor::publish(std::string_view channel, std::string_view message) {
  return publish_with(sharded_ ? "SPUBLISH" : "PUBLISH", channel, message);
}

long long NodeExecutor::publish_with(const char* publish_command, std::string_view channel, std::string_view message) {
  Reply r = command(Command{publish_command, channel, message});
  if (r->type != REDIS_REPLY_INTEGER) bad_reply(r.get(), "publish");
  return r->integer;
}

std::unique_ptr<Subscriber::Interest> NodeExecutor::subscribe_broadcast(const std::string& channel,
                                                                       std::shared_ptr<Bell> bell,
                                                                       std::shared_ptr<Feed> feed) {
  if (!sharded_) return sub_->subscribe(channel, std::move(bell), std::move(feed));
  std::call_once(broadcast_once_, [&] { broadcast_sub_ = std::make_shared<Subscriber>(pool_->endpoint(), false); });
  return broadcast_sub_->subscribe(channel, std::move(bell), std::move(feed));
}

long long NodeExecutor::publish_broadcast(std::string_view channel, std::string_view message) {
  return publish_with("PUBLISH", channel, message);
}

// All calls in one pipelined round trip on one pooled connection (plus one
// more for EVAL when the server lost its script cache). A reused connection
// that turns out to be dead (server restarted while it idled) is dropped and
// the calls are sent once more on a new one.
std::vector<Reply> NodeExecutor::run_raw(const std::vector<ScriptCall>& calls, bool asking) {
  for (int attempt = 0;; ++attempt) {
    InFlight flight(pool_->borrow());
    try {
      start(flight, calls, asking);
      return finish(flight, calls);
    } catch (const IoError&) {
      if (attempt == 0 && retry_after(flight)) continue;
      throw;
    }
  }
}

bool NodeExecutor::retry_after(InFlight& flight) {
  Connection& c = *flight.conn_;
  if (!c.broken()) return false;
  pool_->drop_idle();
  const bool fresh = flight.borrowed_ && flight.borrowed_->fresh();
  return !fresh && c.last_failure() == IoFailure::closed;
}

Reply NodeExecutor::command(const Command& c, bool asking) {
  for (int attempt = 0;; ++attempt) {
    auto conn = pool_->borrow();
    try {
      if (!asking) return conn->command(c);
      conn->append(Command{"ASKING"});
      conn->append(c);
      conn->flush();
      conn->read_reply();  // +OK (the command's own reply says the rest)
      return conn->read_reply();
    } catch (const IoError&) {
      if (!conn->broken()) throw;
      pool_->drop_idle();
      if (attempt == 0 && !conn.fresh() && conn->last_failure() == IoFailure::closed) continue;
      throw;
    }
  }
}

const std::string& NodeExecutor::body_of(const char* body) {
  {
    detail::SharedGuard g(sha_mutex_);
    if (auto it = scripts_.find(body); it != scripts_.end()) return it->second.first;
  }
  std::string text = body;
  if (sharded_ && std::string_view(body).find("--@publishes_broadcast\n") == std::string_view::npos) {
    // Sharded Pub/Sub: the release channel lives in the lock key's slot.
    const std::string from = "'PUBLISH'", to = "'SPUBLISH'";
    for (auto p = text.find(from); p != std::string::npos; p = text.find(from, p + to.size()))
      text.replace(p, from.size(), to);
  }
  detail::Guard g(sha_mutex_);
  return scripts_.try_emplace(body, std::move(text), std::string()).first->second.first;
}

bool NodeExecutor::cached_shas(const std::vector<ScriptCall>& calls, std::vector<std::string>& out) {
  out.assign(calls.size(), std::string());
  bool all = true;
  detail::SharedGuard g(sha_mutex_);
  for (std::size_t i = 0; i < calls.size(); ++i) {
    auto it = scripts_.find(calls[i].body);
    if (it == scripts_.end() || it->second.second.empty())
      all = false;
    else
      out[i] = it->second.second;
  }
  return all;
}

std::vector<const char*> NodeExecutor::unloaded(const std::vector<ScriptCall>& calls,
                                                const std::vector<std::string>& shas) {
  std::vector<const char*> bodies;
  for (std::size_t i = 0; i < calls.size(); ++i)
    if (shas[i].empty() && std::find(bodies.begin(), bodies.end(), calls[i].body) == bodies.end())
      bodies.push_back(calls[i].body);
  return bodies;
}

// The SHA of each call's script; scripts not loaded yet are loaded with one
// pipelined SCRIPT LOAD round trip.
std::vector<std::string> NodeExecutor::shas_for(Connection& conn, const std::vector<ScriptCall>& calls) {
  std::vector<std::string> out;
  if (cached_shas(calls, out)) return out;
  const std::vector<const char*> missing = unloaded(calls, out);
  std::vector<Command> loads;
  for (const char* b : missing) loads.push_back(Command{"SCRIPT", "LOAD", body_of(b)});
  auto replies = conn.pipeline(loads);
  {
    detail::Guard g(sha_mutex_);
    for (std::size_t i = 0; i < replies.size(); ++i) {
      if (replies[i]->type != REDIS_REPLY_STRING) bad_reply(replies[i].get(), "SCRIPT LOAD");
      scripts_[missing[i]].second.assign(replies[i]->str, replies[i]->len);
    }
    for (std::size_t i = 0; i < calls.size(); ++i)
      if (out[i].empty()) out[i] = scripts_[calls[i].body].second;
  }
  return out;
}

NodeExecutor::InFlight NodeExecutor::open() { return InFlight(pool_->borrow()); }

void NodeExecutor::start(InFlight& f, const std::vector<ScriptCall>& calls, bool asking) {
  f.asking_ = asking;
  f.shas_ = shas_for(*f.conn_, calls);
  send_all(f, calls);
}

void NodeExecutor::send_all(InFlight& f, const std::vector<ScriptCall>& calls) {
  queue_all(f, calls);
  f.conn_->flush();
}

void NodeExecutor::queue_all(InFlight& f, const std::vector<ScriptCall>& calls) {
  f.numkeys_.clear();
  for (const auto& c : calls) f.numkeys_.push_back(std::to_string(c.keys.size()));
  std::vector<std::size_t> all(calls.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  queue(f, calls, all, false);
}

void NodeExecutor::send(InFlight& f, const std::vector<ScriptCall>& calls, const std::vector<std::size_t>& which,
                        bool eval) {
  queue(f, calls, which, eval);
  f.conn_->flush();
}

void NodeExecutor::queue(InFlight& f, const std::vector<ScriptCall>& calls, const std::vector<std::size_t>& which,
                         bool eval) {
  for (auto i : which) {
    if (f.asking_) f.conn_->append(Command{"ASKING"});
    f.conn_->append(eval || f.shas_[i].empty() ? calls[i].build("EVAL", body_of(calls[i].body), f.numkeys_[i])
                                               : calls[i].build("EVALSHA", f.shas_[i], f.numkeys_[i]));
  }
  f.replies.clear();
  f.expected_ = which.size() * (f.asking_ ? 2 : 1);
}

// The replies of the last send(), without the ASKING ones.
std::vector<Reply> NodeExecutor::receive(InFlight& f) {
  while (!f.complete()) f.replies.push_back(f.conn_->read_reply());
  if (!f.asking_) return std::move(f.replies);
  std::vector<Reply> out;
  for (std::size_t j = 1; j < f.replies.size(); j += 2) out.push_back(std::move(f.replies[j]));
  return out;
}

NodeExecutor::InFlight NodeExecutor::queue_on(Connection& conn, const std::vector<ScriptCall>& calls) {
  InFlight f(conn);
  if (!cached_shas(calls, f.shas_)) {
    // A script not loaded yet is loaded in the same round trip, its call
    // sent as EVAL: SCRIPT LOAD <body> first, the calls after.
    f.loading_ = unloaded(calls, f.shas_);
    for (const char* body : f.loading_) conn.append(Command{"SCRIPT", "LOAD", body_of(body)});
  }
  queue_all(f, calls);
  f.expected_ += f.loading_.size();
  return f;
}

std::optional<std::vector<Reply>> NodeExecutor::take_replies(InFlight& f, const std::vector<ScriptCall>& calls) {
  if (!f.loading_.empty()) {  // SCRIPT LOAD's replies come first
    {
      detail::Guard g(sha_mutex_);
      for (std::size_t j = 0; j < f.loading_.size(); ++j)
        if (f.replies[j]->type == REDIS_REPLY_STRING)  // (else its EVAL's reply says why)
          scripts_[f.loading_[j]].second.assign(f.replies[j]->str, f.replies[j]->len);
    }
    f.replies.erase(f.replies.begin(), f.replies.begin() + static_cast<std::ptrdiff_t>(f.loading_.size()));
    f.loading_.clear();
  }
  if (!f.noscript_.empty()) {  // the EVALs' replies
    for (std::size_t j = 0; j < f.noscript_.size(); ++j) f.first_[f.noscript_[j]] = std::move(f.replies[j]);
    f.noscript_.clear();
    return std::move(f.first_);
  }
  for (std::size_t i = 0; i < f.replies.size(); ++i)
    if (is_noscript(f.replies[i].get())) f.noscript_.push_back(i);
  if (f.noscript_.empty()) return std::move(f.replies);
  f.first_ = std::move(f.replies);
  queue(f, calls, f.noscript_, true);  // as finish() does; the caller writes them
  return std::nullopt;
}

std::vector<Reply> NodeExecutor::finish(InFlight& f, const std::vector<ScriptCall>& calls) {
  std::vector<Reply> replies = receive(f);
  std::vector<std::size_t> missing;
  for (std::size_t i = 0; i < replies.size(); ++i)
    if (is_noscript(replies[i].get())) missing.push_back(i);
  if (!missing.empty()) {
    // The server lost its script cache (restart, SCRIPT FLUSH): EVAL
    // caches the body again under the same SHA.
    send(f, calls, missing, true);
    std::vector<Reply> again = receive(f);
    for (std::size_t j = 0; j < missing.size(); ++j) replies[missing[j]] = std::move(again[j]);
  }
  return replies;
}

std::vector<NodeOutcome> run_on_each(std::span<NodeExecutor* const> nodes, const std::vector<ScriptCall>& calls) {
  using Clock = std::chrono::steady_clock;
  const std::size_t n = nodes.size();
  std::vector<NodeOutcome> out(n);
  std::vector<std::optional<NodeExecutor::InFlight>> flights(n);
  std::vector<Clock::time_point> deadline(n);
  for (std::size_t i = 0; i < n; ++i) {
    try {
      flights[i].emplace(nodes[i]->open());
      nodes[i]->start(*flights[i], calls);
      deadline[i] = Clock::now() + nodes[i]->endpoint().command_timeout;
    } catch (...) {
      out[i].error = std::current_exception();
    }
  }
  std::vector<pollfd> fds;
  std::vector<std::size_t> who;
  for (;;) {
    fds.clear();
    who.clear();
    const auto now = Clock::now();
    auto next = Clock::time_point::max();
    for (std::size_t i = 0; i < n; ++i) {
      if (out[i].error || !flights[i] || flights[i]->complete()) continue;
      if (now >= deadline[i]) {
        try {
          flights[i]->connection().timed_out("a command");
        } catch (...) {
          out[i].error = std::current_exception();
        }
        continue;
      }
      fds.push_back({flights[i]->connection().fd(), POLLIN, 0});
      who.push_back(i);
      next = std::min(next, deadline[i]);
    }
    if (fds.empty()) break;
    const auto wait = std::chrono::ceil<std::chrono::milliseconds>(next - now).count();
    if (::poll(fds.data(), fds.size(), static_cast<int>(wait)) < 0) continue;  // EINTR; deadlines still hold
    for (std::size_t k = 0; k < fds.size(); ++k) {
      if (fds[k].revents == 0) continue;
      try {
        flights[who[k]]->connection().read_available(flights[who[k]]->replies);
      } catch (...) {
        out[who[k]].error = std::current_exception();
      }
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (!flights[i]) continue;
    if (!out[i].error) {
      try {
        out[i].replies = nodes[i]->finish(*flights[i], calls);
      } catch (...) {
        out[i].error = std::current_exception();
      }
    }
    // A reused connection that had died while idle: once more on a new one.
    if (out[i].error && nodes[i]->retry_after(*flights[i])) {
      flights[i].reset();
      try {
        out[i].replies = nodes[i]->run_raw(calls);
        out[i].error = nullptr;
      } catch (...) {
        out[i].error = std::current_exception();
      }
    }
  }
  return out;
}

}  // namespace weave::store
