// The real (un-woven) implementation of mystrings/string_builder.h.
#include "mystrings/string_builder.h"

#include <charconv>
#include <cstdio>
#include <string>

#include "realworld/probe.h"

namespace mystrings {

StringBuilder& StringBuilder::Append(const std::string& s) {
  realworld::Probe::note("Append(string) " + s);
  buf_ += s;
  return *this;
}
StringBuilder& StringBuilder::Append(std::string_view s) {
  realworld::Probe::note("Append(string_view)");
  buf_ += s;
  return *this;
}
StringBuilder& StringBuilder::Append(const char* s) {
  realworld::Probe::note("Append(const char*)");
  buf_ += s;
  return *this;
}
StringBuilder& StringBuilder::Append(char c, std::size_t count) {
  realworld::Probe::note("Append(char) x" + std::to_string(count));
  buf_.append(count, c);
  return *this;
}
StringBuilder& StringBuilder::Append(int value, int base) {
  realworld::Probe::note("Append(int)");
  char digits[40];
  auto r = std::to_chars(digits, digits + sizeof digits, value, base);
  buf_.append(digits, r.ptr);
  return *this;
}
StringBuilder& StringBuilder::Append(long value) {
  realworld::Probe::note("Append(long)");
  buf_ += std::to_string(value);
  return *this;
}
StringBuilder& StringBuilder::Append(unsigned long long value) {
  realworld::Probe::note("Append(unsigned long long)");
  buf_ += std::to_string(value);
  return *this;
}
StringBuilder& StringBuilder::Append(double value, int precision) {
  realworld::Probe::note("Append(double)");
  char digits[64];
  std::snprintf(digits, sizeof digits, "%.*f", precision, value);
  buf_ += digits;
  return *this;
}
StringBuilder& StringBuilder::Append(bool b) {
  realworld::Probe::note("Append(bool)");
  buf_ += b ? "true" : "false";
  return *this;
}
StringBuilder& StringBuilder::Append(const StringBuilder& other) {
  realworld::Probe::note("Append(StringBuilder)");
  buf_ += other.buf_;
  return *this;
}
std::size_t StringBuilder::Append(std::string* out) const {
  realworld::Probe::note("Append(string*) const");
  *out += buf_;
  return buf_.size();
}
std::size_t StringBuilder::Append(std::string* in) {
  realworld::Probe::note("Append(string*)");
  buf_ += *in;
  const std::size_t n = in->size();
  in->clear();
  return n;
}
void StringBuilder::Clear() noexcept(false) {
  realworld::Probe::note("Clear");
  buf_.clear();
}
StringBuilder& StringBuilder::AppendFormat(const char* fmt, long arg) {
  char text[128];
  std::snprintf(text, sizeof text, fmt, arg);
  buf_ += text;
  return *this;
}

void StrAppend(std::string* dest, std::string_view a) {
  realworld::Probe::note("StrAppend/1");
  dest->append(a);
}
void StrAppend(std::string* dest, std::string_view a, std::string_view b) {
  realworld::Probe::note("StrAppend/2");
  dest->append(a).append(b);
}
void StrAppend(std::string* dest, std::string_view a, std::string_view b, std::string_view c) {
  realworld::Probe::note("StrAppend/3");
  dest->append(a).append(b).append(c);
}

}  // namespace mystrings
