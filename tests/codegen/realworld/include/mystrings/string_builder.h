// mystrings/string_builder.h — an appendable text buffer with the broad
// overload set of a string/formatting library (absl::StrAppend, fmt's
// memory_buffer, folly::fbstring). Builders can be shared between threads
// of one request; the annotated overloads serialise on a per-builder key,
// the rest pass straight through.
#ifndef MYSTRINGS_STRING_BUILDER_H_
#define MYSTRINGS_STRING_BUILDER_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

namespace mystrings {

class StringBuilder {
 public:
  explicit StringBuilder(std::string name = "sb") : name_(std::move(name)) {}

  const std::string& name() const { return name_; }
  const std::string& str() const { return buf_; }
  std::size_t size() const { return buf_.size(); }

  // --- the Append overload set -------------------------------------------
  [[lock(key="sb:<this.name()>")]]
  StringBuilder& Append(const std::string& s);
  StringBuilder& Append(std::string_view s);
  StringBuilder& Append(const char* s);
  [[lock(key="sb:<this.name()>:char:<c>")]]
  StringBuilder& Append(char c, std::size_t count = 1);
  [[audit(event="append.int", subject="<value>/<base>")]]
  StringBuilder& Append(int value, int base = 10);
  StringBuilder& Append(long value);
  StringBuilder& Append(unsigned long long value);
  [[lock]]  // default key: the qualified name and the parameter types
  StringBuilder& Append(double value, int precision = 6);
  StringBuilder& Append(bool b);
  StringBuilder& Append(const StringBuilder& other);

  // Same parameters, const and non-const: appending the buffer *to* `out`
  // only reads the builder; the non-const one moves `*in` into it.
  [[lock(key="sb:<this.name()>:export", type=read)]]
  std::size_t Append(std::string* out) const;
  [[lock(key="sb:<this.name()>:import", type=write)]]
  std::size_t Append(std::string* in);

  // --- other names ---------------------------------------------------------
  [[lock(key="sb:<this.name()>")]]
  void Clear() noexcept(false);
  StringBuilder& AppendFormat(const char* fmt, long arg);

 private:
  std::string name_;
  std::string buf_;
};

// Free-function overloads (absl::StrAppend style).
[[lock(key="str:<dest->size()>")]]
void StrAppend(std::string* dest, std::string_view a);
void StrAppend(std::string* dest, std::string_view a, std::string_view b);
[[lock(key="str:<dest->size()>:<a>|<b>|<c>")]]
void StrAppend(std::string* dest, std::string_view a, std::string_view b, std::string_view c);

}  // namespace mystrings

#endif  // MYSTRINGS_STRING_BUILDER_H_
