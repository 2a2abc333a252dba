// One caller's blocking pops of one list (BLPOP <key> 0) on a connection of
// its own, borrowed from the node's pool of waiting connections: a thread
// waiting for what a script pushes there wakes when it arrives, with no
// other thread in between (a Pub/Sub message goes through the subscriber's
// reader first). A pop still pending at a deadline stays pending for the
// next wait; one pending when the BlockingPop ends closes the connection.
//
//   std::unique_ptr<BlockingPop> pop = exec.blocking_pop(inbox);   // null: none free
//   if (std::optional<std::string> m = pop->pop_until(deadline)) ...
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "store/connection.h"

namespace WEAVE_NAMESPACE::store {

class BlockingPop {
 public:
  BlockingPop(std::shared_ptr<Pool> pool, Pool::Borrowed conn, std::string key);
  ~BlockingPop();
  BlockingPop(const BlockingPop&) = delete;
  BlockingPop& operator=(const BlockingPop&) = delete;

  // The next element pushed on the list, or nullopt at `deadline` (the pop
  // stays pending). Throws IoError when the connection failed, ReplyError
  // for an error reply (MOVED: the key's slot moved); either way this
  // BlockingPop is done and a new one is needed.
  std::optional<std::string> pop_until(std::chrono::steady_clock::time_point deadline);
  const std::string& key() const noexcept { return key_; }

 private:
  std::shared_ptr<Pool> pool_;  // (the connection goes back to it)
  Pool::Borrowed conn_;
  std::string key_;
  bool pending_ = false;
};

}  // namespace weave::store
