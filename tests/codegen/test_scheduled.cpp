// weavegen on [[scheduled]] (annotations/scheduled.json): the cron
// expression parsed as the runtime parses it (src/schedule/cron.h), the time
// zone, cron or every, the method's shape (a non-static method: a worker
// runs it on the object it serves). A refusal asserts the whole diagnostic,
// and that it is the only one; what passes is woven, and the generated
// source compiles.
#include <catch2/catch.hpp>

#include "weavegen_harness.h"

using namespace weavegen_test;

namespace {

const std::string k_reports_prelude =
    "#include <weave/tick.h>\n"          // 1
    "struct Reports {\n"                 // 2
    "  virtual ~Reports() = default;\n";  // 3
// The declaration under test is line 4.

// weavegen on `decl` (line 4): exactly one error, at the column where `at`
// first appears in `decl` (plus `shift`), whose message is `message`.
void expect_only_error(const std::string& name, const std::string& decl, const std::string& at,
                       const std::string& message, int shift = 0) {
  const auto column = decl.find(at);
  REQUIRE(column != std::string::npos);
  const int col = static_cast<int>(column) + 1 + shift;
  const Result r = run(name, k_reports_prelude + decl + "\n};\n");
  expect_error(r, 4, col, message);
  CHECK_THAT(r.err, Catch::Contains(r.header + ":4:" + std::to_string(col) + ": error: " + message + "\n"));
  CHECK(occurrences(r.err, ": error: ") == 1);
}

}  // namespace

TEST_CASE("scheduled: a valid cron with a zone is woven, and the generated source compiles", "[codegen][scheduled]") {
  const char* decls[] = {
      "  [[scheduled(cron=\"0 */5 * * * *\", zone=\"Europe/Paris\", misfire=run_once)]]\n  virtual void rollup();",
      "  [[scheduled(cron=\"0 0 12 LW * ?\", zone=\"America/New_York\")]] virtual void rollup(weave::Tick tick);",
      "  [[scheduled(cron=\"0 30 9 ? JAN-MAR MON#2\", misfire=run_all, max_catch_up=3)]]\n"
      "  virtual void rollup(const weave::Tick& tick);",
      "  [[scheduled(cron=\"@daily\", overlap=wait, retries=0, backoff=2s, name=\"daily-rollup\")]] void rollup();",
  };
  for (const char* decl : decls) {
    INFO(decl);
    expect_woven(run("scheduled_valid_cron", k_reports_prelude + decl + "\n};\n"));
  }
}

TEST_CASE("scheduled: a valid every stacked with a lock is woven, and the generated source compiles",
          "[codegen][scheduled]") {
  expect_woven(run("scheduled_valid_every", k_reports_prelude +
                                                "  [[scheduled(every=30s, misfire=skip, grace=200ms)]]\n"
                                                "  [[lock(key=\"reconcile\")]]\n  virtual void reconcile();\n};\n"));
}

TEST_CASE("scheduled: only on a non-static method, and not stacked with another annotation that stores the call",
          "[codegen][scheduled]") {
  expect_only_error("scheduled_static", "  [[scheduled(every=30s)]] static void rollup();", "scheduled",
                    "'scheduled' runs 'Reports::rollup' on a schedule on the object a worker serves, but it is a "
                    "static method, which has none; make it a non-static method");
  expect_only_error("scheduled_and_delay", "  [[delay(after=1s)]] [[scheduled(every=30s)]] virtual void rollup();",
                    "scheduled",
                    "'scheduled' runs 'Reports::rollup' on a schedule, but another of its annotations stores it "
                    "already; keep one");
}

TEST_CASE("scheduled: a bad cron expression is reported at its field", "[codegen][scheduled]") {
  // The caret is under the field: the literal's column + 1 (the quote) + the field's offset.
  const std::string decl = "  [[scheduled(cron=\"0 0 0 32 * *\")]] virtual void rollup();";
  const int literal = static_cast<int>(decl.find('"'));
  expect_only_error("scheduled_bad_day", decl, "32",
                    "argument 'cron' of 'scheduled': day-of-month: 32 is out of range 1-31");
  CHECK(static_cast<int>(decl.find("32")) == literal + 1 + 6);
  expect_only_error("scheduled_bad_weekday", "  [[scheduled(cron=\"0 0 9 ? * MON#6\")]] virtual void rollup();",
                    "MON#6", "argument 'cron' of 'scheduled': day-of-week: #6 is out of range 1-5");
  expect_only_error("scheduled_five_fields", "  [[scheduled(cron=\"*/5 * * * *\")]] virtual void rollup();", "*/5",
                    "argument 'cron' of 'scheduled': expected 6 fields (second minute hour day-of-month month "
                    "day-of-week), found 5");
  // An escape in the literal: the column is the character's, as the compiler reads it.
  expect_only_error("scheduled_escaped", "  [[scheduled(cron=\"0\\x20 0 0 32 * *\")]] virtual void rollup();", "32",
                    "argument 'cron' of 'scheduled': day-of-month: 32 is out of range 1-31");
}

