// RESP replies read by the store connection's reader: Connection::feed
// (src/store/connection.cpp) on the input as bytes from the server, through
// the reply functions connect_raw() installs (bound_replies: an array may
// declare at most 2^20 elements, so no allocation follows a declared length
// blindly; -malloc_limit_mb=256 catches one that would).
// Oracle: replies or a weave::IoError (never a TimeoutError: nothing waited),
// never a crash; every reply is a well-formed tree (an array's elements are
// all there, a string has its length); an array declared over the bound is
// refused with an error saying so; and the same bytes fed in small pieces
// give the same replies, and fail (or not) the same way, as fed at once.
//
// The Connection is made once, against a listener in this process that
// answers the handshake's PING. Between inputs the harness gives it a fresh
// reader with the same reply functions and clears the context's error
// (hiredis' reader stays failed after an error, and a real connection is
// dropped then). acl.cpp and events.cpp are not linked (they pull in the
// executor and the metrics): the two functions of theirs connection.cpp calls
// stand below, aborting, as neither path is taken here (an error reply to the
// handshake; the pool's reconnect notice).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <hiredis/hiredis.h>

#include "core/events.h"
#include "store/acl.h"
#include "store/connection.h"
#include "weave/error.h"

namespace WEAVE_NAMESPACE {
std::string store::acl_hint(std::string_view) { std::abort(); }
void detail::emit_notice(const EventHook&, EventKind, std::string_view, std::string_view, std::string_view) noexcept {
  std::abort();
}
}  // namespace WEAVE_NAMESPACE

namespace {
using weave::store::Connection;
using weave::store::Reply;

// A server for the handshake only: accepts one connection, answers its PING,
// then keeps it open (nothing more is read or written on it).
int serve_handshake() {
  const int ls = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (ls < 0 || ::bind(ls, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(ls, 1) != 0 ||
      ::getsockname(ls, reinterpret_cast<sockaddr*>(&a), &len) != 0)
    std::abort();
  std::thread([ls] {
    const int c = ::accept(ls, nullptr, nullptr);
    char buf[256];
    if (c < 0 || ::read(c, buf, sizeof buf) <= 0) std::abort();  // "*1\r\n$4\r\nPING\r\n"
    if (::write(c, "+PONG\r\n", 7) != 7) std::abort();
    for (;;) ::pause();  // (the connection stays open for the process's life)
  }).detach();
  return ntohs(a.sin_port);
}

Connection& connection() {
  static Connection* c = [] {
    weave::store::Endpoint ep;
    ep.host = "127.0.0.1";
    ep.port = serve_handshake();
    return new Connection(ep);
  }();
  return *c;
}

// A fresh reader with the reply functions the connection's first reader had
// (bound_replies'), and no error on the context.
void fresh_reader(Connection& c) {
  static redisReplyObjectFunctions* const fn = c.raw()->reader->fn;
  redisContext* ctx = c.raw();
  redisReaderFree(ctx->reader);
  ctx->reader = redisReaderCreateWithFunctions(fn);
  if (!ctx->reader) std::abort();
  ctx->err = 0;
  ctx->errstr[0] = '\0';
}

// A reply tree as text (to compare two readings); aborts on a malformed one.
void describe(const redisReply* r, std::string& out, int depth) {
  if (!r || depth > 16) std::abort();
  out += std::to_string(r->type);
  out += '(';
  switch (r->type) {
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS:
    case REDIS_REPLY_ERROR:
      if (!r->str || r->len < 0 || r->str[r->len] != '\0') std::abort();
      out += std::to_string(r->len) + ':' + std::string(r->str, static_cast<std::size_t>(r->len));
      break;
    case REDIS_REPLY_INTEGER:
      out += std::to_string(r->integer);
      break;
    case REDIS_REPLY_NIL:
      break;
    case REDIS_REPLY_ARRAY:
      if (r->elements > 0 && !r->element) std::abort();
      for (std::size_t i = 0; i < r->elements; ++i) describe(r->element[i], out, depth + 1);
      break;
    default:
      std::abort();  // hiredis 0.14 knows no other type
  }
  out += ')';
}

struct Reading {
  std::string replies;
  bool failed = false;
  std::string error;
};

// Feeds `in` in pieces of `piece` bytes (all at once when 0).
Reading read(std::string_view in, std::size_t piece) {
  Connection& c = connection();
  fresh_reader(c);
  Reading got;
  std::vector<Reply> out;
  try {
    if (piece == 0) {
      c.feed(in.data(), in.size(), out);
    } else {
      for (std::size_t at = 0; at < in.size(); at += piece)
        c.feed(in.data() + at, std::min(piece, in.size() - at), out);
    }
  } catch (const weave::TimeoutError&) {
    std::abort();
  } catch (const weave::IoError& e) {
    got.failed = true;
    got.error = e.what();
  }
  for (const Reply& r : out) describe(r.get(), got.replies, 0);
  return got;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;  // (feed() of 0 bytes means the server closed the connection)
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const Reading whole = read(in, 0);
  const Reading pieces = read(in, size <= 512 ? 1 : 1 + size / 512);
  if (whole.replies != pieces.replies || whole.failed != pieces.failed || whole.error != pieces.error) std::abort();

  // A first reply declaring an array over the bound (and within hiredis'
  // int range) is refused as such, and nothing is read before it. (hiredis
  // refuses a length with a leading zero or sign as a bad length instead.)
  if (in.size() > 1 && in[0] == '*') {
    const auto crlf = in.find("\r\n");
    const std::string_view digits = in.substr(1, crlf == std::string_view::npos ? 0 : crlf - 1);
    if (!digits.empty() && digits[0] != '0' && digits.size() <= 10 && digits.find_first_not_of("0123456789") == std::string_view::npos) {
      const long long n = std::stoll(std::string(digits));
      if (n > (1 << 20) && n <= 0x7fffffff &&
          (!whole.failed || !whole.replies.empty() || whole.error.find("over the bound") == std::string::npos))
        std::abort();
    }
  }
  return 0;
}
