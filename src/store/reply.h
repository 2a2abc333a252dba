// What a feature reads of a server's answer: its kind and its value, never
// hiredis' struct. A store::Reply is opaque outside src/store/*.cpp, the only
// files that include hiredis' header (elsewhere redisReply is incomplete:
// reading a field does not compile); a feature wraps each reply the executor
// hands back:
//
//   store::ReplyView r(exec->command(store::Command{"GET", k}, k, "cache get"), "cache get");
//   if (r.nil()) return miss;
//   std::string_view entry = r.text();      // anything else: IoError "unexpected reply to cache get"
#pragma once

#include <cstddef>
#include <string_view>

#include "store/connection.h"

namespace WEAVE_NAMESPACE::store {

class ReplyView {
 public:
  enum class Kind { nil, integer, text, array, error, other };

  // `what` names the request in errors ("acquire", "cache get"); it must outlive the view.
  ReplyView(const Reply& reply, const char* what) noexcept : r_(reply.get()), what_(what) {}

  Kind kind() const noexcept;
  bool nil() const noexcept { return kind() == Kind::nil; }
  bool is_integer() const noexcept { return kind() == Kind::integer; }
  bool is_text() const noexcept { return kind() == Kind::text; }
  bool is_array() const noexcept { return kind() == Kind::array; }

  // The value, when the reply is of that kind; otherwise unexpected().
  long long integer() const;
  // An integer, or a text holding one (a Lua number the script returned as a string).
  long long number() const;
  // A bulk string or a status.
  std::string_view text() const;
  // The text of an error reply ("NOPERM ..."); empty for any other reply.
  std::string_view error() const noexcept;
  // The number of elements of an array reply.
  std::size_t size() const;
  // Element i of an array reply (unexpected() when there is none).
  ReplyView operator[](std::size_t i) const;
  // The same reply, named `what` in errors: an element that answers a
  // request of its own (one reply carrying several requests' answers).
  ReplyView renamed(const char* what) const noexcept { return ReplyView(r_, what); }

  // An error reply throws ReplyError (its code, and `what`); anything else
  // IoError "unexpected reply to <what>".
  [[noreturn]] void unexpected() const;

 private:
  ReplyView(const redisReply* r, const char* what) noexcept : r_(r), what_(what) {}
  const redisReply* r_;
  const char* what_;
};

}  // namespace weave::store