TEST_CASE("scheduled: cron and every together, or neither, are refused", "[codegen][scheduled]") {
  expect_only_error("scheduled_both", "  [[scheduled(cron=\"0 0 * * * *\", every=30s)]] virtual void rollup();", "every",
                    "'every' cannot be combined with 'cron'");
  expect_only_error("scheduled_neither", "  [[scheduled(misfire=skip)]] virtual void rollup();", "scheduled",
                    "annotation 'scheduled' needs one of 'cron=...' or 'every=...'");
  expect_only_error("scheduled_every_zero", "  [[scheduled(every=0s)]] virtual void rollup();", "0s",
                    "argument 'every' of 'scheduled' must be at least 1ms, not 0s");
}

TEST_CASE("scheduled: the zone must be known and comes only with cron", "[codegen][scheduled]") {
  expect_only_error("scheduled_unknown_zone",
                    "  [[scheduled(cron=\"0 0 * * * *\", zone=\"Europe/Pariss\")]] virtual void rollup();",
                    "\"Europe/Pariss\"",
                    "argument 'zone' of 'scheduled': unknown time zone 'Europe/Pariss' (not in the tz database of "
                    "this machine, /usr/share/zoneinfo; e.g. \"Europe/Paris\", \"UTC\")");
  expect_only_error("scheduled_zone_with_every",
                    "  [[scheduled(every=1min, zone=\"Europe/Paris\")]] virtual void rollup();", "zone",
                    "argument 'zone' of 'scheduled' is only allowed with 'cron'");
}

TEST_CASE("scheduled: misfire, overlap and max_catch_up take the vocabulary's values", "[codegen][scheduled]") {
  expect_only_error("scheduled_misfire_bogus", "  [[scheduled(every=30s, misfire=bogus)]] virtual void rollup();",
                    "bogus",
                    "invalid value 'bogus' for argument 'misfire' of 'scheduled'; expected one of: skip, run_once, "
                    "run_all");
  expect_only_error("scheduled_overlap_bogus", "  [[scheduled(every=30s, overlap=queue)]] virtual void rollup();",
                    "queue",
                    "invalid value 'queue' for argument 'overlap' of 'scheduled'; expected one of: skip, wait, allow");
  expect_only_error("scheduled_catch_up_without_run_all",
                    "  [[scheduled(every=30s, max_catch_up=5)]] virtual void rollup();", "max_catch_up",
                    "argument 'max_catch_up' of 'scheduled' is only allowed with misfire=run_all");
}

TEST_CASE("scheduled: only a void method without parameters or taking one weave::Tick", "[codegen][scheduled]") {
  expect_only_error("scheduled_returns_int", "  [[scheduled(every=30s)]] virtual int rollup();", "scheduled",
                    "'scheduled' runs 'Reports::rollup' on a schedule, with no caller: it must return void, not 'int'");
  expect_only_error("scheduled_takes_int", "  [[scheduled(every=30s)]] virtual void rollup(int n);", "scheduled",
                    "'scheduled' runs 'Reports::rollup' on a schedule, with no caller: it must take no parameters, "
                    "or one weave::Tick (by value or const reference), but its parameter 'n' is 'int'");
  expect_only_error("scheduled_tick_reference", "  [[scheduled(every=30s)]] virtual void rollup(weave::Tick& t);",
                    "scheduled",
                    "'scheduled' runs 'Reports::rollup' on a schedule, with no caller: it must take no parameters, "
                    "or one weave::Tick (by value or const reference), but its parameter 't' is 'weave::Tick &'");
  expect_only_error("scheduled_two_ticks",
                    "  [[scheduled(every=30s)]] virtual void rollup(weave::Tick a, weave::Tick b);", "scheduled",
                    "'scheduled' runs 'Reports::rollup' on a schedule, with no caller: it must take no parameters, "
                    "or one weave::Tick (by value or const reference), but it takes 2 parameters");
}
