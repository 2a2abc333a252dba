// A real 3-master Redis Cluster on free loopback ports: three redis-server
// processes with --cluster-enabled (each in its own temporary directory),
// joined by `redis-cli --cluster create`, ready once every node reports
// cluster_state:ok and the same slot map. One per test executable (shared()),
// killed at exit; tests use distinct keys. A test that changes the topology
// (add_replica_of, failover) makes a cluster of its own.
//
// With an `announce` function, each node announces the port it returns for
// the node's own port (cluster-announce-port; the bus stays the node's): a
// test puts a fault proxy there and every client of the cluster, which
// follows CLUSTER SLOTS and MOVED, goes through it.
#pragma once

#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "redis_server.h"

namespace cluster_test {

using namespace std::chrono_literals;

class Cluster {
 public:
  // The port node <port> announces to clients.
  using Announce = std::function<int(int port)>;

  explicit Cluster(Announce announce = {}) : announce_(std::move(announce)) {
    for (int i = 0; i < 3; ++i) start_node();
    std::vector<std::string> argv = {"/usr/bin/redis-cli", "--cluster", "create"};
    for (auto& n : nodes_) argv.push_back("127.0.0.1:" + std::to_string(n->port()));
    argv.insert(argv.end(), {"--cluster-replicas", "0", "--cluster-yes"});
    redis_test::Child create(argv);
    create.lines_until_eof(60s);
    if (create.wait() != 0) throw std::runtime_error("redis-cli --cluster create failed");
    wait_ok();
  }
  ~Cluster() {
    nodes_.clear();  // SIGKILL
    for (auto& d : dirs_) {
      std::error_code ec;
      std::filesystem::remove_all(d, ec);
    }
  }

  static Cluster& shared() {
    static Cluster c;
    return c;
  }

  std::string url() const { return "redis+cluster://127.0.0.1:" + std::to_string(announced_[0]); }
  std::size_t size() const { return nodes_.size(); }
  redis_test::RedisServer& node(std::size_t i) { return *nodes_[i]; }
  // The address clients know node i by.
  std::string name(std::size_t i) const { return "127.0.0.1:" + std::to_string(announced_[i]); }
  std::string id(std::size_t i) { return nodes_[i]->client().cmd({"CLUSTER", "MYID"}).str; }

  // The node index serving `slot`, read from node 0.
  std::size_t owner(long long slot) {
    auto c = nodes_[0]->client();
    for (const SlotRange& r : slot_ranges(c))
      if (r.from <= slot && slot <= r.to)
        if (const auto i = node_announced_at(r.port)) return *i;
    throw std::runtime_error("slot not served");
  }
  long long slot_of(const std::string& key) { return nodes_[0]->client().cmd({"CLUSTER", "KEYSLOT", key}).integer; }

  // Moves `slot` (and its keys) from node `from` to node `to`, the way
  // redis-cli --cluster reshard does: IMPORTING / MIGRATING, MIGRATE, NODE.
  void migrate(long long slot, std::size_t from, std::size_t to) {
    const std::string s = std::to_string(slot), from_id = id(from), to_id = id(to);
    auto src = nodes_[from]->client();
    auto dst = nodes_[to]->client();
    dst.cmd({"CLUSTER", "SETSLOT", s, "IMPORTING", from_id});
    src.cmd({"CLUSTER", "SETSLOT", s, "MIGRATING", to_id});
    for (;;) {
      auto keys = src.cmd({"CLUSTER", "GETKEYSINSLOT", s, "100"}).elements;
      if (keys.empty()) break;
      std::vector<std::string> cmd = {"MIGRATE", "127.0.0.1", std::to_string(nodes_[to]->port()), "", "0", "5000", "KEYS"};
      for (auto& k : keys) cmd.push_back(k.str);
      src.cmd(cmd);
    }
    finish(slot, to);
  }
  // Adds a node that replicates master `master` (fully synced when this
  // returns); returns its index.
  std::size_t add_replica_of(std::size_t master) {
    start_node();
    const std::size_t r = nodes_.size() - 1;
    auto replica = nodes_[r]->client();
    nodes_[0]->client().cmd({"CLUSTER", "MEET", "127.0.0.1", std::to_string(nodes_[r]->port())});
    wait_for([&] { return count_lines(replica.cmd({"CLUSTER", "NODES"}).str) == nodes_.size(); }, "MEET");
    const std::string master_id = id(master);
    wait_for([&] { return replica.cmd({"CLUSTER", "REPLICATE", master_id}).str == "OK"; }, "REPLICATE");
    wait_for([&] { return replica.cmd({"INFO", "replication"}).str.find("master_link_status:up") != std::string::npos; },
             "replication link");
    wait_ok();
    return r;
  }
  // A manual failover: replica `r` takes over its master's slots (the master
  // becomes its replica); returns once every node sees the new map.
  void failover(std::size_t r) {
    auto replica = nodes_[r]->client();
    replica.cmd({"CLUSTER", "FAILOVER"});
    wait_for([&] { return replica.cmd({"ROLE"}).elements.at(0).str == "master"; }, "FAILOVER");
    wait_ok();
  }

  // Assigns `slot` to node `to` on every node (ends a migration).
  void finish(long long slot, std::size_t to) {
    const std::string s = std::to_string(slot), to_id = id(to);
    for (auto& n : nodes_) n->client().cmd({"CLUSTER", "SETSLOT", s, "NODE", to_id});
    wait_ok();
  }

