// Test programs run under a wall clock skewed from the real one (Debian's
// libfaketime 0.9.10, preloaded; the monotonic clock is left alone).
//
//   SkewedRun worker("-5m", worker_path + " offer " + args);
//   const std::string answer = worker.answer();   // first line of stdout, "" if none
//   INFO(worker.errors());                        // exit status and stderr
//
// Several may run at once: start them all, then ask each. A test that
// forks its own children uses SkewedEnvironment and its exec().
//
// libfaketime keeps a semaphore and a shared-memory object named after the
// pid of the process it starts in, removed when that process exits
// normally; a killed one leaves them, and a later process given the same
// pid exits at once with "shm_open: File exists" (the faketime command
// does the same for its own pid). So the child removes those of its pid
// before exec, and the library is preloaded directly, not through that
// command or a shell.
#pragma once

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

// The environment for a process whose wall clock is `faketime` (FAKETIME's
// syntax: "-5m", "@2026-03-29 00:59:58"): this one's, with libfaketime
// preloaded and `extra` ("NAME=value") added. Built before fork(), for
// execve(): a forked child of a threaded process must not setenv().
class SkewedEnvironment {
 public:
  explicit SkewedEnvironment(const std::string& faketime, std::initializer_list<std::string> extra = {}) {
    const std::string asan = ::getenv("ASAN_OPTIONS") ? ::getenv("ASAN_OPTIONS") : "";
    std::vector<std::string> vars = {"LD_PRELOAD=/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
                                     "FAKETIME=" + faketime, "FAKETIME_DONT_FAKE_MONOTONIC=1",
                                     // (ASan builds: libfaketime loads first)
                                     "ASAN_OPTIONS=" + asan + (asan.empty() ? "" : ":") + "verify_asan_link_order=0"};
    vars.insert(vars.end(), extra.begin(), extra.end());
    for (char** e = environ; *e; ++e) {
      const std::string_view var = *e;
      const std::string_view name = var.substr(0, var.find('='));
      bool replaced = false;
      for (const std::string& v : vars) replaced = replaced || std::string_view(v).substr(0, v.find('=')) == name;
      if (!replaced) vars_.emplace_back(var);
    }
    vars_.insert(vars_.end(), vars.begin(), vars.end());
    for (std::string& v : vars_) pointers_.push_back(v.data());
    pointers_.push_back(nullptr);
  }
  char* const* envp() const { return pointers_.data(); }

  // In a forked child: removes what a killed process of this pid left of
  // libfaketime's (async-signal-safe), then runs `path` with `argv` in this
  // environment.
  [[noreturn]] void exec(const char* path, char* const* argv) const {
    char digits[24];
    int n = 0;
    for (long pid = ::getpid(); pid > 0 && n < 24; pid /= 10) digits[n++] = static_cast<char>('0' + pid % 10);
    char shm[64] = "/dev/shm/faketime_shm_";
    char sem[64] = "/dev/shm/sem.faketime_sem_";
    for (char* name : {shm, sem}) {
      char* end = name;
      while (*end) ++end;
      for (int i = n - 1; i >= 0; --i) *end++ = digits[i];
      *end = 0;
      ::unlink(name);
    }
    ::execve(path, argv, envp());
    ::_exit(127);
  }

 private:
  std::vector<std::string> vars_;
  std::vector<char*> pointers_;
};

class SkewedRun {
 public:
  // Starts `command` (a program and its arguments, separated by single
  // spaces; no shell) under `skew` ("+5m", "-30s").
  SkewedRun(std::string_view skew, const std::string& command) {
    const SkewedEnvironment environment{std::string(skew)};
    std::vector<std::string> words;
    for (std::size_t at = 0; at <= command.size();) {
      const std::size_t space = std::min(command.find(' ', at), command.size());
      if (space > at) words.push_back(command.substr(at, space - at));
      at = space + 1;
    }
    std::vector<char*> argv;
    for (std::string& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
    char path[] = "/tmp/weave-skewed-stderr-XXXXXX";
    const int errors_fd = ::mkstemp(path);
    if (errors_fd < 0 || words.empty()) return;
    errors_path_ = path;
    int out[2];
    if (::pipe(out) != 0) {
      ::close(errors_fd);
      return;
    }
    pid_ = ::fork();
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      ::dup2(out[1], STDOUT_FILENO);
      ::dup2(errors_fd, STDERR_FILENO);
      ::close(out[0]);
      ::close(out[1]);
      ::close(errors_fd);
      environment.exec(argv[0], argv.data());
    }
    ::close(out[1]);
    ::close(errors_fd);
    if (pid_ < 0) {
      ::close(out[0]);
      return;
    }
    output_ = ::fdopen(out[0], "r");
  }
  SkewedRun(const SkewedRun&) = delete;
  SkewedRun& operator=(const SkewedRun&) = delete;
  ~SkewedRun() {
    finish();
    if (!errors_path_.empty()) ::unlink(errors_path_.c_str());
  }

  // The first line it printed (without its newline), once it has exited; ""
  // for none.
  std::string answer() {
    if (output_) {
      char line[512] = {0};
      if (::fgets(line, sizeof line, output_)) answer_ = line;
      if (!answer_.empty() && answer_.back() == '\n') answer_.pop_back();
      finish();
    }
    return answer_;
  }

  // How it ended and what it wrote on standard error (complete once
  // answer() returned).
  std::string errors() const {
    std::ifstream in(errors_path_);
    std::ostringstream text;
    text << "exit status " << exit_status_ << ", stderr: " << in.rdbuf();
    return text.str();
  }

 private:
  void finish() {
    if (output_) ::fclose(output_);  // (anything more it writes ends it with SIGPIPE, as pclose() would)
    output_ = nullptr;
    if (pid_ > 0) {
      int status = 0;
      if (::waitpid(pid_, &status, 0) == pid_) exit_status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      pid_ = -1;
    }
  }

  pid_t pid_ = -1;
  FILE* output_ = nullptr;
  std::string errors_path_;
  std::string answer_;
  int exit_status_ = -1;
};
