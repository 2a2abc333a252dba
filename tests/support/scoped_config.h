// What a configuration test sets for one scope: an environment variable
// (restored after), a file (removed after).
//
//   ScopedEnv url("WEAVE_LOCK_URL", "mem://x");   // or std::nullopt: unset
//   TempFile f(R"({"lock": {"url": "mem://y"}})");  // f.path()
//   CHECK_THAT(error_of([&] { weave::load_lock_options({.file = f.path()}); }), Contains("lock.url"));
#pragma once

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>

#include "weave/error.h"

class ScopedEnv {
 public:
  ScopedEnv(std::string name, std::optional<std::string> value) : name_(std::move(name)) {
    if (const char* old = std::getenv(name_.c_str())) old_ = old;
    if (value)
      ::setenv(name_.c_str(), value->c_str(), 1);
    else
      ::unsetenv(name_.c_str());
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_.c_str(), old_->c_str(), 1);
    else
      ::unsetenv(name_.c_str());
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

class TempFile {
 public:
  explicit TempFile(const std::string& text) {
    char name[] = "/tmp/weave-config-test-XXXXXX";
    const int fd = ::mkstemp(name);
    if (fd < 0) throw std::runtime_error("mkstemp failed");
    ::close(fd);
    path_ = name;
    std::ofstream(path_) << text;
  }
  ~TempFile() { std::remove(path_.c_str()); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The text of the ConfigError `f` throws, or "(no ConfigError)".
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const weave::ConfigError& e) {
    return e.what();
  }
  return "(no ConfigError)";
}
