// Two implementations of users::v1::UserService (user_service.grpc.pb.h):
// one table, or N shards. Neither knows about Weave; the decorator adds the
// locks around them.
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "users/v1/user_service.grpc.pb.h"

namespace users::v1 {

class InMemoryUserService : public UserService {
 public:
  ::minigrpc::Status GetUser(::minigrpc::ServerContext* ctx, const GetUserRequest* req,
                             GetUserResponse* resp) override;
  ::minigrpc::Status UpdateUser(::minigrpc::ServerContext* ctx, const UpdateUserRequest* req,
                                User* resp) override;
  ::minigrpc::Status DeleteUser(::minigrpc::ServerContext* ctx, const DeleteUserRequest* req,
                                Empty* resp) override;
  ::minigrpc::Status ListUsers(::minigrpc::ServerContext* ctx, const ListUsersRequest* req,
                               ListUsersResponse* resp) override;

 private:
  std::mutex mutex_;
  std::map<std::string, User> users_;
};

class ShardedUserService final : public UserService {
 public:
  explicit ShardedUserService(std::size_t shards) : shards_(shards) {}
  ::minigrpc::Status GetUser(::minigrpc::ServerContext* ctx, const GetUserRequest* req,
                             GetUserResponse* resp) override;
  ::minigrpc::Status UpdateUser(::minigrpc::ServerContext* ctx, const UpdateUserRequest* req,
                                User* resp) override;
  ::minigrpc::Status DeleteUser(::minigrpc::ServerContext* ctx, const DeleteUserRequest* req,
                                Empty* resp) override;
  ::minigrpc::Status ListUsers(::minigrpc::ServerContext* ctx, const ListUsersRequest* req,
                               ListUsersResponse* resp) override;

 private:
  struct Shard {
    std::mutex mutex;
    std::map<std::string, User> users;
  };
  std::size_t ShardOf(const std::string& id) const;
  std::vector<Shard> shards_;
};

}  // namespace users::v1
