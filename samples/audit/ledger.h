// A ledger whose methods carry a user-defined annotation (`audit`, described
// in audit.json, implemented by an interceptor registered in main.cpp) next to
// the built-in `lock`.
#pragma once

#include <map>
#include <mutex>
#include <string>

namespace bank {

struct Account {
  std::string id;
  std::string owner;
};

class Ledger {
 public:
  virtual ~Ledger() = default;

  // audit runs outside the lock (order=-1), so a call refused for a busy lock
  // is audited too.
  [[audit(event="credit <account.id> by <cents>", order=-1), lock(key="acct:<account.id>", wait=2s)]]
  virtual void credit(const Account& account, int cents);

  [[audit(event="close <account.id> of <account.owner>", level=warn)]]
  virtual void close(const Account& account);

  int balance(const std::string& id) const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, int> balances_;
};

}  // namespace bank
