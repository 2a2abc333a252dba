#include "store/blocking_pop.h"

#include <hiredis/hiredis.h>
#include <poll.h>

#include <cerrno>
#include <vector>

#include "store/executor.h"

namespace WEAVE_NAMESPACE::store {

BlockingPop::BlockingPop(std::shared_ptr<Pool> pool, Pool::Borrowed conn, std::string key)
    : pool_(std::move(pool)), conn_(std::move(conn)), key_(std::move(key)) {}

BlockingPop::~BlockingPop() {
  // The server may still hand a pushed element to this connection: nobody
  // else may read it.
  if (pending_) conn_.close();
}

std::optional<std::string> BlockingPop::pop_until(std::chrono::steady_clock::time_point deadline) {
  if (!pending_) {
    conn_->append(Command{"BLPOP", key_, "0"});  // (0: no server timeout; ours is `deadline`)
    conn_->flush();
    pending_ = true;
  }
  std::vector<Reply> replies;
  while (replies.empty()) {
    const auto left = deadline - std::chrono::steady_clock::now();
    if (left <= left.zero()) return std::nullopt;
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
    const timespec wait{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
    pollfd p{conn_->fd(), POLLIN, 0};
    const int ready = ::ppoll(&p, 1, &wait, nullptr);
    try {
      if (ready < 0 && errno != EINTR) conn_->lost("waiting for a blocking pop");
      if (ready > 0) conn_->read_available(replies);  // (throws IoError when the server closed it)
    } catch (...) {
      pending_ = false;  // (the connection failed: its pool drops it, counted as a failure)
      pool_->drop_idle();  // the idle ones probably died with it (a server restart)
      throw;
    }
  }
  pending_ = false;
  const redisReply* r = replies.front().get();
  if (r->type == REDIS_REPLY_ARRAY && r->elements == 2 && r->element[1]->type == REDIS_REPLY_STRING)
    return std::string(r->element[1]->str, r->element[1]->len);
  bad_reply(r, "blocking pop");
}

}  // namespace weave::store
