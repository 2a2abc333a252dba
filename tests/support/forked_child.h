// A fork()ed child that runs one function and hands its text back through a
// pipe: for tests of what a process does differently after fork().
//
//   ForkedChild child([] { return weave::detail::unique_token(); });
//   const std::string parent_next = weave::detail::unique_token();
//   const std::string from_child = child.wait();   // "" if the child failed
//   CHECK(child.exited_cleanly());
#pragma once

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <stdexcept>
#include <string>

class ForkedChild {
 public:
  explicit ForkedChild(const std::function<std::string()>& body) {
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      ::close(fds[0]);
      int code = 1;
      try {
        const std::string out = body();
        code = ::write(fds[1], out.data(), out.size()) == static_cast<ssize_t>(out.size()) ? 0 : 1;
      } catch (...) {
        code = 2;
      }
      ::_exit(code);
    }
    ::close(fds[1]);
    read_fd_ = fds[0];
  }
  ForkedChild(const ForkedChild&) = delete;
  ForkedChild& operator=(const ForkedChild&) = delete;
  ~ForkedChild() { wait(); }

  // Everything the child wrote, once it has exited.
  std::string wait() {
    if (read_fd_ < 0) return out_;
    char buf[256];
    for (ssize_t n; (n = ::read(read_fd_, buf, sizeof buf)) > 0;) out_.append(buf, static_cast<std::size_t>(n));
    ::close(read_fd_);
    read_fd_ = -1;
    int status = 0;
    clean_ = ::waitpid(pid_, &status, 0) == pid_ && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    return out_;
  }
  pid_t pid() const noexcept { return pid_; }
  bool exited_cleanly() {
    wait();
    return clean_;
  }

 private:
  pid_t pid_ = -1;
  int read_fd_ = -1;
  std::string out_;
  bool clean_ = false;
};
