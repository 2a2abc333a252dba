// A Redis deployment whose clients reach every data node through a fault
// proxy (fault_proxy.h): one redis-server, a 3-master Cluster whose nodes
// announce their proxies' ports, or a Sentinel master and replica that the
// sentinels know by their proxies' ports. A fault asked of the deployment is
// asked of every proxy: a Match that names a key fires where the key lives.
//
//   fault_test::ProxiedCluster d;
//   weave::configure_dedupe({.url = d.url(), .command_timeout = 500ms});
//   d.delay_reply(Match("SET", "{weave:dedupe:k}"), 1500ms);
//   ...
//   CHECK(d.server("{weave:dedupe:k}").cmd({"GET", "{weave:dedupe:k}"}).str == ...);
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "cluster_fixture.h"
#include "fault_proxy.h"
#include "redis_server.h"
#include "sentinel_fixture.h"

namespace fault_test {

class ProxiedDeployment {
 public:
  virtual ~ProxiedDeployment() = default;

  // What Weave is configured with: every node it finds is a proxy.
  virtual std::string url() const = 0;
  // The port of the real server that holds `key` now (its hash tag's slot
  // on a cluster, the master under Sentinel), to look at or to busy it.
  virtual int server_port(const std::string& key) = 0;
  redis_test::Raw server(const std::string& key) { return redis_test::Raw(server_port(key)); }

  void delay_reply(const Match& match, std::chrono::milliseconds delay, int count = 1) {
    for (auto& p : proxies_) p->delay_reply(match, delay, count);
  }
  void cut_after_request(const Match& match, int count = 1) {
    for (auto& p : proxies_) p->cut_after_request(match, count);
  }
  void drop_connections() {
    for (auto& p : proxies_) p->drop_connections();
  }
  // Matching requests forwarded so far, by every proxy.
  long long seen(const Match& match) const {
    long long n = 0;
    for (auto& p : proxies_) n += p->seen(match);
    return n;
  }
  // Forgets the faults not applied yet (a case that ended early leaves none to the next).
  void clear_faults() {
    for (auto& p : proxies_) p->clear_rules();
  }

 protected:
  // A proxy in front of 127.0.0.1:<port>; its own port.
  int proxy_to(int port) {
    proxies_.push_back(std::make_unique<FaultProxy>(port));
    return proxies_.back()->port();
  }

  std::vector<std::unique_ptr<FaultProxy>> proxies_;
};

// redis://: one server, one proxy.
class ProxiedRedis : public ProxiedDeployment {
 public:
  ProxiedRedis() { proxy_to(server_.port()); }
  std::string url() const override { return proxies_.front()->url(); }
  int server_port(const std::string&) override { return server_.port(); }

 private:
  redis_test::RedisServer server_;
};

// redis+cluster://: three masters, each behind its proxy.
class ProxiedCluster : public ProxiedDeployment {
 public:
  ProxiedCluster() : cluster_([this](int port) { return proxy_to(port); }) {}
  std::string url() const override { return cluster_.url(); }
  int server_port(const std::string& key) override {
    return cluster_.node(cluster_.owner(cluster_.slot_of(key))).port();
  }

 private:
  cluster_test::Cluster cluster_;
};

// redis+sentinel://: a master and a replica, each behind its proxy, that the
// sentinels know by the proxies' ports. A master busy for seconds is not
// failed over (down_after 60 s): the faults here are the clients' only.
class ProxiedSentinel : public ProxiedDeployment {
 public:
  ProxiedSentinel()
      : sentinels_({.announce = [this](int port) { return proxy_to(port); }, .down_after = std::chrono::seconds(60)}) {}
  std::string url() const override { return sentinels_.url(); }
  int server_port(const std::string&) override { return sentinels_.node(sentinels_.master()).port(); }

 private:
  sentinel_test::Sentinels sentinels_;
};

}  // namespace fault_test
