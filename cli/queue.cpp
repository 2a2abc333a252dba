// weave queue stats|peek|dead|show|requeue|purge NAME ...
#include <iostream>

#include "commands.h"
#include "weave/queue.h"

namespace weave_cli {
namespace {

weave::Queue open_queue(const Context& ctx, const std::string& name) {
  weave::configure_queues(ctx.options<weave::QueueOptions>());
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
    const long long due_ms = unix_ms(m.due);
    ctx.out.say("message '" + id + "' of queue '" + name + "': " + state_name(m.state) +
                    (m.state == weave::MessageState::scheduled ? ", due at " + std::to_string(due_ms) + " ms" : "") +
                    ", " + std::to_string(m.deliveries) + " deliveries, " + std::to_string(m.failures) +
                    " failures" + (m.last_error.empty() ? "" : ", last error: " + m.last_error),
                {{"queue", name}, {"id", id}, {"state", state_name(m.state)}, {"due_unix_ms", due_ms},
                 {"deliveries", m.deliveries}, {"failures", m.failures}, {"last_error", m.last_error}});
    if (m.state == weave::MessageState::absent) throw std::runtime_error("no message '" + id + "' in queue '" + name + "'");
  });

  static std::size_t limit = 20;
  auto list = [&ctx](bool dead) {
    weave::Queue q = open_queue(ctx, name);
    const std::vector<weave::ListedMessage> found = dead ? q.dead_letters(limit) : q.peek(limit);
    std::vector<std::vector<std::string>> rows;
    nlohmann::json js = nlohmann::json::array();
    for (const weave::ListedMessage& m : found) {
      const long long due_ms = unix_ms(m.info.due);
      rows.push_back({m.id, dead ? "-" : std::to_string(due_ms), std::to_string(m.info.deliveries),
                      std::to_string(m.info.failures), m.info.last_error, m.payload.substr(0, 60)});
      js.push_back({{"id", m.id}, {"due_unix_ms", due_ms}, {"deliveries", m.info.deliveries},
                    {"failures", m.info.failures}, {"last_error", m.info.last_error}, {"payload", m.payload}});
    }
    ctx.out.table({"ID", "DUE (unix ms)", "DELIVERIES", "FAILURES", "LAST ERROR", "PAYLOAD"}, rows, js);
  };
  CLI::App* peek = queue->add_subcommand("peek", "The next scheduled messages, by due time");
  peek->add_option("name", name, "The queue's name")->required();
  peek->add_option("--limit", limit, "How many (default 20)");
  peek->callback([list] { list(false); });
  CLI::App* dead = queue->add_subcommand("dead", "The dead-lettered messages, newest first, with their last error");
  dead->add_option("name", name, "The queue's name")->required();
  dead->add_option("--limit", limit, "How many (default 20)");
  dead->callback([list] { list(true); });

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
