// weave queue stats|show|requeue|purge NAME ...
#include <cstdlib>
#include <iostream>

#include "commands.h"
#include "weave/queue.h"

namespace weave_cli {
namespace {

// The queue store as the library resolves it: --url, else WEAVE_QUEUE_URL,
// else the shared one.
weave::Queue open_queue(const Context& ctx, const std::string& name) {
  const char* own = std::getenv("WEAVE_QUEUE_URL");
  std::string url = ctx.url ? *ctx.url : own && *own ? std::string(own) : ctx.store_url();
  if (url.rfind("mem://", 0) == 0) url = ctx.store_url();  // (throws: nothing to see from here)
  weave::configure_queues({.url = url});
  return weave::Queue(name);
}

const char* state_name(weave::MessageState s) {
  switch (s) {
    case weave::MessageState::absent: return "absent";
    case weave::MessageState::scheduled: return "scheduled";
    case weave::MessageState::in_flight: return "in_flight";
    case weave::MessageState::dead: return "dead";
  }
  return "?";
}

}  // namespace

void add_queue(CLI::App& app, Context& ctx) {
  static std::string name, id;
  CLI::App* queue = app.add_subcommand("queue", "A delay queue: counts per state, one message, dead letters");
  queue->require_subcommand(1);

  CLI::App* stats = queue->add_subcommand("stats", "Messages per state (exact, one atomic step)");
  stats->add_option("name", name, "The queue's name")->required();
  stats->callback([&ctx] {
    const weave::QueueStats s = open_queue(ctx, name).stats();
    ctx.out.table({"QUEUE", "DELAYED", "READY", "IN FLIGHT", "DEAD"},
                  {{name, std::to_string(s.delayed), std::to_string(s.ready), std::to_string(s.in_flight),
                    std::to_string(s.dead)}},
                  {{"queue", name}, {"delayed", s.delayed}, {"ready", s.ready}, {"in_flight", s.in_flight},
                   {"dead", s.dead}});
  });

  CLI::App* show = queue->add_subcommand("show", "One message: state, due time, deliveries, last error");
  show->add_option("name", name, "The queue's name")->required();
  show->add_option("id", id, "The message id")->required();
  show->callback([&ctx] {
    const weave::MessageInfo m = open_queue(ctx, name).inspect(id);
    const auto due_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(m.due.time_since_epoch()).count();
    ctx.out.say("message '" + id + "' of queue '" + name + "': " + state_name(m.state) +
                    (m.state == weave::MessageState::scheduled ? ", due at " + std::to_string(due_ms) + " ms" : "") +
                    ", " + std::to_string(m.deliveries) + " deliveries, " + std::to_string(m.failures) +
                    " failures" + (m.last_error.empty() ? "" : ", last error: " + m.last_error),
                {{"queue", name}, {"id", id}, {"state", state_name(m.state)}, {"due_unix_ms", due_ms},
                 {"deliveries", m.deliveries}, {"failures", m.failures}, {"last_error", m.last_error}});
    if (m.state == weave::MessageState::absent) throw std::runtime_error("no message '" + id + "' in queue '" + name + "'");
  });

  CLI::App* requeue = queue->add_subcommand("requeue", "Give a dead message another round of attempts, due now");
  requeue->add_option("name", name, "The queue's name")->required();
  requeue->add_option("id", id, "The dead message's id")->required();
  requeue->callback([&ctx] {
    if (!open_queue(ctx, name).requeue(id))
      throw std::runtime_error("message '" + id + "' of queue '" + name + "' is not dead-lettered");
    ctx.out.say("requeued '" + id + "'", {{"queue", name}, {"id", id}, {"requeued", true}});
  });

  CLI::App* purge = queue->add_subcommand("purge", "Delete every dead message of the queue");
  purge->add_option("name", name, "The queue's name")->required();
  purge->callback([&ctx] {
    const std::uint64_t n = open_queue(ctx, name).purge_dead();
    ctx.out.say("deleted " + std::to_string(n) + " dead messages of '" + name + "'",
                {{"queue", name}, {"deleted", n}});
  });
}

}  // namespace weave_cli
