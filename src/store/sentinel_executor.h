// The redis+sentinel:// executor: every feature's calls on the master
// that Redis Sentinel names, followed across failovers (see docs/scale-out.md).
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/process.h"
#include "store/executor.h"

namespace WEAVE_NAMESPACE::store {

// Runs script calls on the current master of `master_name`: asks the
// sentinels (in turn) for its address and checks with ROLE that it is a
// master. It listens to the sentinels' +switch-master announcements: after
// one it asks again at the next call, and wakes the waiters subscribed on the
// old master (releases are published on the new one). A call that fails in a way a failover
// explains (the connection failed, or the node answers READONLY as a
// replica) also asks again and is sent once more to the master named then.
class SentinelExecutor final : public store::Executor {
 public:
  SentinelExecutor(std::vector<store::Endpoint> sentinels, std::string master_name, store::Endpoint data,
                   int pool_size);

  std::vector<store::Reply> run(const std::vector<store::ScriptCall>& calls, const char* what) override;
  std::unique_ptr<store::Subscriber::Interest> subscribe(const std::string& channel,
                                                         std::shared_ptr<store::Bell> bell = nullptr,
                                                         std::shared_ptr<store::Feed> feed = nullptr) override;
  long long publish(std::string_view channel, std::string_view message) override;
  store::Reply command(const store::Command& c, std::string_view key, const char* what) override;
  std::unique_ptr<store::BlockingPop> blocking_pop(const std::string& key) override;
  void for_each_master(const std::function<void(store::NodeExecutor&)>& f) override;

  // For tests: "host:port" of the master in use ("" before the first call),
  // and how many times the master changed.
  std::string master_address();
  std::uint64_t switches() const noexcept { return switches_.load(); }

 private:
  using NodePtr = std::shared_ptr<store::NodeExecutor>;
  NodePtr master();
  NodePtr discover();  // throws BackendUnavailable
  void forget(const NodePtr& stale);
  void listen_for_switches();
  template <class F>
  auto on_master(F&& f);

  std::vector<store::Endpoint> sentinels_;
  std::string master_name_;
  store::Endpoint data_;  // credentials, db and timeouts for the master
  int pool_size_;
  detail::Mutex mutex_;
  NodePtr current_ WEAVE_GUARDED_BY(mutex_);
  std::string last_address_ WEAVE_GUARDED_BY(mutex_);  // of the master last found
  // "host:port": the master found last (and those asked since).
  std::map<std::string, NodePtr> nodes_ WEAVE_GUARDED_BY(mutex_);
  std::atomic<std::uint64_t> switches_{0};
  // +switch-master announcements ring `switched_` (its hook forgets the
  // master); subscribed on the first sentinel that takes it, tried again at
  // each discovery until one does.
  detail::Mutex listen_mutex_;
  const std::shared_ptr<store::Bell> switched_ = std::make_shared<store::Bell>();
  std::shared_ptr<store::Subscriber> switch_subscriber_ WEAVE_GUARDED_BY(listen_mutex_);
  // Before the subscriber goes.
  std::unique_ptr<store::Subscriber::Interest> switch_interest_ WEAVE_GUARDED_BY(listen_mutex_);
};

}  // namespace weave::store
