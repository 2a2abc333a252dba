// weave schedules [list] | pause NAME | resume NAME.
#include <stdexcept>

#include "commands.h"
#include "weave/queue.h"
#include "weave/schedules.h"

namespace weave_cli {
namespace {

void use_queue_store(const Context& ctx) { weave::configure_queues(ctx.options<weave::QueueOptions>()); }

}  // namespace

void add_schedules(CLI::App& app, Context& ctx) {
  static std::string name;
  CLI::App* schedules = app.add_subcommand(
      "schedules", "[[scheduled]] schedules: the next tick, the last run (where, how long, outcome), the misses; "
                   "pause and resume");
  CLI::App* list = schedules->add_subcommand("list", "Every schedule the queue store holds (the default)");
  auto show_all = [&ctx] {
    use_queue_store(ctx);
    std::vector<std::vector<std::string>> rows;
    nlohmann::json js = nlohmann::json::array();
    for (const weave::ScheduleStatus& s : weave::list_schedules()) {
      nlohmann::json j = {{"name", s.name}, {"paused", s.paused}, {"missed", s.missed}};
      std::vector<std::string> row = {s.name, s.paused ? "paused" : "running",
                                      s.next_tick ? std::to_string(unix_ms(*s.next_tick)) : "-",
                                      std::to_string(s.missed)};
      if (s.next_tick) j["next_tick_unix_ms"] = unix_ms(*s.next_tick);
      if (const auto& r = s.last_run) {
        row.insert(row.end(), {std::to_string(unix_ms(r->tick)) + " #" + std::to_string(r->attempt), r->worker,
                               readable(r->took), r->outcome + (r->error.empty() ? "" : ": " + r->error)});
        j["last_run"] = {{"tick_unix_ms", unix_ms(r->tick)}, {"attempt", r->attempt}, {"worker", r->worker},
                         {"started_unix_ms", unix_ms(r->started)}, {"took_ms", r->took.count()},
                         {"outcome", r->outcome}, {"error", r->error}};
      } else {
        row.insert(row.end(), {"-", "-", "-", "-"});
      }
      rows.push_back(std::move(row));
      js.push_back(std::move(j));
    }
    ctx.out.table({"SCHEDULE", "STATE", "NEXT TICK (unix ms)", "MISSED", "LAST RUN (tick #attempt)", "WHERE", "TOOK",
                   "OUTCOME"},
                  rows, js);
  };
  list->callback(show_all);
  schedules->callback([schedules, show_all] {
    if (schedules->get_subcommands().empty()) show_all();
  });

  CLI::App* pause = schedules->add_subcommand("pause", "Run no tick of a schedule until resumed (none counts missed)");
  pause->add_option("name", name, "The schedule's name")->required();
  pause->callback([&ctx] {
    use_queue_store(ctx);
    weave::pause_schedule(name);
    ctx.out.say("schedule '" + name + "' paused", {{"schedule", name}, {"paused", true}});
  });
  CLI::App* resume = schedules->add_subcommand("resume", "Go on with a paused schedule's first tick after now");
  resume->add_option("name", name, "The schedule's name")->required();
  resume->callback([&ctx] {
    use_queue_store(ctx);
    weave::resume_schedule(name);
    ctx.out.say("schedule '" + name + "' resumed", {{"schedule", name}, {"paused", false}});
  });
}

}  // namespace weave_cli
