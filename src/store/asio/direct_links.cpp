#include "store/asio/direct_links.h"

#include <sys/socket.h>

#include <algorithm>
#include "weave/asio.h"

namespace WEAVE_NAMESPACE::store {
namespace {

using Clock = std::chrono::steady_clock;

template <class A, class B>
bool same_pool(const A& a, const B& b) {
  return !a.owner_before(b) && !b.owner_before(a);
}

}  // namespace

DirectLink::DirectLink(const net::any_io_executor& ex, std::unique_ptr<Connection> conn, std::weak_ptr<Pool> home,
                       std::chrono::milliseconds timeout)
    : conn_(std::move(conn)), socket_(ex, conn_->fd()), fd_(conn_->fd()), home_(std::move(home)), timeout_(timeout) {
  socket_.non_blocking(true);  // for good: asio does not switch it per operation
}

DirectLink::~DirectLink() {
  if (socket_.is_open()) socket_.release();  // the connection closes it
}

void DirectLink::hand_back() noexcept {
  std::shared_ptr<Pool> pool = home_.lock();
  if (!pool || conn_->broken() || timed_out()) return;
  net::error_code ignored;
  socket_.non_blocking(false, ignored);
  socket_.release();
  pool->adopt(std::move(conn_));
}

void DirectLink::start_round_trip() noexcept {
  const auto deadline = Clock::now() + timeout_;
  deadline_.store(deadline.time_since_epoch().count(), std::memory_order_release);
}

void DirectLink::expire_if_late(std::int64_t now) noexcept {
  std::int64_t deadline = deadline_.load(std::memory_order_acquire);
  if (deadline <= 0 || now <= deadline) return;
  // (shutdown, not close: the descriptor stays the connection's; a write
  // after it fails with EPIPE, which write_some() never turns into SIGPIPE)
  if (deadline_.compare_exchange_strong(deadline, kTimedOut)) ::shutdown(fd_, SHUT_RDWR);
}

net::execution_context::id DirectLinks::id;

DirectLinks::DirectLinks(net::execution_context& context) : net::execution_context::service(context) {}

DirectLinks::~DirectLinks() = default;

DirectLinks& DirectLinks::of(const net::any_io_executor& ex) {
  net::execution_context& context = net::query(ex, net::execution::context);
  // The context's reactor must be made before this service: services shut
  // down newest first, and the links' sockets are the reactor's until then.
  if (!net::has_service<DirectLinks>(context)) net::steady_timer makes_the_reactor(ex);
  return net::use_service<DirectLinks>(context);
}

DirectLinks::Use DirectLinks::take(NodeExecutor& node, const net::any_io_executor& ex) {
  std::vector<std::unique_ptr<DirectLink>> stale;  // (closed after the lock is let go)
  detail::Guard g(mutex_);
  if (shut_) return {};
  Node& n = nodes_[&node];
  if (!same_pool(n.pool, node.pool())) {  // new here, or an executor that was at this address before
    stale.swap(n.idle);
    n = Node{node.pool(), {}, 0};
  }
  std::unique_ptr<DirectLink> link;
  if (!n.idle.empty()) {
    link = std::move(n.idle.back());
    n.idle.pop_back();
  } else {
    if (n.open >= node.pool_size()) return {};
    std::unique_ptr<Connection> conn = node.pool()->try_take();
    if (!conn) return {};
    link = std::make_unique<DirectLink>(ex, std::move(conn), node.pool(), node.endpoint().command_timeout);
    ++n.open;
  }
  busy_.push_back(link.get());
  if (!sweeping_) arm_sweep(ex);
  return Use(this, &node, std::move(link));
}

void DirectLinks::give_back(const void* node, std::unique_ptr<DirectLink> link, bool usable) {
  std::unique_ptr<DirectLink> closed;  // (closed after the lock is let go)
  detail::Guard g(mutex_);
  if (auto it = std::find(busy_.begin(), busy_.end(), link.get()); it != busy_.end()) {
    *it = busy_.back();
    busy_.pop_back();
  }
  auto n = nodes_.find(node);
  const bool current = n != nodes_.end() && same_pool(n->second.pool, link->home_);
  if (usable && current && !shut_ && !link->timed_out() && !link->connection().broken()) {
    n->second.idle.push_back(std::move(link));
    return;
  }
  if (current) --n->second.open;
  closed = std::move(link);
}

void DirectLinks::drop_idle(NodeExecutor& node) {
  std::vector<std::unique_ptr<DirectLink>> closed;
  detail::Guard g(mutex_);
  auto n = nodes_.find(&node);
  if (n == nodes_.end()) return;
  n->second.open -= static_cast<int>(n->second.idle.size());
  closed.swap(n->second.idle);
}

void DirectLinks::arm_sweep(const net::any_io_executor& ex) {
  auto shortest = std::chrono::milliseconds::max();
  for (const DirectLink* l : busy_) shortest = std::min(shortest, l->timeout_);
  const auto period = std::clamp<std::chrono::milliseconds>(shortest / 20, std::chrono::milliseconds(1),
                                                            std::chrono::milliseconds(20));
  if (!sweep_) sweep_.emplace(ex);
  sweep_->expires_after(period);
  sweep_->async_wait([this](net::error_code ec) {
    if (!ec) sweep();
  });
  sweeping_ = true;
}

void DirectLinks::sweep() {
  std::vector<std::unique_ptr<DirectLink>> closed;
  detail::Guard g(mutex_);
  if (shut_) return;
  const std::int64_t now = Clock::now().time_since_epoch().count();
  for (DirectLink* l : busy_) l->expire_if_late(now);
  // The links of executors destroyed since.
  for (auto n = nodes_.begin(); n != nodes_.end();) {
    if (!n->second.pool.expired()) {
      ++n;
      continue;
    }
    for (auto& l : n->second.idle) closed.push_back(std::move(l));
    n = nodes_.erase(n);
  }
  if (busy_.empty())
    sweeping_ = false;
  else
    arm_sweep(sweep_->get_executor());
}

void DirectLinks::shutdown() {
  std::vector<std::unique_ptr<DirectLink>> idle;  // (destroyed after the lock is let go)
  std::optional<net::steady_timer> timer;
  detail::Guard g(mutex_);
  shut_ = true;
  for (auto& [node, n] : nodes_)
    for (auto& l : n.idle) idle.push_back(std::move(l));
  nodes_.clear();
  timer.swap(sweep_);
  for (auto& l : idle) l->hand_back();  // (the pool's own lock: taken after this one, never the other way)
}

}  // namespace weave::store