  // Where nodes disagree on a slot's owner, tells each node in the minority
  // the majority's owner (CLUSTER SETSLOT <slot> NODE <owner>); returns how
  // the slots it set. Seen under load after redis-cli moved a slot away and
  // back: a late gossip message from the slot's middle owner, with the
  // greater epoch, makes the first node give the slot up again while the
  // others (the middle owner too) keep it there, and gossip never brings
  // them together: each of the two sends the slot's callers to the other.
  std::vector<long long> repair_slot_views() {
    constexpr long long kSlots = 16384;
    std::vector<std::vector<int>> views;  // per node: the port serving each slot (0: none)
    for (auto& n : nodes_) {
      std::vector<int> view(kSlots, 0);
      auto c = n->client();
      for (const SlotRange& r : slot_ranges(c))
        for (long long slot = r.from; slot <= r.to; ++slot) view[static_cast<std::size_t>(slot)] = r.port;
      views.push_back(std::move(view));
    }
    std::vector<long long> set;
    for (long long slot = 0; slot < kSlots; ++slot) {
      const auto at = static_cast<std::size_t>(slot);
      std::map<int, std::size_t> votes;
      for (auto& v : views) ++votes[v[at]];
      const auto most = std::max_element(votes.begin(), votes.end(),
                                         [](const auto& x, const auto& y) { return x.second < y.second; });
      if (most->second == views.size() || most->first == 0 || 2 * most->second <= views.size()) continue;
      const auto owner = node_announced_at(most->first);
      if (!owner) continue;
      const std::string owner_id = id(*owner);
      for (std::size_t n = 0; n < nodes_.size(); ++n)
        if (views[n][at] != most->first)
          nodes_[n]->client().cmd({"CLUSTER", "SETSLOT", std::to_string(slot), "NODE", owner_id});
      set.push_back(slot);
    }
    return set;
  }

  void wait_ok() {
    auto deadline = std::chrono::steady_clock::now() + 30s;
    for (;;) {
      bool ok = true;
      std::string first, seen;  // seen: each node's state and map, for the error
      for (auto& n : nodes_) {
        auto c = n->client();
        const bool node_ok = c.cmd({"CLUSTER", "INFO"}).str.find("cluster_state:ok") != std::string::npos;
        if (!node_ok) ok = false;
        // This node's map as sorted "<from>-<to>@<master port>" ranges (the
        // order CLUSTER SLOTS lists them in may differ between nodes).
        std::vector<std::string> ranges;
        for (const SlotRange& r : slot_ranges(c))
          ranges.push_back(std::to_string(r.from) + "-" + std::to_string(r.to) + "@" + std::to_string(r.port));
        std::sort(ranges.begin(), ranges.end());
        std::string shape;
        for (auto& r : ranges) shape += r + ";";
        if (first.empty()) first = shape;
        if (shape != first || shape.empty()) ok = false;
        seen += "\n  node " + std::to_string(n->port()) + (node_ok ? ": ok, " : ": not ok, ") + shape;
      }
      if (ok) return;
      if (std::chrono::steady_clock::now() > deadline)
        throw std::runtime_error("cluster not ok in time (a node's state is not ok, or the nodes' slot maps differ):" + seen);
      std::this_thread::sleep_for(50ms);
    }
  }

 private:
  // One range of a node's CLUSTER SLOTS answer: slots from..to, served by
  // the master clients know by `port`.
  struct SlotRange {
    long long from, to;
    int port;
  };
  static std::vector<SlotRange> slot_ranges(redis_test::Raw& c) {
    std::vector<SlotRange> ranges;
    for (auto& r : c.cmd({"CLUSTER", "SLOTS"}).elements)
      ranges.push_back({r.elements[0].integer, r.elements[1].integer, static_cast<int>(r.elements[2].elements[1].integer)});
    return ranges;
  }
  // The node clients know by `port`, if any.
  std::optional<std::size_t> node_announced_at(int port) const {
    for (std::size_t i = 0; i < announced_.size(); ++i)
      if (announced_[i] == port) return i;
    return std::nullopt;
  }

  void start_node() {
    char tmpl[] = "/tmp/weave-cluster-XXXXXX";
    if (!::mkdtemp(tmpl)) throw std::runtime_error("mkdtemp");
    dirs_.emplace_back(tmpl);
    nodes_.push_back(std::make_unique<redis_test::RedisServer>(std::vector<std::string>{
        "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--dir", tmpl,
        "--cluster-node-timeout", "5000"}));
    const int port = nodes_.back()->port();
    announced_.push_back(announce_ ? announce_(port) : port);
    if (announced_.back() != port) {
      auto c = nodes_.back()->client();
      c.cmd({"CONFIG", "SET", "cluster-announce-port", std::to_string(announced_.back())});
      c.cmd({"CONFIG", "SET", "cluster-announce-bus-port", std::to_string(port + 10000)});
    }
  }
  static std::size_t count_lines(const std::string& s) { return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n')); }
  template <class Done>
  static void wait_for(Done done, const char* what) {
    redis_test::wait_for(done, std::string("cluster ") + what);
  }

  Announce announce_;
  std::vector<std::string> dirs_;
  std::vector<std::unique_ptr<redis_test::RedisServer>> nodes_;
  std::vector<int> announced_;  // per node: the port clients are told
};

}  // namespace cluster_test
