#include <utility>

#include <hiredis/hiredis.h>

#include "core/events.h"
#include "store/sentinel_executor.h"
#include "weave/error.h"

namespace WEAVE_NAMESPACE::store {

SentinelExecutor::SentinelExecutor(std::vector<store::Endpoint> sentinels, std::string master_name,
                                   store::Endpoint data, int pool_size)
    : sentinels_(std::move(sentinels)), master_name_(std::move(master_name)), data_(std::move(data)),
      pool_size_(pool_size) {
  switched_->hook = [this] { forget(nullptr); };  // a +switch-master announcement
}

std::string SentinelExecutor::master_address() {
  detail::Guard g(mutex_);
  return current_ ? current_->endpoint().describe() : std::string();
}

SentinelExecutor::NodePtr SentinelExecutor::master() {
  {
    detail::Guard g(mutex_);
    if (current_) return current_;
  }
  listen_for_switches();
  NodePtr found = discover();
  const std::string address = found->endpoint().describe();
  std::string was;
  {
    detail::Guard g(mutex_);
    if (!last_address_.empty() && last_address_ != address) {
      ++switches_;
      was = last_address_;
    }
    last_address_ = address;
    current_ = found;  // if another caller found one meanwhile, the newest answer wins
  }
  if (!was.empty())
    detail::emit_notice(EventKind::failover_followed, "store", address,
                        "master '" + master_name_ + "' is now " + address + " (was " + was + ")");
  return found;
}

// Once subscribed, nothing to do; until then each discovery tries again.
void SentinelExecutor::listen_for_switches() {
  detail::Guard g(listen_mutex_);
  if (switch_interest_) return;
  for (const store::Endpoint& s : sentinels_) {
    try {
      auto sub = std::make_shared<store::Subscriber>(s, false);
      switch_interest_ = sub->subscribe("+switch-master", switched_);
      switch_subscriber_ = std::move(sub);
      return;
    } catch (const std::exception&) {
      // the next sentinel; without any, failures still send us asking
    }
  }
}

// `stale` failed as a master (null: a sentinel announced a switch). The next
// call asks the sentinels again. Releases will be published on another node:
// whoever waits on this one tries again now (and subscribes anew) instead of
// sleeping out the holder's lease.
void SentinelExecutor::forget(const NodePtr& stale) {
  NodePtr was;
  {
    detail::Guard g(mutex_);
    if (!current_ || (stale && current_ != stale)) return;
    was = std::move(current_);
  }
  was->subscriber()->wake_all();
}

SentinelExecutor::NodePtr SentinelExecutor::discover() {
  std::string why = "no sentinel answered";
  for (const store::Endpoint& s : sentinels_) {
    try {
      store::Connection c(s);
      store::Reply r = c.command(store::Command{"SENTINEL", "get-master-addr-by-name", master_name_});
      if (r->type != REDIS_REPLY_ARRAY || r->elements != 2) {
        why = s.describe() + " does not know master '" + master_name_ + "'";
        continue;
      }
      store::Endpoint ep = data_;
      ep.host.assign(r->element[0]->str, r->element[0]->len);
      ep.port = std::stoi(std::string(r->element[1]->str, r->element[1]->len));
      NodePtr node;
      {
        detail::Guard g(mutex_);
        auto& slot = nodes_[ep.describe()];
        if (!slot) slot = std::make_shared<store::NodeExecutor>(ep, pool_size_);
        node = slot;
      }
      // A sentinel may not have seen the failover yet: ask the node itself.
      store::Reply role = node->command(store::Command{"ROLE"});
      if (role->type != REDIS_REPLY_ARRAY || role->elements == 0 ||
          std::string(role->element[0]->str, role->element[0]->len) != "master") {
        why = s.describe() + " names " + ep.describe() + ", which is not a master (yet)";
        continue;
      }
      {
        // The other nodes go with their connections once nothing uses them
        // (a call in flight, a subscription: its Interest keeps the
        // subscriber); a switch back makes the node again.
        detail::Guard g(mutex_);
        for (auto it = nodes_.begin(); it != nodes_.end();)
          if (it->second != node)
            it = nodes_.erase(it);
          else
            ++it;
      }
      return node;
    } catch (const Error& e) {
      why = e.what();
    } catch (const std::exception& e) {
      why = s.describe() + ": " + e.what();
    }
  }
  std::string list;
  for (const auto& s : sentinels_) {
    if (!list.empty()) list += ',';  // not `"," + s.describe()`: g++ 12 -O3's false -Wrestrict (GCC PR 105329)
    list += s.describe();
  }
  throw BackendUnavailable("weave sentinel: no master '" + master_name_ + "' found through " + list + ": " + why);
}

// f(master) once; again on the master named afterwards when the failure looks
// like a failover (a connection lost or refused, or READONLY from a demoted
// master). A TimeoutError ends the call (the master may have run it, and a
// second wait would hold the caller past its command timeout); the next call
// asks the sentinels again.
template <class F>
auto SentinelExecutor::on_master(F&& f) {
  NodePtr node = master();
  try {
    return f(*node);
  } catch (const ReplyError& e) {
    if (e.code() != "READONLY") throw;
    forget(node);
  } catch (const TimeoutError&) {
    forget(node);
    throw;
  } catch (const IoError&) {
    forget(node);
  }
  return f(*master());
}

std::vector<store::Reply> SentinelExecutor::run(const std::vector<store::ScriptCall>& calls, const char* what) {
  return on_master([&](store::NodeExecutor& n) { return n.run(calls, what); });
}

std::unique_ptr<store::Subscriber::Interest> SentinelExecutor::subscribe(const std::string& channel,
                                                                         std::shared_ptr<store::Bell> bell,
                                                                         std::shared_ptr<store::Feed> feed) {
  // After a failover the old master's subscriber calls wake_all(): feeds go
  // down, and their owners subscribe again here, on the new master.
  return on_master([&](store::NodeExecutor& n) { return n.subscribe(channel, bell, feed); });
}

std::unique_ptr<store::BlockingPop> SentinelExecutor::blocking_pop(const std::string& key) {
  return master()->blocking_pop(key);
}

store::Reply SentinelExecutor::command(const store::Command& c, std::string_view key, const char* what) {
  return on_master([&](store::NodeExecutor& n) { return n.command(c, key, what); });
}

void SentinelExecutor::for_each_master(const std::function<void(store::NodeExecutor&)>& f) {
  on_master([&](store::NodeExecutor& n) {
    f(n);
    return 0;
  });
}

long long SentinelExecutor::publish(std::string_view channel, std::string_view message) {
  return on_master([&](store::NodeExecutor& n) { return n.publish(channel, message); });
}

}  // namespace weave::store
