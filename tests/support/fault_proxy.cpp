// The fault-injecting proxy of fault_proxy.h: one thread, poll(), a pair of
// non-blocking sockets per client connection.
#include "fault_proxy.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <deque>
#include <stdexcept>
#include <string_view>

namespace fault_test {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t npos = std::string_view::npos;

struct ProtocolError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

long long number(std::string_view text) {
  long long n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size()) throw ProtocolError("bad number '" + std::string(text) + "'");
  return n;
}

// The end of the RESP2 reply that starts at buf[pos], or npos when it has
// not all arrived yet.
std::size_t reply_end(std::string_view buf, std::size_t pos, int depth = 0) {
  if (depth > 64) throw ProtocolError("reply nested deeper than 64");
  if (pos >= buf.size()) return npos;
  const std::size_t eol = buf.find("\r\n", pos);
  if (eol == npos) return npos;
  const std::string_view head = buf.substr(pos + 1, eol - pos - 1);
  std::size_t at = eol + 2;
  switch (buf[pos]) {
    case '+':
    case '-':
    case ':':
      return at;
    case '$': {
      const long long n = number(head);
      if (n < 0) return at;  // nil
      if (buf.size() < at + n + 2) return npos;
      return at + n + 2;
    }
    case '*': {
      const long long n = number(head);  // -1: nil
      for (long long i = 0; i < n && at != npos; ++i) at = reply_end(buf, at, depth + 1);
      return at;
    }
    default:
      throw ProtocolError(std::string("reply of unknown type '") + buf[pos] + "'");
  }
}

