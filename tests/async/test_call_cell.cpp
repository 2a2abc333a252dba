// CallCell (src/async/context_executor.h), the cancellation protocol of an
// asynchronous call, driven transition by transition as docs/async.md
// ("The call's cell as a state machine") lists them. The call is played by
// hand: enter()/leave() are its handlers, the cell's slot (or a retargeted
// signal) records what is emitted, on which thread, and when.
#include <catch2/catch.hpp>

#include "weave/asio.h"
#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "async/context_executor.h"
#include "core/lease_core.h"

namespace net = weave::net;
using weave::detail::CallCell;
using weave::detail::ContextLink;
using weave::detail::LeaseCore;
using namespace std::chrono_literals;

namespace {

constexpr auto kTerminal = net::cancellation_type::terminal;

// What the call's pending operation was told: each emission, and the thread.
struct Emissions {
  std::mutex mutex;
  std::vector<net::cancellation_type> types;
  std::vector<std::thread::id> threads;
  // Runs inside the emission, before it ends (to hold it there).
  std::function<void()> during;

  void attach(net::cancellation_slot slot) {
    slot.assign([this](net::cancellation_type t) {
      {
        std::lock_guard g(mutex);
        types.push_back(t);
        threads.push_back(std::this_thread::get_id());
      }
      if (during) during();
    });
  }
  std::size_t count() {
    std::lock_guard g(mutex);
    return types.size();
  }
};

// A call played by hand: a cell bound to `io`, its generation, its slot
// recorded. retire() ends it.
struct Call {
  net::io_context io;
  std::shared_ptr<CallCell> cell = CallCell::acquire();
  std::uint64_t gen = 0;
  Emissions emitted;

  Call() {
    cell->bind(io);
    std::lock_guard g(cell->lock);
    gen = cell->generation;
  }
  ~Call() {
    if (cell) CallCell::retire(std::move(cell));
  }
  void start() { emitted.attach(cell->slot()); }
  // One handler of the call on this thread: enter(), `body`, leave().
  template <class F>
  void handler(F&& body) {
    std::shared_ptr<const ContextLink> context;
    REQUIRE(cell->enter(gen, context));
    body();
    cell->leave(gen);
  }
  // `f` run on the thread that runs the call's io_context.
  template <class F>
  void on_io_thread(F&& f) {
    net::post(io, std::forward<F>(f));
    io.restart();
    io.run();
  }
};

// A lease whose loss the call listens to.
struct TestLease final : LeaseCore {
  TestLease()
      : LeaseCore([](Terms& terms) {
          terms.key = "cell-test";
          terms.lease_time = 60s;
          terms.acquired_at = Clock::now();
        }) {
    set_expires_at(Clock::now() + 60s);
  }
};

// A cancellation emitted on another thread (the call's io thread there) and
// held inside the emission until let_go().
class HeldEmission {
 public:
  explicit HeldEmission(Call& call) : go_(let_go_.get_future().share()) {
    call.emitted.during = [this] {
      inside_.set_value();
      go_.wait();
    };
    emitter_ = std::thread([&call] { call.on_io_thread([&call] { call.cell->cancel(call.gen, kTerminal, false); }); });
    inside_.get_future().wait();
  }
  ~HeldEmission() {
    if (emitter_.joinable()) let_go();
  }
  void let_go() {
    let_go_.set_value();
    emitter_.join();
  }

 private:
  std::promise<void> inside_, let_go_;
  std::shared_future<void> go_;
  std::thread emitter_;
};

}  // namespace

TEST_CASE("call cell: suspended, a cancellation from the io thread is emitted at once, on that thread", "[async][cell]") {
  Call call;
  call.start();
  call.on_io_thread([&] {
    call.cell->cancel(call.gen, kTerminal, /*loss=*/false);
    CHECK(call.emitted.count() == 1);  // inline, before cancel() returned
  });
  CHECK(call.emitted.count() == 1);
  CHECK(call.emitted.types[0] == kTerminal);
}

TEST_CASE("call cell: suspended, a cancellation from another thread waits for a handler posted to the call", "[async][cell]") {
  Call call;
  call.start();
  std::thread([&] { call.cell->cancel(call.gen, kTerminal, false); }).join();
  CHECK(call.emitted.count() == 0);  // a slot is not thread-safe: nothing from the foreign thread
  call.io.restart();
  call.io.run();  // the posted handler's end emits
  REQUIRE(call.emitted.count() == 1);
  CHECK(call.emitted.threads[0] == std::this_thread::get_id());
}

TEST_CASE("call cell: running, a cancellation is emitted as the running handler ends, by its thread", "[async][cell]") {
  Call call;
  call.start();
  call.handler([&] {
    std::thread([&] { call.cell->cancel(call.gen, kTerminal, false); }).join();
    CHECK(call.emitted.count() == 0);  // the handler still runs
  });
  REQUIRE(call.emitted.count() == 1);
  CHECK(call.emitted.threads[0] == std::this_thread::get_id());
  // Nothing was posted for it: running the io_context emits nothing more.
  call.io.restart();
  call.io.run();
  CHECK(call.emitted.count() == 1);
}

TEST_CASE("call cell: nested handlers emit only as the outermost ends", "[async][cell]") {
  Call call;
  call.start();
  call.handler([&] {
    call.handler([&] { call.cell->cancel(call.gen, kTerminal, false); });
    CHECK(call.emitted.count() == 0);
  });
  CHECK(call.emitted.count() == 1);
}

