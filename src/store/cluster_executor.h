// The redis+cluster:// executor: every feature's calls routed by hash slot
// over a Redis Cluster (see docs/scale-out.md).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "store/executor.h"

namespace WEAVE_NAMESPACE::store {

constexpr unsigned kSlots = 16384;

// The cluster slot of a key: CRC16 (XMODEM) of the key, or of the text
// between the first '{' and the next '}' when that is not empty, mod 16384.
unsigned key_slot(std::string_view key) noexcept;

// An error reply a cluster answers to send the request elsewhere or later
// (MOVED, ASK, TRYAGAIN): ClusterExecutor::run() follows it.
bool is_cluster_redirect(std::string_view error);

// The slot a MOVED or ASK error names, or none for any other text.
std::optional<unsigned> redirect_slot(std::string_view error);

// Routes every request to the master serving its slot: script calls (the
// slot of a call's first key, one pipeline per node), plain commands, SPUBLISH
// and SSUBSCRIBE (the channel's slot: sharded Pub/Sub). All of them go through
// one routine, follow(), which follows MOVED (updates the map and refreshes it
// from CLUSTER SLOTS), ASK (ASKING + the request, once per redirect) and
// TRYAGAIN (again after 10 ms, until the command timeout), and refreshes the
// map after a connection error and retries.
class ClusterExecutor final : public store::Executor {
 public:
  ClusterExecutor(std::vector<store::Endpoint> seeds, int pool_size);

  std::vector<store::Reply> run(const std::vector<store::ScriptCall>& calls, const char* what) override;
  unsigned shard_of(std::string_view key) const override { return key_slot(key); }
  std::unique_ptr<store::Subscriber::Interest> subscribe(const std::string& channel,
                                                         std::shared_ptr<store::Bell> bell = nullptr,
                                                         std::shared_ptr<store::Feed> feed = nullptr) override;
  long long publish(std::string_view channel, std::string_view message) override;
  // Classic Pub/Sub: subscribed on the master of the channel's slot (any
  // node hears every PUBLISH), published there.
  std::unique_ptr<store::Subscriber::Interest> subscribe_broadcast(const std::string& channel,
                                                                   std::shared_ptr<store::Bell> bell = nullptr,
                                                                   std::shared_ptr<store::Feed> feed = nullptr) override;
  long long publish_broadcast(std::string_view channel, std::string_view message) override;
  store::Reply command(const store::Command& c, std::string_view key, const char* what) override;
  std::unique_ptr<store::BlockingPop> blocking_pop(const std::string& key) override;
  void for_each_master(const std::function<void(store::NodeExecutor&)>& f) override;
  // The master of the calls' slot as the map has it (no refresh), when they
  // all share it.
  Direct direct(const std::vector<store::ScriptCall>& calls) override;

  // For tests: MOVED and ASK redirects followed and slot-map refreshes so
  // far, and the node ("host:port") that currently serves `slot` in the
  // client's map.
  std::uint64_t moved() const noexcept { return moved_.load(); }
  std::uint64_t asked() const noexcept { return asked_.load(); }
  std::uint64_t refreshes() const noexcept { return refreshes_.load(); }
  std::string node_of(unsigned slot);
  // The nodes this executor holds now ("host:port"): those of the last map
  // read, and any a redirect named since.
  std::vector<std::string> node_names();

  // A read of the slot map, by address: per slot, 1 + the index of its
  // master in `masters` (0: none).
  struct MapRead {
    std::vector<std::uint16_t> owner;
    std::vector<std::string> masters;  // "host:port"
  };

 private:
  using NodePtr = std::shared_ptr<store::NodeExecutor>;
  NodePtr node(const std::string& host, int port);
  NodePtr route(unsigned slot);
  // PUBLISH or SPUBLISH on the master of the channel's slot: the number of receivers.
  long long publish_with(const char* publish_command, std::string_view channel, std::string_view message);
  void refresh();  // CLUSTER SLOTS from any reachable node; throws BackendUnavailable
  // Sends r's requests and follows their redirects (cluster_executor.cpp).
  template <class Requests>
  void follow(Requests& r, const char* what);

  std::vector<store::Endpoint> seeds_;
  int pool_size_;
  detail::SharedMutex mutex_;
  std::unordered_map<std::string, NodePtr> nodes_ WEAVE_GUARDED_BY(mutex_);  // "host:port"
  std::vector<NodePtr> slots_ WEAVE_GUARDED_BY(mutex_);  // kSlots entries, null = unknown
  detail::Mutex refresh_mutex_;
  // The map as CLUSTER SLOTS last gave it (MOVED patches slots_, not this):
  // a failover is told from a reshard by comparing two of them.
  MapRead last_read_ WEAVE_GUARDED_BY(refresh_mutex_);
  std::atomic<std::uint64_t> moved_{0}, asked_{0}, refreshes_{0};
};

}  // namespace weave::store
