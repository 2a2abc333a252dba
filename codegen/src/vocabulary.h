// The annotation vocabulary: one JSON file per annotation (annotations/*.json).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "diagnostics.h"

namespace weavegen {

// cron: a string literal holding a cron expression (Spring's six fields,
// src/schedule/cron.h); time_zone: a string literal naming a zone of the tz
// database (src/schedule/schedule.h). Both are text to the interceptor.
enum class ArgType { template_, template_list, duration, integer, enumeration, boolean, string, identifier, rate, cron,
                     time_zone, percent, exception_types };

const char* to_string(ArgType t);

struct ArgDef {
  std::string name;
  ArgType type = ArgType::string;
  std::string doc;
  std::vector<std::string> values;              // enum
  bool forever = false;                         // duration: accepts `forever`
  std::optional<nlohmann::json> default_value;  // absent = no default
  bool default_qualified_name = false;          // default = "ns::Class::method"
  // template / template_list: the rendered text names stored state (a key, a
  // cache name): its values are %-encoded and its placeholders separated.
  bool names_state = false;
  bool required = false;
  std::vector<std::string> conflicts;           // mutually exclusive arguments
  // Required iff another argument has one of these values (e.g. on_busy=fallback).
  std::string required_if_arg;
  std::vector<std::string> required_if_values;
  // enum values that let the interceptor skip the method and return nothing
  // (needs a void / std::optional return, or a fallback).
  std::vector<std::string> skip_values;
  bool is_fallback = false;                     // identifier naming the skip fallback
  // duration: at most the value (written or default) of this other duration
  // argument of the annotation (e.g. local_ttl <= ttl).
  std::string at_most;
  // integer: the least value it may have (retries=-1 means nothing);
  // duration: the shortest, in ms (`"min": "1ms"`: every=0s is refused),
  // written as `min_text`.
  std::optional<long long> min;
  std::string min_text;
  std::optional<long long> max;  // integer: the greatest value accepted
  // Allowed only when argument `only_with_arg` is written (zone only with
  // cron), or, with `only_with_values`, when its value (written or default)
  // is one of them (max_catch_up only with misfire=run_all). Otherwise
  // writing it is an error and its default is left out.
  std::string only_with_arg;
  std::vector<std::string> only_with_values;
  // When the annotation has this argument (written or by default), its
  // interceptor may run the call again later, detached from the caller, from
  // copies of the arguments (cache's refresh_after): every parameter must be
  // copyable, and the proxy emits how to copy the call.
  bool detaches = false;
  // enum values that make the interceptor throw out of the method, each with
  // what then throws, as a warning finishes it ("throw" -> "a busy lock":
  // "... on_busy=throw: a busy lock will call std::terminate" on a noexcept
  // method whose value, written or default, is one of them).
  std::map<std::string, std::string> throwing_values;
};

struct AnnotationDef {
  std::string name;
  std::string doc;
  std::string file;
  // Its effect ends when the call returns (a lock is released): refused on
  // methods whose result is still being computed then (std::future, a coroutine).
  bool synchronous = false;
  // Where it runs among a method's annotations when `order=` is not
  // written: lowest outermost, ties in written order (docs/interceptors.md,
  // "Order").
  int order = 0;
  // It may run the rest of the chain, and so the method, more than once
  // (retry): the proxy copies by-value arguments to each run instead of
  // moving them, and refuses rvalue-reference parameters.
  bool reruns = false;
  // Annotations it cannot work inside, and why (`"warn_inside": {"timeout":
  // "..."}`): weavegen warns when the chain's order puts it inside one.
  std::map<std::string, std::string> warn_inside;
  // It keeps the method's result as JSON (weave/json_codec.h: cache, dedupe's
  // replay): always (`"stores_result": true`), or only when enum argument
  // `stores_result_arg` (written or default) has one of `stores_result_values`
  // (`{"arg": "on_duplicate", "values": ["replay"]}`). Where it applies the
  // method must return a value (not void, not a reference), be synchronous, and
  // weavegen emits a ResultCodec for it.
  bool stores_result = false;
  std::string stores_result_arg;
  std::vector<std::string> stores_result_values;
  // It keeps the call itself (its arguments as JSON) and returns at once; a
  // worker later runs the interceptors after it, then the method, perhaps in
  // another process (delay). The method must return void and be a
  // non-static member; every parameter a value or const reference of a
  // copyable type (no pointer, view, non-const or rvalue reference), whose
  // JSON conversion the compiler checks; weavegen emits a StoredCallCodec
  // (weave/generated/stored_call.h). One such annotation per method.
  bool stores_call = false;
  // Exactly one of these arguments must be written (scheduled's cron and
  // every; writing two of them is refused as well).
  std::vector<std::string> requires_one_of;
  // Weave runs the method itself, on a schedule, with no caller (scheduled):
  // it must return void (not a task) and take no parameters, or one
  // weave::Tick by value or const reference.
  bool runs_on_schedule = false;
  // Non-empty: Weave has no interceptor for it yet, and this says why. Once
  // every check passed, weavegen refuses the annotation with this reason,
  // instead of weaving a call that would fail at run time ("no interceptor
  // registered").
  std::string not_yet_at_run_time;
  std::vector<ArgDef> args;
  const ArgDef* find(const std::string& arg) const;
};

class Vocabulary {
 public:
  // Loads a .json file or every *.json in a directory. Errors go to `rep`.
  bool load(const std::string& path, Reporter& rep);
  const AnnotationDef* find(const std::string& name) const;
  const std::vector<std::string>& files() const { return files_; }
  std::vector<std::string> names() const;

 private:
  bool load_file(const std::string& path, Reporter& rep);
  std::map<std::string, AnnotationDef> defs_;
  std::vector<std::string> files_;
};

// "30s", "250ms", "2min", "1h" -> milliseconds (weave/duration.h, the grammar the
// runtime reads too). Returns an error text or "".
std::string parse_duration(const std::string& text, std::int64_t& ms);

// "100/s", "6000/min", "5/10s" -> permits per milliseconds. Returns an error text or "".
std::string parse_rate(const std::string& text, std::int64_t& permits, std::int64_t& per_ms);

int edit_distance(const std::string& a, const std::string& b);

}  // namespace weavegen
