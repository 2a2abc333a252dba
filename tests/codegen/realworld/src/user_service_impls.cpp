// The two implementations of users::v1::UserService (user_service_impls.h).
#include "user_service_impls.h"

#include <cstdint>
#include <functional>
#include <string>

#include "realworld/probe.h"

namespace users::v1 {

using ::minigrpc::ServerContext;
using ::minigrpc::Status;
using ::minigrpc::StatusCode;

// --- InMemoryUserService -----------------------------------------------------

Status InMemoryUserService::GetUser(ServerContext*, const GetUserRequest* req, GetUserResponse* resp) {
  realworld::Probe::note("memory.GetUser " + req->id());
  std::lock_guard<std::mutex> guard(mutex_);
  auto it = users_.find(req->id());
  if (it == users_.end()) return Status(StatusCode::NOT_FOUND, "no user " + req->id());
  *resp->mutable_user() = it->second;
  return Status::OK;
}

Status InMemoryUserService::UpdateUser(ServerContext*, const UpdateUserRequest* req, User* resp) {
  realworld::Probe::note("memory.UpdateUser " + req->user().id());
  if (req->user().id().empty()) return Status(StatusCode::INVALID_ARGUMENT, "user.id is required");
  std::lock_guard<std::mutex> guard(mutex_);
  User& u = users_[req->user().id()];
  u = req->user();
  u.set_served_by("memory");
  *resp = u;
  return Status::OK;
}

Status InMemoryUserService::DeleteUser(ServerContext*, const DeleteUserRequest* req, Empty*) {
  realworld::Probe::note("memory.DeleteUser " + req->id());
  std::lock_guard<std::mutex> guard(mutex_);
  return users_.erase(req->id()) ? Status::OK : Status(StatusCode::NOT_FOUND, "no user " + req->id());
}

Status InMemoryUserService::ListUsers(ServerContext*, const ListUsersRequest* req, ListUsersResponse* resp) {
  realworld::Probe::note("memory.ListUsers");
  std::lock_guard<std::mutex> guard(mutex_);
  for (const auto& [id, user] : users_) {
    if (req->page_size() > 0 && static_cast<std::int32_t>(resp->users().size()) >= req->page_size()) break;
    *resp->add_users() = user;
  }
  return Status::OK;
}

// --- ShardedUserService ------------------------------------------------------

std::size_t ShardedUserService::ShardOf(const std::string& id) const {
  return std::hash<std::string>{}(id) % shards_.size();
}

Status ShardedUserService::GetUser(ServerContext*, const GetUserRequest* req, GetUserResponse* resp) {
  realworld::Probe::note("sharded.GetUser " + req->id());
  Shard& shard = shards_[ShardOf(req->id())];
  std::lock_guard<std::mutex> guard(shard.mutex);
  auto it = shard.users.find(req->id());
  if (it == shard.users.end()) return Status(StatusCode::NOT_FOUND, "no user " + req->id());
  *resp->mutable_user() = it->second;
  return Status::OK;
}

Status ShardedUserService::UpdateUser(ServerContext*, const UpdateUserRequest* req, User* resp) {
  realworld::Probe::note("sharded.UpdateUser " + req->user().id());
  if (req->user().id().empty()) return Status(StatusCode::INVALID_ARGUMENT, "user.id is required");
  const std::size_t n = ShardOf(req->user().id());
  std::lock_guard<std::mutex> guard(shards_[n].mutex);
  User& u = shards_[n].users[req->user().id()];
  u = req->user();
  u.set_served_by("shard-" + std::to_string(n));
  *resp = u;
  return Status::OK;
}

Status ShardedUserService::DeleteUser(ServerContext*, const DeleteUserRequest* req, Empty*) {
  realworld::Probe::note("sharded.DeleteUser " + req->id());
  Shard& shard = shards_[ShardOf(req->id())];
  std::lock_guard<std::mutex> guard(shard.mutex);
  return shard.users.erase(req->id()) ? Status::OK : Status(StatusCode::NOT_FOUND, "no user " + req->id());
}

Status ShardedUserService::ListUsers(ServerContext*, const ListUsersRequest* req, ListUsersResponse* resp) {
  realworld::Probe::note("sharded.ListUsers");
  for (Shard& shard : shards_) {
    std::lock_guard<std::mutex> guard(shard.mutex);
    for (const auto& [id, user] : shard.users) {
      if (req->page_size() > 0 && static_cast<std::int32_t>(resp->users().size()) >= req->page_size()) {
        return Status::OK;
      }
      *resp->add_users() = user;
    }
  }
  return Status::OK;
}

}  // namespace users::v1
