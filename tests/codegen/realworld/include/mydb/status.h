// mydb/status.h — the result of an operation (ok, or a code plus message) and
// Slice, a non-owning view of bytes.
#ifndef MYDB_INCLUDE_STATUS_H_
#define MYDB_INCLUDE_STATUS_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

#include "mydb/export.h"

namespace MYDB_NAMESPACE {

class MYLIB_EXPORT Status {
 public:
  enum class Code : unsigned char { kOk = 0, kNotFound = 1, kCorruption = 2, kInvalidArgument = 3, kIOError = 4 };

  Status() noexcept = default;
  static Status OK() { return Status(); }
  static Status NotFound(std::string_view msg) { return Status(Code::kNotFound, msg); }
  static Status Corruption(std::string_view msg) { return Status(Code::kCorruption, msg); }
  static Status InvalidArgument(std::string_view msg) { return Status(Code::kInvalidArgument, msg); }
  static Status IOError(std::string_view msg) { return Status(Code::kIOError, msg); }

  bool ok() const { return code_ == Code::kOk; }
  bool IsNotFound() const { return code_ == Code::kNotFound; }
  bool IsIOError() const { return code_ == Code::kIOError; }
  Code code() const { return code_; }

  // "OK", or "<code name>: <message>"; verbose adds the numeric code.
  std::string ToString(bool verbose = false) const;

 private:
  Status(Code code, std::string_view msg) : code_(code), msg_(msg) {}
  Code code_ = Code::kOk;
  std::string msg_;
};

class MYLIB_EXPORT Slice {
 public:
  Slice() = default;
  Slice(const char* d, std::size_t n) : data_(d), size_(n) {}
  Slice(const std::string& s) : data_(s.data()), size_(s.size()) {}  // NOLINT: implicit by design
  Slice(const char* s) : data_(s), size_(std::char_traits<char>::length(s)) {}  // NOLINT

  const char* data() const { return data_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::string ToString() const { return std::string(data_, size_); }

 private:
  const char* data_ = "";
  std::size_t size_ = 0;
};

}  // namespace MYDB_NAMESPACE

#endif  // MYDB_INCLUDE_STATUS_H_
