// minigrpc/minigrpc.h — the few runtime types a generated service names
// (a stand-in for <grpcpp/grpcpp.h>): Status, StatusCode, ServerContext.
#ifndef MINIGRPC_MINIGRPC_H_
#define MINIGRPC_MINIGRPC_H_

#include <string>
#include <utility>

namespace minigrpc {

enum class StatusCode { OK = 0, NOT_FOUND = 5, ALREADY_EXISTS = 6, INVALID_ARGUMENT = 3, UNAVAILABLE = 14 };

class Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}
  static const Status& OK;

  bool ok() const { return code_ == StatusCode::OK; }
  StatusCode error_code() const { return code_; }
  const std::string& error_message() const { return message_; }

 private:
  StatusCode code_ = StatusCode::OK;
  std::string message_;
};

class ServerContext {
 public:
  explicit ServerContext(std::string peer = "ipv4:127.0.0.1:0") : peer_(std::move(peer)) {}
  // "ipv4:10.0.0.7:52011"
  const std::string& peer() const { return peer_; }

 private:
  std::string peer_;
};

}  // namespace minigrpc

#endif  // MINIGRPC_MINIGRPC_H_
