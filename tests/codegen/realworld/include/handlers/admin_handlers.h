// handlers/admin_handlers.h — an admin endpoint whose handlers are declared
// (and defined) through macros, as RPC frameworks and command tables
// commonly do. Each annotation stands in front of a macro that expands to
// the whole declaration.
#ifndef HANDLERS_ADMIN_HANDLERS_H_
#define HANDLERS_ADMIN_HANDLERS_H_

#include <map>
#include <mutex>
#include <string>

// Declares a handler: takes the raw request, returns an HTTP-like status.
#define DECLARE_HANDLER(name) virtual int name(const std::string& request)
// Defines a handler declared with DECLARE_HANDLER.
#define DEFINE_HANDLER(cls, name) int cls::name(const std::string& request)

namespace handlers {

class AdminHandlers {
 public:
  virtual ~AdminHandlers() = default;

  [[lock(key="h:<request>")]] DECLARE_HANDLER(get_user);
  [[lock(key="h:<request>", wait=1s)]] DECLARE_HANDLER(put_user);

  // Two annotations, and a fallback that answers 503 when the key is busy.
  [[audit(event="admin.drop_user", subject="<request>", level=warn)]]
  [[lock(key="h:<request>", on_busy=fallback, fallback=busy)]]
  DECLARE_HANDLER(drop_user);

  // Not annotated: no interception.
  DECLARE_HANDLER(ping);

  int busy(const std::string& request);

  // How many requests each handler served, by handler name.
  std::map<std::string, int> served() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, int> served_;
  std::map<std::string, std::string> users_;
};

}  // namespace handlers

#endif  // HANDLERS_ADMIN_HANDLERS_H_
