#include "inventory.h"

#include <algorithm>
#include <cstdio>
#include <thread>

#include "weave/lease.h"

namespace fencing {

bool FencedStore::write(const std::string& key, int value, std::uint64_t token) {
  std::lock_guard lock(mutex_);
  auto& row = rows_[key];
  if (token < row.first) {
    std::printf("  store: REJECTED %s=%d with token %llu (newest seen: %llu)\n", key.c_str(),
                value, static_cast<unsigned long long>(token),
                static_cast<unsigned long long>(row.first));
    return false;
  }
  row = {token, value};
  std::printf("  store: accepted %s=%d with token %llu\n", key.c_str(), value,
              static_cast<unsigned long long>(token));
  return true;
}

int FencedStore::read(const std::string& key, std::uint64_t token) {
  std::lock_guard lock(mutex_);
  auto& row = rows_[key];
  row.first = std::max(row.first, token);
  return row.second;
}

int FencedStore::value(const std::string& key) const {
  std::lock_guard lock(mutex_);
  auto it = rows_.find(key);
  return it == rows_.end() ? 0 : it->second.second;
}

bool Inventory::restock(const std::string& sku, int qty, std::chrono::milliseconds pause) {
  const weave::Lease* lease = weave::current_lease();
  const std::uint64_t token = lease->fencing_token();
  const int current = store_.read(sku, token);
  std::this_thread::sleep_for(pause);  // a GC pause, a slow disk, a stopped VM...
  if (lease->stop_token().stop_requested())
    std::printf("  restock(%s, token %llu): my lease was lost while I paused; writing anyway "
                "to show the fence\n",
                sku.c_str(), static_cast<unsigned long long>(token));
  return store_.write(sku, current + qty, token);
}

}  // namespace fencing
