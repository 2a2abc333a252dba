// Test / bench helpers for the redis backend: a private redis-server on a free
// loopback port (never 6379, never a fixed port), a raw hiredis client to
// inspect it, and child processes (fork/exec) with line-based pipes.
#pragma once

#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <algorithm>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "weave/lock.h"

namespace redis_test {

// Options for a client of a test server: short timeouts so a dead server fails fast.
inline weave::LockOptions lock_options(const std::string& url) {
  weave::LockOptions o;
  o.url = url;
  o.connect_timeout = std::chrono::milliseconds(1000);
  o.command_timeout = std::chrono::milliseconds(2000);
  return o;
}

using namespace std::chrono_literals;

// Binds 127.0.0.1:<port> (0 = any) and closes it again; the port it got, or 0.
inline int try_bind(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  int got = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    got = ntohs(a.sin_port);
  }
  ::close(fd);
  return got;
}

// Polls `done` every 50 ms; throws naming `what` after 30 s (fixtures waiting
// for a server-side state: replication up, a failover seen).
template <class Done>
void wait_for(Done done, const std::string& what) {
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) throw std::runtime_error("no " + what + " within 30 s");
    std::this_thread::sleep_for(50ms);
  }
}

// A port the kernel just handed out for 127.0.0.1. With `cluster_bus`, also
// <port> + 10000 is free and in range: a cluster node listens there too.
inline int free_port(bool cluster_bus = false) {
  for (int attempt = 0; attempt < 200; ++attempt) {
    const int port = try_bind(0);
    if (port == 0) throw std::runtime_error("bind");
    if (!cluster_bus) return port;
    if (port + 10000 <= 65535 && try_bind(port + 10000) != 0) return port;
  }
  throw std::runtime_error("no free port pair for a cluster node");
}

// A raw hiredis connection (argv commands only).
class Raw {
 public:
  explicit Raw(int port, std::chrono::milliseconds timeout = 2000ms) {
    timeval tv{static_cast<time_t>(timeout.count() / 1000), static_cast<suseconds_t>((timeout.count() % 1000) * 1000)};
    c_ = redisConnectWithTimeout("127.0.0.1", port, tv);
    if (!c_ || c_->err) {
      std::string why = c_ ? c_->errstr : "oom";
      if (c_) redisFree(c_);
      c_ = nullptr;
      throw std::runtime_error("connect: " + why);
    }
    redisSetTimeout(c_, tv);
  }
  ~Raw() {
    if (c_) redisFree(c_);
  }
  Raw(const Raw&) = delete;
  Raw& operator=(const Raw&) = delete;

  struct Result {
    int type = 0;
    long long integer = 0;
    std::string str;
    std::vector<Result> elements;
    bool nil() const { return type == REDIS_REPLY_NIL; }
  };
  Result cmd(const std::vector<std::string>& args) {
    std::vector<const char*> argv;
    std::vector<size_t> lens;
    for (auto& a : args) {
      argv.push_back(a.data());
      lens.push_back(a.size());
    }
    auto* r = static_cast<redisReply*>(redisCommandArgv(c_, static_cast<int>(argv.size()), argv.data(), lens.data()));
    if (!r) throw std::runtime_error(std::string("redis command failed: ") + c_->errstr);
    Result out = convert(r);
    freeReplyObject(r);
    if (out.type == REDIS_REPLY_ERROR) throw std::runtime_error("redis error: " + out.str);
    return out;
  }
  redisContext* context() { return c_; }

  // Commands the server has processed (INFO stats total_commands_processed),
  // not counting this INFO itself but counting every earlier one.
  long long total_commands() {
    std::string info = cmd({"INFO", "stats"}).str;
    const std::string tag = "total_commands_processed:";
    auto p = info.find(tag);
    if (p == std::string::npos) throw std::runtime_error("INFO stats: no total_commands_processed");
    return std::stoll(info.substr(p + tag.size()));
  }