// The end of the request that starts at buf[pos] and its argv (empty: one
// Redis skips without a reply), or npos when it has not all arrived yet.
std::size_t request_end(std::string_view buf, std::size_t pos, Argv& argv) {
  argv.clear();
  if (buf[pos] != '*') {  // inline: one line of words
    const std::size_t eol = buf.find('\n', pos);
    if (eol == npos) {
      if (buf.size() - pos > (64 << 10)) throw ProtocolError("inline request over 64 KB");
      return npos;
    }
    std::string_view line = buf.substr(pos, eol - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    for (std::size_t i = 0; i < line.size();) {
      const std::size_t word = line.find_first_not_of(" \t", i);
      if (word == npos) break;
      const std::size_t end = std::min(line.find_first_of(" \t", word), line.size());
      argv.emplace_back(line.substr(word, end - word));
      i = end;
    }
    return eol + 1;
  }
  std::size_t eol = buf.find("\r\n", pos);
  if (eol == npos) return npos;
  const long long n = number(buf.substr(pos + 1, eol - pos - 1));
  std::size_t at = eol + 2;
  for (long long i = 0; i < n; ++i) {
    if (at >= buf.size()) return npos;
    if (buf[at] != '$') throw ProtocolError("request argument is not a bulk string");
    eol = buf.find("\r\n", at);
    if (eol == npos) return npos;
    const long long len = number(buf.substr(at + 1, eol - at - 1));
    if (len < 0) throw ProtocolError("request argument of negative length");
    at = eol + 2;
    if (buf.size() < at + len + 2) return npos;
    argv.emplace_back(buf.substr(at, len));
    at += len + 2;
  }
  return at;
}

void set_nonblocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

void no_delay(int fd) {
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

sockaddr_in loopback(int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  return a;
}

// Reads what is there into `into`: false at EOF or on an error.
bool read_into(int fd, std::string& into) {
  char chunk[65536];
  for (;;) {
    const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n > 0) {
      into.append(chunk, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
  }
}

// Writes what it can of `from`: false on an error.
bool write_from(int fd, std::string& from) {
  while (!from.empty()) {
    const ssize_t n = ::send(fd, from.data(), from.size(), MSG_NOSIGNAL);
    if (n > 0) {
      from.erase(0, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
  }
  return true;
}

}  // namespace

bool Match::matches(const Argv& argv) const {
  if (!command.empty() && (argv.empty() || lower(argv[0]) != lower(command))) return false;
  if (!arg_contains.empty() &&
      std::none_of(argv.begin() + (argv.empty() ? 0 : 1), argv.end(),
                   [&](const std::string& a) { return a.find(arg_contains) != std::string::npos; }))
    return false;
  return !predicate || predicate(argv);
}

struct FaultProxy::Link {
  // What a forwarded request's reply gets.
  struct Pending {
    std::chrono::milliseconds delay{0};
    bool cut = false;
  };
  // A reply read from the server, delivered at `at` (after those before it).
  struct Held {
    std::string bytes;
    Clock::time_point at;
  };

  int client = -1, server = -1;
  std::string from_client, to_server, from_server, to_client;
  std::deque<Pending> pending;  // forwarded, reply not read yet (in order)
  std::deque<Held> held;
  bool subscribed = false;      // Pub/Sub: replies pass unpaired
  Clock::time_point hold_until{};  // (subscribed) nothing reaches the client before
  bool cut = false;             // a cut request was forwarded: nothing more is
  bool cut_once_sent = false;   // (subscribed) close once to_server is written
  bool server_gone = false;     // closed by the server: close once all is delivered
  bool client_gone = false;

  ~Link() {
    if (client >= 0) ::close(client);
    if (server >= 0) ::close(server);
  }
};

FaultProxy::FaultProxy(int upstream_port) : upstream_port_(upstream_port) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  sockaddr_in a = loopback(0);  // the kernel picks a free port: no race with other tests
  socklen_t len = sizeof a;
  if (listen_fd_ < 0 || ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::listen(listen_fd_, 64) != 0 || ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0 ||
      ::pipe2(wake_fd_, O_NONBLOCK | O_CLOEXEC) != 0) {
    const std::string why = std::strerror(errno);
    if (listen_fd_ >= 0) ::close(listen_fd_);
    throw std::runtime_error("fault proxy: cannot listen: " + why);
  }
  port_ = ntohs(a.sin_port);
  thread_ = std::thread([this] { run(); });
}

FaultProxy::~FaultProxy() {
  {
    std::lock_guard g(mutex_);
    stop_ = true;
  }
  wake();
  thread_.join();
  links_.clear();
  ::close(listen_fd_);
  ::close(wake_fd_[0]);
  ::close(wake_fd_[1]);
}

void FaultProxy::delay_reply(Match match, std::chrono::milliseconds delay, int count) {
  std::lock_guard g(mutex_);
  rules_.push_back({std::move(match), false, delay, count});
}

void FaultProxy::cut_after_request(Match match, int count) {
  std::lock_guard g(mutex_);
  rules_.push_back({std::move(match), true, std::chrono::milliseconds(0), count});
}

void FaultProxy::clear_rules() {
  std::lock_guard g(mutex_);
  rules_.clear();
}

void FaultProxy::black_hole(bool on) {
  {
    std::lock_guard g(mutex_);
    hole_ = on;
  }
  wake();
}

void FaultProxy::drop_connections() {
  std::unique_lock g(mutex_);
  const std::uint64_t mine = ++drops_asked_;
  wake();
  dropped_.wait(g, [&] { return drops_done_ >= mine; });
}

long long FaultProxy::seen(const Match& match) const {
  std::lock_guard g(mutex_);
  return std::count_if(log_.begin(), log_.end(), [&](const Argv& a) { return match.matches(a); });
}

void FaultProxy::wake() {
  const char b = 1;
  [[maybe_unused]] const ssize_t n = ::write(wake_fd_[1], &b, 1);  // (full: a wake-up is pending anyway)
}

void FaultProxy::accept_client() {
  for (;;) {
    const int c = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (c < 0) return;  // EAGAIN: all accepted
    auto link = std::make_unique<Link>();
    link->client = c;
    no_delay(c);
    // Blocking connect: the upstream is on loopback (refused at once when down).
    link->server = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const sockaddr_in a = loopback(upstream_port_);
    if (link->server < 0 || ::connect(link->server, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0)
      continue;  // the client sees its connection closed
    set_nonblocking(link->server);
    no_delay(link->server);
    links_.push_back(std::move(link));
  }
}

// Complete requests from the client go to the server, each logged and
// checked against the rules; an incomplete one waits for its rest.
void FaultProxy::forward_requests(Link& link) {
  std::size_t done = 0;
  Argv argv;
  while (!link.cut && done < link.from_client.size()) {
    const std::size_t end = request_end(link.from_client, done, argv);
    if (end == npos) break;
    Link::Pending p;
    {
      std::lock_guard g(mutex_);
      for (auto r = rules_.begin(); r != rules_.end(); ++r)
        if (r->match.matches(argv)) {
          if (r->cut)
            p.cut = true;
          else
            p.delay = r->delay;
          if (--r->left <= 0) rules_.erase(r);
          break;
        }
      if (!argv.empty()) log_.push_back(argv);
    }
    link.to_server.append(link.from_client, done, end - done);
    done = end;
    if (!argv.empty()) {
      const std::string name = lower(argv[0]);
      if (name == "subscribe" || name == "ssubscribe" || name == "psubscribe") link.subscribed = true;
      if (link.subscribed) {
        link.cut_once_sent = link.cut_once_sent || p.cut;
        if (p.delay.count() > 0) link.hold_until = std::max(link.hold_until, Clock::now() + p.delay);
      } else
        link.pending.push_back(p);
    }
    if (p.cut) link.cut = true;
  }
  if (link.cut)
    link.from_client.clear();  // after a cut request nothing more goes
  else
    link.from_client.erase(0, done);
}

// Complete replies from the server, each paired with its request: held
// for its delay, or (a cut request's) the end of the connection.
void FaultProxy::read_replies(Link& link) {
  std::size_t done = 0;
  const auto now = Clock::now();
  while (done < link.from_server.size()) {
    const std::size_t end = reply_end(link.from_server, done);
    if (end == npos) break;
    Link::Pending p;
    if (!link.subscribed && !link.pending.empty()) {
      p = link.pending.front();
      link.pending.pop_front();
    }
    if (p.cut) {  // the server ran it: the client never hears of it
      link.from_server.clear();
      link.server_gone = true;
      if (link.server >= 0) ::close(link.server);
      link.server = -1;
      return;
    }
    link.held.push_back({link.from_server.substr(done, end - done), std::max(now + p.delay, link.hold_until)});
    done = end;
  }
  link.from_server.erase(0, done);
}

bool FaultProxy::pump(Link& link, bool hole) {
  if (hole) return true;
  try {
    forward_requests(link);
    read_replies(link);  // (also what came with the server's EOF)
  } catch (const ProtocolError& e) {
    std::fprintf(stderr, "fault proxy: %s: connection closed\n", e.what());
    return false;
  }
  const auto now = Clock::now();
  while (!link.held.empty() && link.held.front().at <= now) {
    link.to_client += link.held.front().bytes;
    link.held.pop_front();
  }
  if (link.server >= 0 && !write_from(link.server, link.to_server)) return false;
  if (!write_from(link.client, link.to_client)) return false;
  if (link.cut_once_sent && link.to_server.empty()) return false;
  // The server closed it (or a cut reply came): close once the rest is out.
  return !(link.server_gone && link.held.empty() && link.to_client.empty());
}

void FaultProxy::run() {
  std::vector<pollfd> fds;
  for (;;) {
    bool hole = false;
    {
      std::lock_guard g(mutex_);
      if (stop_) return;
      hole = hole_;
      if (drops_done_ < drops_asked_) {
        links_.clear();
        drops_done_ = drops_asked_;
        dropped_.notify_all();
      }
    }
    // Forward what can go; then wait for bytes, room to write, or the next
    // held reply's time.
    std::erase_if(links_, [&](const std::unique_ptr<Link>& l) { return !pump(*l, hole); });
    int timeout = -1;
    fds.assign({{wake_fd_[0], POLLIN, 0}, {listen_fd_, POLLIN, 0}});
    for (const auto& l : links_) {
      fds.push_back({l->client, static_cast<short>(POLLIN | (!hole && !l->to_client.empty() ? POLLOUT : 0)), 0});
      fds.push_back({l->server, static_cast<short>(POLLIN | (!hole && !l->to_server.empty() ? POLLOUT : 0)), 0});
      if (!hole && !l->held.empty()) {
        const auto left = std::chrono::ceil<std::chrono::milliseconds>(l->held.front().at - Clock::now()).count();
        timeout = static_cast<int>(std::clamp<long long>(left, 0, timeout < 0 ? 60'000 : timeout));
      }
    }
    if (::poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR)
      throw std::runtime_error(std::string("fault proxy: poll: ") + std::strerror(errno));
    if (fds[0].revents) {
      char drain[256];
      while (::read(wake_fd_[0], drain, sizeof drain) > 0) {
      }
    }
    const std::size_t polled = links_.size();  // (fds has theirs)
    if (fds[1].revents) accept_client();
    for (std::size_t i = 0; i < polled; ++i) {
      Link& l = *links_[i];
      // A client that leaves takes its upstream connection with it.
      if ((fds[2 + 2 * i].revents & (POLLIN | POLLHUP | POLLERR)) && !read_into(l.client, l.from_client))
        l.client_gone = true;
      if (l.server >= 0 && (fds[3 + 2 * i].revents & (POLLIN | POLLHUP | POLLERR)) &&
          !read_into(l.server, l.from_server)) {
        l.server_gone = true;  // (its last replies are still delivered)
        ::close(l.server);
        l.server = -1;
      }
    }
    std::erase_if(links_, [](const std::unique_ptr<Link>& l) { return l->client_gone; });
  }
}

}  // namespace fault_test
