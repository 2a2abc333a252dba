#include "vocabulary.h"

#include <weave/duration.h>
#include <weave/rate_limit.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>

namespace fs = std::filesystem;

namespace weavegen {

const char* to_string(ArgType t) {
  switch (t) {
    case ArgType::template_: return "template";
    case ArgType::template_list: return "template_list";
    case ArgType::duration: return "duration";
    case ArgType::integer: return "integer";
    case ArgType::enumeration: return "enum";
    case ArgType::boolean: return "bool";
    case ArgType::string: return "string";
    case ArgType::identifier: return "identifier";
    case ArgType::rate: return "rate";
    case ArgType::cron: return "cron";
    case ArgType::time_zone: return "time_zone";
    case ArgType::percent: return "percent";
    case ArgType::exception_types: return "exception_types";
  }
  return "?";
}

static std::optional<ArgType> parse_type(const std::string& s) {
  static const std::map<std::string, ArgType> m = {
      {"template", ArgType::template_}, {"template_list", ArgType::template_list},
      {"duration", ArgType::duration},  {"integer", ArgType::integer},
      {"enum", ArgType::enumeration},   {"bool", ArgType::boolean},
      {"string", ArgType::string},      {"identifier", ArgType::identifier},
      {"rate", ArgType::rate},          {"cron", ArgType::cron},
      {"time_zone", ArgType::time_zone}, {"percent", ArgType::percent},
      {"exception_types", ArgType::exception_types}};
  auto it = m.find(s);
  if (it == m.end()) return std::nullopt;
  return it->second;
}

const ArgDef* AnnotationDef::find(const std::string& arg) const {
  for (const auto& a : args)
    if (a.name == arg) return &a;
  return nullptr;
}

const AnnotationDef* Vocabulary::find(const std::string& name) const {
  auto it = defs_.find(name);
  return it == defs_.end() ? nullptr : &it->second;
}

std::vector<std::string> Vocabulary::names() const {
  std::vector<std::string> r;
  for (const auto& [n, d] : defs_) r.push_back(n);
  return r;
}

bool Vocabulary::load(const std::string& path, Reporter& rep) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(path, ec))
      if (e.path().extension() == ".json") files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    bool ok = true;
    for (const auto& f : files) ok = load_file(f, rep) && ok;
    return ok;
  }
  return load_file(path, rep);
}

