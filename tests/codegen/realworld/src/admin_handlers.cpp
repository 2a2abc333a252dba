// The real (un-woven) implementation of handlers/admin_handlers.h.
#include "handlers/admin_handlers.h"

#include <string>

#include "realworld/probe.h"

namespace handlers {

DEFINE_HANDLER(AdminHandlers, get_user) {
  realworld::Probe::note("get_user " + request);
  std::lock_guard<std::mutex> guard(mutex_);
  ++served_["get_user"];
  return users_.count(request) ? 200 : 404;
}

DEFINE_HANDLER(AdminHandlers, put_user) {
  realworld::Probe::note("put_user " + request);
  std::lock_guard<std::mutex> guard(mutex_);
  ++served_["put_user"];
  users_[request] = "created";
  return 201;
}

DEFINE_HANDLER(AdminHandlers, drop_user) {
  realworld::Probe::note("drop_user " + request);
  std::lock_guard<std::mutex> guard(mutex_);
  ++served_["drop_user"];
  return users_.erase(request) ? 204 : 404;
}

DEFINE_HANDLER(AdminHandlers, ping) {
  realworld::Probe::note("ping " + request);
  return 200;
}

int AdminHandlers::busy(const std::string& request) {
  realworld::Probe::note("busy " + request);
  return 503;
}

std::map<std::string, int> AdminHandlers::served() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return served_;
}

}  // namespace handlers
