// users/v1/user_service.grpc.pb.h — the service interface of
// users/v1/user_service.proto, shaped like grpc_cpp_plugin's output: one
// abstract class, every RPC a pure virtual method taking the server
// context, the request and the response to fill.
//
// Annotated for Weave. An interface has no body to wrap, so it is served by
// a decorator around any implementation:
//   std::shared_ptr<UserService> svc =
//       weave::decorate<UserService>(std::make_shared<InMemoryUserService>());
#ifndef USERS_V1_USER_SERVICE_GRPC_PB_H_
#define USERS_V1_USER_SERVICE_GRPC_PB_H_

#include "minigrpc/minigrpc.h"
#include "users/v1/user_service.pb.h"

namespace users {
namespace v1 {

class UserService {
 public:
  virtual ~UserService() {}

  // rpc GetUser(GetUserRequest) returns (GetUserResponse);
  [[lock(key="user:<req->id()>")]]
  virtual ::minigrpc::Status GetUser(::minigrpc::ServerContext* ctx, const ::users::v1::GetUserRequest* req,
                                     ::users::v1::GetUserResponse* resp) = 0;

  // rpc UpdateUser(UpdateUserRequest) returns (User);
  [[audit(event="users.update", subject="<ctx->peer()>", order=-1)]]
  [[lock(key="user:<req->user().id()>", wait=2s)]]
  virtual ::minigrpc::Status UpdateUser(::minigrpc::ServerContext* ctx, const ::users::v1::UpdateUserRequest* req,
                                        ::users::v1::User* resp) = 0;

  // rpc DeleteUser(DeleteUserRequest) returns (google.protobuf.Empty);
  [[lock(keys=["tenant:<req->tenant()>", "user:<req->id()>"], wait=2s)]]
  virtual ::minigrpc::Status DeleteUser(::minigrpc::ServerContext* ctx, const ::users::v1::DeleteUserRequest* req,
                                        ::users::v1::Empty* resp) = 0;

  // rpc ListUsers(ListUsersRequest) returns (ListUsersResponse); not annotated:
  // the decorator forwards it as is.
  virtual ::minigrpc::Status ListUsers(::minigrpc::ServerContext* ctx, const ::users::v1::ListUsersRequest* req,
                                       ::users::v1::ListUsersResponse* resp) = 0;
};

}  // namespace v1
}  // namespace users

#endif  // USERS_V1_USER_SERVICE_GRPC_PB_H_