bool Vocabulary::load_file(const std::string& path, Reporter& rep) {
  std::ifstream in(path);
  if (!in) {
    rep.error("cannot read annotation vocabulary '" + path + "'");
    return false;
  }
  files_.push_back(fs::absolute(path).lexically_normal().string());
  auto fail = [&](const std::string& msg) {
    rep.error(path, {}, "invalid annotation vocabulary: " + msg);
    return false;
  };
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const std::exception& e) {
    return fail(e.what());
  }
  try {
    AnnotationDef def;
    def.file = path;
    if (!j.is_object() || !j.contains("name") || !j["name"].is_string())
      return fail("expected an object with a string \"name\"");
    def.name = j["name"];
    def.doc = j.value("doc", "");
    if (j.contains("synchronous") && !j["synchronous"].is_boolean()) return fail("\"synchronous\" must be true or false");
    def.synchronous = j.value("synchronous", false);
    if (j.contains("order") && !j["order"].is_number_integer()) return fail("\"order\" must be an integer");
    def.order = j.value("order", 0);
    if (j.contains("reruns") && !j["reruns"].is_boolean()) return fail("\"reruns\" must be true or false");
    def.reruns = j.value("reruns", false);
    if (j.contains("warn_inside")) {
      const auto& w = j["warn_inside"];
      if (!w.is_object()) return fail("\"warn_inside\" must map annotation names to the reason");
      for (const auto& [outer, why] : w.items()) {
        if (!why.is_string()) return fail("\"warn_inside\": the reason for '" + outer + "' must be a string");
        def.warn_inside[outer] = why.get<std::string>();
      }
    }
    if (j.contains("stores_call") && !j["stores_call"].is_boolean()) return fail("\"stores_call\" must be true or false");
    def.stores_call = j.value("stores_call", false);
    if (def.name.empty() || !(std::isalpha(static_cast<unsigned char>(def.name[0])) || def.name[0] == '_'))
      return fail("annotation name must be an identifier");
    if (defs_.count(def.name))
      return fail("annotation '" + def.name + "' is already defined in " + defs_[def.name].file);
    for (const auto& a : j.value("args", nlohmann::json::array())) {
      ArgDef d;
      d.name = a.at("name");
      auto t = parse_type(a.at("type"));
      if (!t) return fail("argument '" + d.name + "': unknown type " + a.at("type").dump());
      d.type = *t;
      d.doc = a.value("doc", "");
      if (a.contains("values")) d.values = a["values"].get<std::vector<std::string>>();
      if (d.type == ArgType::enumeration && d.values.empty())
        return fail("argument '" + d.name + "': enum needs \"values\"");
      d.forever = a.value("forever", false);
      if (a.contains("default")) d.default_value = a["default"];
      d.default_qualified_name = a.value("default_qualified_name", false);
      d.required = a.value("required", false);
      if (a.contains("conflicts")) d.conflicts = a["conflicts"].get<std::vector<std::string>>();
      if (a.contains("required_if")) {
        const auto& r = a["required_if"];
        d.required_if_arg = r.at("arg");
        d.required_if_values = r.at("values").get<std::vector<std::string>>();
      }
      if (a.contains("skip_values")) d.skip_values = a["skip_values"].get<std::vector<std::string>>();
      d.is_fallback = a.value("fallback", false);
      if (a.contains("at_most")) {
        if (!a["at_most"].is_string()) return fail("argument '" + d.name + "': \"at_most\" must name another argument");
        d.at_most = a["at_most"].get<std::string>();
      }
      if (a.contains("min") && d.type == ArgType::duration) {
        std::int64_t ms = 0;
        if (!a["min"].is_string() || !parse_duration(a["min"].get<std::string>(), ms).empty())
          return fail("argument '" + d.name + "': \"min\" of a duration must be a duration, e.g. \"1ms\"");
        d.min = ms;
        d.min_text = a["min"].get<std::string>();
      } else if (a.contains("min")) {
        if (d.type != ArgType::integer || !a["min"].is_number_integer())
          return fail("argument '" + d.name + "': \"min\" needs an integer argument and an integer bound");
        d.min = a["min"].get<long long>();
      }
      if (a.contains("max")) {
        if (d.type != ArgType::integer || !a["max"].is_number_integer())
          return fail("argument '" + d.name + "': \"max\" needs an integer argument and an integer bound");
        d.max = a["max"].get<long long>();
        if (d.min && *d.max < *d.min) return fail("argument '" + d.name + "': its \"max\" is less than its \"min\"");
      }
      if (a.contains("only_with")) {
        const auto& w = a["only_with"];
        if (!w.is_object() || !w.contains("arg") || !w["arg"].is_string() ||
            (w.contains("values") && (!w["values"].is_array() || w["values"].empty())))
          return fail("argument '" + d.name +
                      "': \"only_with\" must be {\"arg\": \"<argument>\"} or {\"arg\": ..., \"values\": [...]}");
        d.only_with_arg = w["arg"].get<std::string>();
        if (w.contains("values")) d.only_with_values = w["values"].get<std::vector<std::string>>();
      }
      if (a.contains("names_state")) {
        if (!a["names_state"].is_boolean()) return fail("argument '" + d.name + "': \"names_state\" must be true or false");
        if (d.type != ArgType::template_ && d.type != ArgType::template_list)
          return fail("argument '" + d.name + "': \"names_state\" is for a template or template_list");
        d.names_state = a["names_state"].get<bool>();
      }
      if (a.contains("detaches")) {
        if (!a["detaches"].is_boolean()) return fail("argument '" + d.name + "': \"detaches\" must be true or false");
        d.detaches = a["detaches"].get<bool>();
      }
      if (a.contains("throwing_values")) {
        const auto& t = a["throwing_values"];
        if (!t.is_object() || t.empty())
          return fail("argument '" + d.name +
                      "': \"throwing_values\" must map values to what then throws, e.g. {\"throw\": \"a busy lock\"}");
        if (d.type != ArgType::enumeration)
          return fail("argument '" + d.name + "': \"throwing_values\" needs an enum argument");
        for (const auto& [value, what] : t.items()) {
          if (!std::count(d.values.begin(), d.values.end(), value))
            return fail("argument '" + d.name + "': \"throwing_values\": '" + value + "' is not one of its values");
          if (!what.is_string() || what.get<std::string>().empty())
            return fail("argument '" + d.name + "': \"throwing_values\": '" + value +
                        "' needs the text of what then throws, e.g. \"a busy lock\"");
          d.throwing_values[value] = what.get<std::string>();
        }
      }
      if (d.min && d.default_value && d.default_value->is_number_integer() &&
          d.default_value->get<long long>() < *d.min)
        return fail("argument '" + d.name + "': its default is less than its \"min\"");
      if (d.max && d.default_value && d.default_value->is_number_integer() &&
          d.default_value->get<long long>() > *d.max)
        return fail("argument '" + d.name + "': its default is more than its \"max\"");
      if (d.name == "order") return fail("'order' is implicit and cannot be redefined");
      if (def.find(d.name)) return fail("duplicate argument '" + d.name + "'");
      def.args.push_back(std::move(d));
    }
    for (const auto& d : def.args) {
      if (d.only_with_arg.empty()) continue;
      const ArgDef* other = def.find(d.only_with_arg);
      if (!other || other == &d)
        return fail("argument '" + d.name + "': \"only_with\" must name another argument, not '" + d.only_with_arg +
                    "'");
      for (const auto& v : d.only_with_values)
        if (!std::count(other->values.begin(), other->values.end(), v))
          return fail("argument '" + d.name + "': \"only_with\": '" + v + "' is not a value of '" + other->name +
                      "'");
    }
    if (j.contains("requires_one_of")) {
      const auto& r = j["requires_one_of"];
      if (!r.is_array() || r.size() < 2) return fail("\"requires_one_of\" must list two or more arguments");
      def.requires_one_of = r.get<std::vector<std::string>>();
      for (const auto& n : def.requires_one_of)
        if (!def.find(n)) return fail("\"requires_one_of\": '" + n + "' is not an argument of '" + def.name + "'");
    }
    if (j.contains("runs_on_schedule") && !j["runs_on_schedule"].is_boolean())
      return fail("\"runs_on_schedule\" must be true or false");
    def.runs_on_schedule = j.value("runs_on_schedule", false);
    if (j.contains("not_yet_at_run_time") &&
        (!j["not_yet_at_run_time"].is_string() || j["not_yet_at_run_time"].get<std::string>().empty()))
      return fail("\"not_yet_at_run_time\" must say why, as text");
    def.not_yet_at_run_time = j.value("not_yet_at_run_time", "");
    for (const auto& d : def.args) {
      if (d.at_most.empty()) continue;
      const ArgDef* other = def.find(d.at_most);
      if (d.type != ArgType::duration) return fail("argument '" + d.name + "': \"at_most\" needs a duration argument");
      if (!other || other == &d || other->type != ArgType::duration)
        return fail("argument '" + d.name + "': \"at_most\" must name another duration argument, not '" +
                    d.at_most + "'");
    }
    if (j.contains("stores_result")) {
      const auto& s = j["stores_result"];
      if (s.is_boolean()) {
        def.stores_result = s.get<bool>();
      } else if (s.is_object() && s.contains("arg") && s["arg"].is_string() && s.contains("values") &&
                 s["values"].is_array() && !s["values"].empty()) {
        def.stores_result = true;
        def.stores_result_arg = s["arg"].get<std::string>();
        def.stores_result_values = s["values"].get<std::vector<std::string>>();
        const ArgDef* on = def.find(def.stores_result_arg);
        if (!on || on->type != ArgType::enumeration)
          return fail("\"stores_result\": '" + def.stores_result_arg + "' is not an enum argument of '" + def.name +
                      "'");
        for (const auto& v : def.stores_result_values)
          if (!std::count(on->values.begin(), on->values.end(), v))
            return fail("\"stores_result\": '" + v + "' is not a value of '" + def.stores_result_arg + "'");
      } else {
        return fail("\"stores_result\" must be true, false or {\"arg\": \"<enum argument>\", \"values\": [...]}");
      }
    }
    defs_.emplace(def.name, std::move(def));
  } catch (const std::exception& e) {
    return fail(e.what());
  }
  return true;
}

std::string parse_duration(const std::string& text, std::int64_t& ms) {
  const weave::DurationParse d = weave::parse_duration_text(text);
  if (d) ms = d.value.count();
  return d.error;
}

std::string parse_rate(const std::string& text, std::int64_t& permits, std::int64_t& per_ms) {
  const weave::RateParse r = weave::parse_rate_text(text);
  if (r) {
    permits = static_cast<std::int64_t>(r.limit.permits);
    per_ms = r.limit.per.count();
  }
  return r.error;
}

int edit_distance(const std::string& a, const std::string& b) {
  std::vector<int> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = static_cast<int>(j);
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = static_cast<int>(i);
    for (std::size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace weavegen
