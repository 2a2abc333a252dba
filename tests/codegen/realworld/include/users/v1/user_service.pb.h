// users/v1/user_service.pb.h — the messages of users/v1/user_service.proto,
// shaped like protoc's C++ output (accessors, set_, mutable_), hand-written.
#ifndef USERS_V1_USER_SERVICE_PB_H_
#define USERS_V1_USER_SERVICE_PB_H_

#include <cstdint>
#include <string>
#include <vector>

namespace users {
namespace v1 {

class User final {
 public:
  const std::string& id() const { return id_; }
  void set_id(const std::string& value) { id_ = value; }
  const std::string& display_name() const { return display_name_; }
  void set_display_name(const std::string& value) { display_name_ = value; }
  const std::string& served_by() const { return served_by_; }
  void set_served_by(const std::string& value) { served_by_ = value; }

 private:
  std::string id_, display_name_, served_by_;
};

class GetUserRequest final {
 public:
  const std::string& id() const { return id_; }
  void set_id(const std::string& value) { id_ = value; }

 private:
  std::string id_;
};

class GetUserResponse final {
 public:
  const User& user() const { return user_; }
  User* mutable_user() { return &user_; }

 private:
  User user_;
};

class UpdateUserRequest final {
 public:
  const User& user() const { return user_; }
  User* mutable_user() { return &user_; }

 private:
  User user_;
};

class DeleteUserRequest final {
 public:
  const std::string& id() const { return id_; }
  void set_id(const std::string& value) { id_ = value; }
  const std::string& tenant() const { return tenant_; }
  void set_tenant(const std::string& value) { tenant_ = value; }

 private:
  std::string id_, tenant_;
};

class ListUsersRequest final {
 public:
  std::int32_t page_size() const { return page_size_; }
  void set_page_size(std::int32_t value) { page_size_ = value; }

 private:
  std::int32_t page_size_ = 0;
};

class ListUsersResponse final {
 public:
  const std::vector<User>& users() const { return users_; }
  User* add_users() { return &users_.emplace_back(); }

 private:
  std::vector<User> users_;
};

class Empty final {};

}  // namespace v1
}  // namespace users

#endif  // USERS_V1_USER_SERVICE_PB_H_
