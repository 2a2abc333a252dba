#include "ledger.h"

#include <stdexcept>
#include <thread>

namespace bank {

void Ledger::credit(const Account& account, int cents) {
  if (cents <= 0) throw std::invalid_argument("credit must be positive");
  int now;
  {
    std::lock_guard g(mutex_);
    now = balances_[account.id];
  }
  std::this_thread::yield();  // a read-modify-write only the lock keeps whole
  std::lock_guard g(mutex_);
  balances_[account.id] = now + cents;
}

void Ledger::close(const Account& account) {
  std::lock_guard g(mutex_);
  balances_.erase(account.id);
}

int Ledger::balance(const std::string& id) const {
  std::lock_guard g(mutex_);
  auto it = balances_.find(id);
  return it == balances_.end() ? 0 : it->second;
}

}  // namespace bank