TEST_CASE("call cell: an ended call hears nothing: its cancellations, handlers and posted wake-ups are dropped", "[async][cell]") {
  Call call;
  call.start();
  const std::uint64_t ended = call.gen;
  std::thread([&] { call.cell->cancel(ended, kTerminal, false); }).join();  // posts a wake-up
  std::shared_ptr<CallCell> cell = call.cell;
  CallCell::retire(std::move(call.cell));
  // The cell's next call listens on the same slot: the ended call's
  // wake-up, handlers and cancellations must not reach it.
  Emissions next;
  next.attach(cell->slot());
  call.io.restart();
  call.io.run();  // the wake-up finds the call gone
  std::shared_ptr<const ContextLink> context;
  CHECK_FALSE(cell->enter(ended, context));
  cell->cancel(ended, kTerminal, false);
  CHECK(next.count() == 0);
  CHECK(call.emitted.count() == 0);
  {
    std::lock_guard g(cell->lock);
    CHECK(cell->generation != ended);
  }
  cell->slot().clear();
}

TEST_CASE("call cell: a lease's loss cancels only between arm_loss and forget_loss", "[async][cell]") {
  Call call;
  call.start();
  auto lease = std::make_shared<TestLease>();
  // Not armed: a loss cancellation is dropped.
  call.handler([&] { call.cell->cancel(call.gen, kTerminal, /*loss=*/true); });
  CHECK(call.emitted.count() == 0);
  // Armed: the lease is listened to once the call suspends (the handler's end), and its loss emits.
  call.handler([&] { call.cell->arm_loss(*lease); });
  CHECK(call.emitted.count() == 0);
  call.handler([&] { lease->record_lost("taken away"); });
  REQUIRE(call.emitted.count() == 1);
  CHECK(call.emitted.types[0] == kTerminal);
  // Forgotten: a pending loss is dropped with it.
  auto second = std::make_shared<TestLease>();
  call.handler([&] {
    call.cell->arm_loss(*second);
    call.cell->cancel(call.gen, kTerminal, /*loss=*/true);  // pending until the handler ends
    call.cell->forget_loss(*second);
  });
  CHECK(call.emitted.count() == 1);
  lease->drop_hold();
  second->drop_hold();
}

TEST_CASE("call cell: a lease lost before the call first suspends is heard as it suspends", "[async][cell]") {
  Call call;
  call.start();
  auto lease = std::make_shared<TestLease>();
  call.handler([&] {
    call.cell->arm_loss(*lease);
    lease->record_lost("lost while the body ran without suspending");
    CHECK(call.emitted.count() == 0);  // not listened to yet
  });
  REQUIRE(call.emitted.count() == 1);  // listened at the end: lost already, emitted on the next turn of leave()
  lease->drop_hold();
}

TEST_CASE("call cell: a retargeted cell emits at the new signal until put back", "[async][cell]") {
  Call call;
  call.start();
  net::cancellation_signal rest;
  Emissions at_rest;
  at_rest.attach(rest.slot());
  net::cancellation_signal* before = call.cell->retarget(&rest);
  call.handler([&] { call.cell->cancel(call.gen, kTerminal, false); });
  CHECK(at_rest.count() == 1);
  CHECK(call.emitted.count() == 0);
  call.cell->retarget(before);
  call.handler([&] { call.cell->cancel(call.gen, kTerminal, false); });
  CHECK(call.emitted.count() == 1);
  CHECK(at_rest.count() == 1);
}

TEST_CASE("call cell: emissions held by a thread outside the call wait for release, then go to a posted handler", "[async][cell]") {
  Call call;
  call.start();
  call.cell->hold_emissions();
  std::thread([&] { call.cell->cancel(call.gen, kTerminal, false); }).join();
  call.io.restart();
  call.io.run();
  CHECK(call.emitted.count() == 0);  // held: nothing posted yet
  call.cell->release_emissions();     // posts the wake-up
  CHECK(call.emitted.count() == 0);
  call.io.restart();
  call.io.run();
  CHECK(call.emitted.count() == 1);
}

TEST_CASE("call cell: while one thread emits, a handler of the call on another thread waits for it", "[async][cell]") {
  Call call;
  call.start();
  HeldEmission emission(call);
  std::atomic<bool> entered{false};
  std::thread other([&] {
    std::shared_ptr<const ContextLink> context;
    if (call.cell->enter(call.gen, context)) {
      entered = true;
      call.cell->leave(call.gen);
    }
  });
  std::this_thread::sleep_for(50ms);
  CHECK_FALSE(entered.load());  // a handler of the call on another thread waits for the emission
  emission.let_go();
  other.join();
  CHECK(entered.load());
  CHECK(call.emitted.count() == 1);
}

TEST_CASE("call cell: the call's end waits for an emission another thread is making", "[async][cell]") {
  Call call;
  call.start();
  HeldEmission emission(call);
  std::atomic<bool> ended{false};
  std::thread ender([&] {
    CallCell::retire(std::move(call.cell));  // (clears the slot the emission runs in)
    ended = true;
  });
  std::this_thread::sleep_for(50ms);
  CHECK_FALSE(ended.load());
  emission.let_go();
  ender.join();
  CHECK(ended.load());
  CHECK(call.emitted.count() == 1);
}