  // calls=<n> of one command in INFO commandstats (0 when never called).
  long long calls(const std::string& command) {
    std::string info = cmd({"INFO", "commandstats"}).str;
    std::string tag = "cmdstat_" + command + ":calls=";
    auto p = info.find(tag);
    if (p == std::string::npos) return 0;
    return std::stoll(info.substr(p + tag.size()));
  }

 private:
  static Result convert(redisReply* r) {
    Result o;
    o.type = r->type;
    if (r->type == REDIS_REPLY_INTEGER) o.integer = r->integer;
    if (r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS || r->type == REDIS_REPLY_ERROR)
      o.str.assign(r->str, r->len);
    if (r->type == REDIS_REPLY_ARRAY)
      for (size_t i = 0; i < r->elements; ++i) o.elements.push_back(convert(r->element[i]));
    return o;
  }
  redisContext* c_ = nullptr;
};

// The commands clients send, as MONITOR sees them (without the ones Lua
// scripts call): mark() puts a marker in the stream; commands_since(marker)
// returns the top-level commands seen after it, except markers.
class Monitor {
 public:
  explicit Monitor(int port) : mon_(port), marker_conn_(port) {
    auto* r = static_cast<redisReply*>(redisCommand(mon_.context(), "MONITOR"));
    if (!r) throw std::runtime_error("MONITOR failed");
    freeReplyObject(r);
  }
  // Marks the current point of the stream; pass it to commands_between().
  std::string mark() {
    std::string m = "weave-monitor-mark-" + std::to_string(++marks_);
    marker_conn_.cmd({"ECHO", m});
    return m;
  }
  // Top-level commands (lower case, e.g. "evalsha") seen after marker `from`
  // and before marker `to`.
  std::vector<std::string> commands_between(const std::string& from, const std::string& to) {
    const std::string qfrom = "\"" + from + "\"", qto = "\"" + to + "\"";
    while (lines_.empty() || lines_.back().find(qto) == std::string::npos) {
      void* v = nullptr;
      if (redisGetReply(mon_.context(), &v) != REDIS_OK || !v) throw std::runtime_error("MONITOR read failed");
      auto* r = static_cast<redisReply*>(v);
      lines_.emplace_back(r->str ? r->str : "", r->str ? r->len : 0);
      freeReplyObject(r);
    }
    std::vector<std::string> out;
    bool in = false;
    for (const auto& line : lines_) {
      if (line.find(qto) != std::string::npos) break;
      if (line.find(qfrom) != std::string::npos) {
        in = true;
        continue;
      }
      if (!in || line.find(" lua] ") != std::string::npos) continue;  // called by a script
      auto q = line.find("] \"");
      if (q == std::string::npos) continue;
      std::string name = line.substr(q + 3, line.find('"', q + 3) - q - 3);
      for (auto& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      out.push_back(name);
    }
    return out;
  }

 private:
  Raw mon_;
  Raw marker_conn_;
  int marks_ = 0;
  std::vector<std::string> lines_;
};

// redis-server on 127.0.0.1:<free port>, no persistence, killed at the end.
class RedisServer {
 public:
  explicit RedisServer(std::vector<std::string> extra_args = {}) : extra_(std::move(extra_args)) {
    const bool cluster = std::find(extra_.begin(), extra_.end(), "--cluster-enabled") != extra_.end();
    for (int attempt = 0; attempt < 5; ++attempt) {
      port_ = free_port(cluster);
      if (start()) return;
    }
    throw std::runtime_error("could not start redis-server");
  }
  ~RedisServer() { stop(); }
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  int port() const { return port_; }
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }
  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }  // e.g. to SIGSTOP / SIGCONT the server

  // Starts on the same port (after stop()); true once PING answers.
  bool start() {
    pid_ = ::fork();
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the test
      std::string p = std::to_string(port_);
      std::FILE* devnull = std::fopen("/dev/null", "w");
      if (devnull) {
        ::dup2(fileno(devnull), 1);
      }
      std::vector<std::string> args = {"redis-server", "--port", p, "--bind", "127.0.0.1", "--save", "",
                                        "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning"};
      args.insert(args.end(), extra_.begin(), extra_.end());
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execvp("redis-server", argv.data());
      ::_exit(127);
    }
    auto deadline = std::chrono::steady_clock::now() + 10s;
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {  // died (port taken?)
        pid_ = -1;
        return false;
      }
      try {
        // Our own process must answer: another test's server may have taken
        // the port between free_port() and our bind (ours then dies).
        Raw r(port_, 200ms);
        auto info = r.cmd({"INFO", "server"});
        if (info.str.find("process_id:" + std::to_string(pid_) + "\r") != std::string::npos) return true;
      } catch (const std::runtime_error& e) {
        if (std::string(e.what()).find("NOAUTH") != std::string::npos) return true;  // --requirepass
      }
      std::this_thread::sleep_for(20ms);
    }
    stop();
    return false;
  }

  // SIGKILL (no persistence: everything is gone).
  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

  void restart() {
    stop();
    if (!start()) throw std::runtime_error("redis-server did not come back on port " + std::to_string(port_));
  }
  // restart(), then until it serves commands: it answers LOADING while it
  // reads its AOF (INFO, which start() waits for, it answers at once).
  void restart_and_load() {
    restart();
    Raw raw(port_);
    for (int i = 0; i < 500; ++i) {
      try {
        if (raw.cmd({"PING"}).str == "PONG") return;
      } catch (const std::runtime_error&) {  // LOADING
      }
      std::this_thread::sleep_for(10ms);
    }
    throw std::runtime_error("redis-server on port " + std::to_string(port_) + " still loading after 5 s");
  }

  Raw client() const { return Raw(port_); }

 private:
  std::vector<std::string> extra_;
  int port_ = 0;
  pid_t pid_ = -1;
};

