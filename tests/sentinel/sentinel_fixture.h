// A Redis master with one replica, watched by three Redis Sentinels, all on
// free loopback ports (the sentinels run `redis-server <conf> --sentinel`,
// each in its own temporary directory, killed at the end). failover() forces
// a failover and waits until the sentinels and the promoted node agree.
//
// With an `announce` function, the sentinels know each node by the port it
// returns for the node's own port (the master is monitored there, the
// replica announces it with replica-announce-port): a test puts a fault
// proxy there, and every client the sentinels direct goes through it.
// Replication between the nodes stays direct until a failover.
#pragma once

#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "redis_server.h"

namespace sentinel_test {

using namespace std::chrono_literals;

class Sentinels {
 public:
  static constexpr const char* kMaster = "weave-master";

  // The port clients are told for node <port>.
  using Announce = std::function<int(int port)>;
  struct Options {
    Announce announce;
    // How long a master may not answer before a sentinel counts it down.
    std::chrono::milliseconds down_after = 2000ms;
  };

  Sentinels() : Sentinels(Options{}) {}
  explicit Sentinels(Options options) : options_(std::move(options)) {
    // Each node in its own directory: a replica's full sync writes dump.rdb there.
    for (int i = 0; i < 2; ++i) {
      nodes_.push_back(std::make_unique<redis_test::RedisServer>(std::vector<std::string>{"--dir", temp_dir()}));
      const int port = nodes_.back()->port();
      announced_.push_back(options_.announce ? options_.announce(port) : port);
    }
    auto replica = nodes_[1]->client();
    if (announced_[1] != nodes_[1]->port()) {
      replica.cmd({"CONFIG", "SET", "replica-announce-ip", "127.0.0.1"});
      replica.cmd({"CONFIG", "SET", "replica-announce-port", std::to_string(announced_[1])});
    }
    replica.cmd({"REPLICAOF", "127.0.0.1", std::to_string(nodes_[0]->port())});
    // Replica attached before the sentinels start: their first INFO of the
    // master already lists it (otherwise up to 10 s until the next).
    wait_for([&] { return link_up(*nodes_[1]); }, "replication link");
    for (int i = 0; i < 3; ++i) start_sentinel();
    // A replica can be promoted once a sentinel has its INFO, with the link up.
    wait_for([&] {
      for (auto& s : sentinels_) {
        auto reps = redis_test::Raw(s.port).cmd({"SENTINEL", "REPLICAS", kMaster});
        if (reps.elements.empty()) return false;
        const auto& r = reps.elements[0].elements;  // field, value, field, value...
        auto field = [&](const std::string& name) {
          for (std::size_t i = 0; i + 1 < r.size(); i += 2)
            if (r[i].str == name) return r[i + 1].str;
          return std::string();
        };
        if (field("master-link-status") != "ok" || field("flags") != "slave") return false;
        if (field("info-refresh").empty() || std::stoll(field("info-refresh")) > 5000) return false;
      }
      return true;
    }, "sentinels knowing the replica");
  }
  ~Sentinels() {
    sentinels_.clear();
    nodes_.clear();
    for (auto& d : dirs_) {
      std::error_code ec;
      std::filesystem::remove_all(d, ec);
    }
  }

  std::string url() const {
    std::string u = "redis+sentinel://";
    for (std::size_t i = 0; i < sentinels_.size(); ++i) u += (i ? "," : "") + std::string("127.0.0.1:") + std::to_string(sentinels_[i].port);
    return u + "/" + kMaster;
  }
  redis_test::RedisServer& node(std::size_t i) { return *nodes_[i]; }
  int sentinel_port(std::size_t i) const { return sentinels_[i].port; }

  // The index of the node every sentinel names as master.
  std::size_t master() {
    auto r = redis_test::Raw(sentinels_[0].port).cmd({"SENTINEL", "GET-MASTER-ADDR-BY-NAME", kMaster});
    const int port = std::stoi(r.elements.at(1).str);
    for (std::size_t i = 0; i < nodes_.size(); ++i)
      if (announced_[i] == port) return i;
    throw std::runtime_error("sentinel names an unknown master");
  }

  // Forces a failover; returns the new master's index once it answers ROLE
  // master and every sentinel names it.
  std::size_t failover() {
    const std::size_t next = 1 - master();
    auto r = redis_test::Raw(sentinels_[0].port).cmd({"SENTINEL", "FAILOVER", kMaster});
    if (r.str != "OK") throw std::runtime_error("SENTINEL FAILOVER: " + r.str);
    wait_for([&] { return nodes_[next]->client().cmd({"ROLE"}).elements.at(0).str == "master"; }, "promotion");
    wait_for([&] {
      for (auto& s : sentinels_) {
        auto a = redis_test::Raw(s.port).cmd({"SENTINEL", "GET-MASTER-ADDR-BY-NAME", kMaster});
        if (a.elements.size() != 2 || std::stoi(a.elements[1].str) != announced_[next]) return false;
      }
      return true;
    }, "sentinels naming the new master");
    return next;  // the old master is turned into a replica later (seconds)
  }

 private:
  struct Sentinel {
    int port = 0;
    std::unique_ptr<redis_test::Child> process;
  };

  std::string temp_dir() {
    char tmpl[] = "/tmp/weave-sentinel-XXXXXX";
    if (!::mkdtemp(tmpl)) throw std::runtime_error("mkdtemp");
    dirs_.emplace_back(tmpl);
    return dirs_.back();
  }

  void start_sentinel() {
    temp_dir();
    for (int attempt = 0; attempt < 5; ++attempt) {
      Sentinel s;
      s.port = redis_test::free_port();
      const std::string conf = dirs_.back() + "/sentinel.conf";
      std::ofstream(conf) << "port " << s.port << "\nbind 127.0.0.1\ndaemonize no\n"
                          << "logfile " << dirs_.back() << "/sentinel.log\n"
                          << "dir " << dirs_.back() << "\n"
                          << "sentinel monitor " << kMaster << " 127.0.0.1 " << announced_[0] << " 2\n"
                          << "sentinel down-after-milliseconds " << kMaster << " " << options_.down_after.count() << "\n"
                          << "sentinel failover-timeout " << kMaster << " 5000\n";
      s.process = std::make_unique<redis_test::Child>(std::vector<std::string>{"/usr/bin/redis-server", conf, "--sentinel"});
      const auto deadline = std::chrono::steady_clock::now() + 10s;
      bool up = false;
      while (!up && std::chrono::steady_clock::now() < deadline) {
        try {
          up = redis_test::Raw(s.port, 200ms).cmd({"PING"}).str == "PONG";
        } catch (const std::exception&) {
          std::this_thread::sleep_for(20ms);
        }
      }
      if (up) {
        sentinels_.push_back(std::move(s));
        return;
      }
    }
    throw std::runtime_error("could not start a sentinel");
  }

  static bool link_up(redis_test::RedisServer& n) {
    return n.client().cmd({"INFO", "replication"}).str.find("master_link_status:up") != std::string::npos;
  }
  template <class Done>
  static void wait_for(Done done, const char* what) {
    redis_test::wait_for(done, std::string("sentinel ") + what);
  }

  Options options_;
  std::vector<std::string> dirs_;
  std::vector<std::unique_ptr<redis_test::RedisServer>> nodes_;
  std::vector<int> announced_;  // per node: the port clients are told
  std::vector<Sentinel> sentinels_;
};

}  // namespace sentinel_test