// A child process (fork/exec) whose stdin/stdout are pipes to us.
class Child {
 public:
  explicit Child(const std::vector<std::string>& argv) {
    int in[2], out[2];
    if (::pipe(in) != 0 || ::pipe(out) != 0) throw std::runtime_error("pipe");
    pid_ = ::fork();
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      ::dup2(in[0], 0);
      ::dup2(out[1], 1);
      ::close(in[0]);
      ::close(in[1]);
      ::close(out[0]);
      ::close(out[1]);
      std::vector<char*> args;
      for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      ::execv(args[0], args.data());
      ::_exit(127);
    }
    ::close(in[0]);
    ::close(out[1]);
    to_ = in[1];
    from_ = out[0];
  }
  ~Child() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    ::close(to_);
    ::close(from_);
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const { return pid_; }
  void signal(int sig) { ::kill(pid_, sig); }
  void send(const std::string& line) {
    std::string l = line + "\n";
    [[maybe_unused]] auto n = ::write(to_, l.data(), l.size());
  }
  // The next line of output, or nullopt at EOF / timeout.
  std::optional<std::string> line(std::chrono::milliseconds timeout = 20s) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      auto nl = buf_.find('\n');
      if (nl != std::string::npos) {
        std::string l = buf_.substr(0, nl);
        buf_.erase(0, nl + 1);
        return l;
      }
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return std::nullopt;
      pollfd p{from_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
      char chunk[65536];
      auto n = ::read(from_, chunk, sizeof chunk);
      if (n <= 0) return std::nullopt;
      buf_.append(chunk, static_cast<size_t>(n));
    }
  }
  // All remaining output until EOF.
  std::vector<std::string> lines_until_eof(std::chrono::milliseconds timeout = 60s) {
    std::vector<std::string> out;
    while (auto l = line(timeout)) out.push_back(*l);
    return out;
  }
  // Exit code (or 128 + signal); waits.
  int wait() {
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return -1;
  }

 private:
  pid_t pid_ = -1;
  int to_ = -1, from_ = -1;
  std::string buf_;
};

}  // namespace redis_test
