#include "validator.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>

#include "key_template.h"
#include "schedule/cron.h"
#include "schedule/schedule.h"
#include "weave/key.h"

namespace weavegen {


static const char* kind_name(RawValue::Kind k) {
  switch (k) {
    case RawValue::string: return "a string";
    case RawValue::number: return "a number";
    case RawValue::identifier: return "an identifier";
    case RawValue::boolean: return "a boolean";
    case RawValue::list: return "a list";
  }
  return "?";
}

static const char* expected_name(ArgType t) {
  switch (t) {
    case ArgType::template_: return "a key template string (e.g. \"order:<id>\")";
    case ArgType::template_list: return "a list of key template strings (e.g. [\"a:<x>\", \"b:<y>\"])";
    case ArgType::duration: return "a duration (e.g. 30s, 250ms, 2min, 1h)";
    case ArgType::integer: return "an integer";
    case ArgType::enumeration: return "one of";
    case ArgType::boolean: return "true or false";
    case ArgType::string: return "a string literal";
    case ArgType::identifier: return "an identifier";
    case ArgType::rate: return "a rate (e.g. 100/s, 6000/min, 10/h)";
    case ArgType::cron: return "a cron expression string (e.g. \"0 */5 * * * *\")";
    case ArgType::time_zone: return "a time zone string (e.g. \"Europe/Paris\")";
    case ArgType::percent: return "a percentage (e.g. 50%)";
    case ArgType::exception_types: return "exception types (e.g. [std::system_error, pay::Transient])";
  }
  return "?";
}

namespace {

using ErrorAt = std::function<void(int pos, int length, const std::string&)>;

class Validator {
 public:
  Validator(const RawAnnotation& raw, const AnnotationDef& def, const FunctionFacts& facts, TypeQuery& types,
            FunctionModel& f, Reporter& rep, const std::string& path, ValidatedAnnotation& result)
      : raw_(raw), def_(def), facts_(facts), types_(types), f_(f), rep_(rep), path_(path), result_(result) {}

  // False when errors were reported.
  bool run();

 private:
  void error(Loc l, const std::string& m, int len = 1) {
    rep_.error(path_, l, m, len);
    ok_ = false;
  }
  // run()'s steps, in order.
  void check_synchronous();
  void collect_arguments();
  void read_order();
  void check_conflicts();
  void convert_argument(const ArgDef& d);
  bool check_required(const ArgDef& d);
  void convert_default(const ArgDef& d);
  void convert_written(const ArgDef& d, const RawArg& a);
  std::optional<ArgValue> convert(const ArgDef& d, const RawValue& v);
  std::nullopt_t refuse(Loc l, const std::string& m, int len);
  void check_skip_values();
  void check_at_most();
  void check_stores_result();
  void check_detaches();
  void check_stores_call();
  void check_requires_one_of();
  void check_runs_on_schedule();
  void check_not_yet_at_run_time();
  void warn_throwing_values();
  bool only_with_holds(const ArgDef& d) const;
  std::optional<ArgValue> convert_cron(const ArgDef& d, const RawValue& v);

  std::string effective(const std::string& name) const;
  const RawArg* written(const std::string& name) const;
  bool key_template(const RawValue& v, const ArgDef& d, KeyRender& out);
  bool placeholder(const KeyPiece& p, const ErrorAt& err, KeyAccess& access);
  // Resolves the head of a placeholder (a parameter, or `this`); false on error.
  bool head(const KeyPiece& p, const ErrorAt& err, KeyAccess& access, TypeId& type);

  const RawAnnotation& raw_;
  const AnnotationDef& def_;
  const FunctionFacts& facts_;
  TypeQuery& types_;
  FunctionModel& f_;
  Reporter& rep_;
  const std::string& path_;
  ValidatedAnnotation& result_;
  // Arguments by name: written (with where), or null once present by default.
  std::map<std::string, const RawArg*> written_;
  bool ok_ = true;
};

bool Validator::head(const KeyPiece& p, const ErrorAt& err, KeyAccess& access, TypeId& type) {
  const int len = static_cast<int>(p.head.size());
  if (p.head == "this") {
    if (!facts_.member || facts_.is_static) {
      err(p.head_pos, len,
          "'this' in a key template of " + std::string(facts_.member ? "static method '" : "free function '") +
              f_.qualified_name + "', which has no object; use a parameter");
      return false;
    }
    if (p.steps.empty()) {
      err(p.head_pos, len, "'<this>' names the object itself; name one of its members, e.g. '<this.id()>'");
      return false;
    }
    if (p.steps.front().arrow) {
      err(p.steps.front().pos, static_cast<int>(p.steps.front().member.size()),
          "use '<this." + p.steps.front().member + ">' ('this' stands for the object, not a pointer)");
      return false;
    }
    access.self = true;
    type = facts_.self;
    return true;
  }
  int index = -1;
  for (std::size_t i = 0; i < f_.params.size(); ++i)
    if (f_.params[i].name == p.head) index = static_cast<int>(i);
  if (index < 0 && p.head.size() > 3 && p.head.rfind("arg", 0) == 0 &&
      std::all_of(p.head.begin() + 3, p.head.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    long n = std::strtol(p.head.c_str() + 3, nullptr, 10);
    if (n >= static_cast<long>(f_.params.size())) {
      err(p.head_pos, len,
          "placeholder '" + p.head + "' is out of range: '" + f_.qualified_name + "' has " +
              std::to_string(f_.params.size()) + (f_.params.size() == 1 ? " parameter" : " parameters"));
      return false;
    }
    index = static_cast<int>(n);
  }
  if (index < 0) {
    std::vector<std::string> names;
    for (const auto& q : f_.params) names.push_back(q.name);
    if (facts_.member && !facts_.is_static) names.push_back("this");
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    std::string hint = did_you_mean(p.head, names);
    err(p.head_pos, len,
        "unknown parameter '" + p.head + "' in key template" +
            (hint.empty() ? (f_.params.empty() ? std::string("; the method has no parameters")
                                               : "; parameters are: " + list)
                          : hint));
    return false;
  }
  access.param = f_.params[index].name;
  type = index < static_cast<int>(facts_.param_types.size()) ? facts_.param_types[index] : 0;
  return true;
}

bool Validator::placeholder(const KeyPiece& p, const ErrorAt& err, KeyAccess& access) {
  TypeId t = 0;
  if (!head(p, err, access, t)) return false;
  const bool on_self = p.head == "this";
  bool known = t != 0;
  for (std::size_t si = 0; si < p.steps.size(); ++si) {
    const KeyStep& st = p.steps[si];
    const int len = static_cast<int>(st.member.size());
    if (known) {
      const TypeShape shape = types_.shape(t);
      TypeId cur = t;
      if (shape == TypeShape::unknown) {
        known = false;
      } else if (st.arrow) {
        ArrowTarget a = shape == TypeShape::other ? ArrowTarget{ArrowTarget::not_pointer, 0} : types_.arrow(t);
        if (a.state == ArrowTarget::not_pointer) {
          err(st.pos, len, "'->' used on '" + types_.written(t) + "', which is not a pointer; use '.'");
          return false;
        }
        if (a.state == ArrowTarget::unknown) known = false;
        else cur = a.pointee;
      } else if (shape == TypeShape::pointer) {
        err(st.pos, len, "'.' used on pointer type '" + types_.written(t) + "'; use '->'");
        return false;
      }
      if (known && types_.shape(cur) == TypeShape::unknown) known = false;
      if (known && types_.shape(cur) != TypeShape::record) {
        err(st.pos, len, "no member named '" + st.member + "' in '" + types_.name(cur) + "' (not a class type)");
        return false;
      }
      if (known) {
        MemberLookup found = types_.members(cur, st.member);
        const std::string rec = types_.name(cur);
        if (found.found.empty() && found.uncertain) {
          known = false;
        } else if (found.found.empty()) {
          std::vector<std::string> cands;
          for (const auto& n : found.all_names)
            if (n != "operator->") cands.push_back(n);
          err(st.pos, len, "no member named '" + st.member + "' in '" + rec + "'" + did_you_mean(st.member, cands));
          return false;
        } else {
          MemberInfo m = found.found.front();
          const bool is_method = m.kind == MemberInfo::method;
          if (st.call && !is_method) {
            err(st.pos, len, "'" + st.member + "' is a data member of '" + rec + "', not a method; remove the '()'");
            return false;
          }
          if (!st.call && is_method) {
            err(st.pos, len, "'" + st.member + "' is a method of '" + rec + "'; call it as '" + st.member + "()'");
            return false;
          }
          if (is_method) {
            auto callable = std::find_if(found.found.begin(), found.found.end(), [](const MemberInfo& x) {
              return x.kind == MemberInfo::method && x.callable_without_arguments;
            });
            if (callable == found.found.end()) {
              err(st.pos, len,
                  "method '" + st.member + "' of '" + rec + "' takes arguments; key templates call methods "
                  "without arguments (parameters with defaults are fine)");
              return false;
            }
            m = *callable;
          }
          const bool reachable = m.access == MemberInfo::public_ ||
                                 (on_self && si == 0 && facts_.protected_visible && m.access == MemberInfo::protected_);
          if (!reachable) {
            std::string why = on_self && si == 0 && m.access == MemberInfo::protected_
                                  ? "' is protected in '" + rec + "', and the decorator reaches only public members"
                                  : "' is not " + std::string(on_self && si == 0 ? "an accessible" : "a public") +
                                        " member of '" + rec + "'";
            err(st.pos, len, "'" + st.member + why);
            return false;
          }
          if (on_self && si == 0 && is_method && !m.is_const) {
            err(st.pos, len,
                "'" + st.member + "' is not a const method of '" + rec + "'; a key may call only const methods of "
                "the object");
            return false;
          }
          t = m.type;
          if (t == 0 || types_.shape(t) == TypeShape::unknown) known = false;
        }
      }
    }
    access.steps.push_back({st.member, st.arrow, st.call});
  }
  if (known && !types_.formattable(t)) {
    const std::string tn = types_.name(t);
    err(p.pos, 0, "type '" + tn + "' cannot be used in a key; add weave_key(const " + tn + "&) or operator<<");
    return false;
  }
  return true;
}

bool Validator::key_template(const RawValue& v, const ArgDef& d, KeyRender& out) {
  auto col_at = [&](int pos) -> Loc {
    if (v.char_cols.empty()) return v.loc;
    pos = std::clamp(pos, 0, static_cast<int>(v.char_cols.size()) - 1);
    return {v.loc.line, v.char_cols[pos]};
  };
  KeySyntaxError se;
  auto pieces = parse_key_template(v.text, se);
  if (!pieces) {
    rep_.error(path_, col_at(se.pos), se.message, se.length);
    return false;
  }
  out.line = v.loc.line ? v.loc.line : raw_.loc.line;
  out.names_state = d.names_state;
  // How long a placeholder is as written ('->' has a '>' of its own); 1 when unclosed.
  auto written_length = [&](const KeyPiece& x) -> int {
    std::size_t close = v.text.find('>', static_cast<std::size_t>(x.pos));
    while (close != std::string::npos && close > 0 && v.text[close - 1] == '-') close = v.text.find('>', close + 1);
    return close == std::string::npos ? 1 : static_cast<int>(close) - x.pos + 1;
  };
  auto written = [&](const KeyPiece& x) {
    return v.text.substr(static_cast<std::size_t>(x.pos), static_cast<std::size_t>(written_length(x)));
  };
  bool ok = true;
  // A name of stored state renders values with weave::key_reserved
  // %-encoded: placeholders apart only by other text could render two calls
  // as one name.
  const KeyPiece* open = nullptr;  // the last placeholder, while no reserved character followed it
  for (const auto& p : *pieces) {
    if (!p.placeholder) {
      out.parts.push_back({false, p.literal, {}});
      if (p.literal.find_first_of(weave::key_reserved) != std::string::npos) open = nullptr;
      continue;
    }
    if (open && d.names_state) {
      const std::string second = written(p);
      rep_.error(path_, col_at(p.pos),
                 "placeholders '" + written(*open) + "' and '" + second +
                     "' need one of ':' '/' '|' ',' between them (their values may hold any other text, so two "
                     "calls could render one key)",
                 static_cast<int>(second.size()));
      ok = false;
    }
    open = &p;
    KeyAccess access;
    auto err = [&](int pos, int len, const std::string& msg) {
      rep_.error(path_, col_at(pos), msg, len == 0 ? written_length(p) : len);  // 0: the whole placeholder
    };
    if (!placeholder(p, err, access)) {
      ok = false;
      continue;
    }
    out.parts.push_back({true, "", std::move(access)});
  }
  return ok;
}

// The steps of one annotation's validation, in order. Each reports its errors
// and goes on, so that one run reports every error of the annotation.
bool Validator::run() {
  result_.model.name = raw_.name;
  result_.model.line = raw_.loc.line;
  result_.model.col = raw_.loc.col;
  check_synchronous();
  collect_arguments();
  read_order();
  check_conflicts();
  for (const auto& d : def_.args) convert_argument(d);
  check_skip_values();
  check_at_most();
  check_stores_result();
  check_detaches();
  check_stores_call();
  check_requires_one_of();
  check_runs_on_schedule();
  warn_throwing_values();
  check_not_yet_at_run_time();
  return ok_;
}

// A synchronous annotation (lock) ends when the call returns: not on a method
// whose work goes on after that.
void Validator::check_synchronous() {
  if (def_.synchronous && !facts_.async_reason.empty())
    error(raw_.loc,
          "'" + raw_.name + "' ends when the call returns, but '" + f_.name + "' returns '" + f_.ret +
              "', whose work may still run after that (" + facts_.async_reason +
              "); put the annotation on the function that does the work",
          static_cast<int>(raw_.name.size()));
}

// The written arguments by name: unknown and duplicate ones are errors.
void Validator::collect_arguments() {
  std::vector<std::string> arg_names = {"order"};
  for (const auto& a : def_.args) arg_names.push_back(a.name);
  for (const auto& a : raw_.args) {
    if (a.name != "order" && !def_.find(a.name)) {
      error(a.loc, "unknown argument '" + a.name + "' for annotation '" + raw_.name + "'" +
                       did_you_mean(a.name, arg_names),
            static_cast<int>(a.name.size()));
      continue;
    }
    if (written_.count(a.name)) {
      error(a.loc, "duplicate argument '" + a.name + "' for annotation '" + raw_.name + "'",
            static_cast<int>(a.name.size()));
      continue;
    }
    written_[a.name] = &a;
  }
}

// `order=`, which every annotation accepts; unwritten, the vocabulary's.
void Validator::read_order() {
  result_.model.order = def_.order;
  auto it = written_.find("order");
  if (it == written_.end()) return;
  const RawValue& v = it->second->value;
  char* end = nullptr;
  long n = v.kind == RawValue::number ? std::strtol(v.text.c_str(), &end, 10) : 0;
  if (v.kind != RawValue::number || !end || *end)
    error(v.loc, "argument 'order' of '" + raw_.name + "' expects an integer", v.length);
  else
    result_.model.order = static_cast<int>(n);
}

// Arguments that may not be written together: reported at the later one.
void Validator::check_conflicts() {
  for (const auto& d : def_.args)
    if (written_.count(d.name))
      for (const auto& c : d.conflicts)
        if (written_.count(c) && written_[c]->loc.line * 100000 + written_[c]->loc.col <
                                     written_[d.name]->loc.line * 100000 + written_[d.name]->loc.col)
          error(written_[d.name]->loc, "'" + d.name + "' cannot be combined with '" + c + "'",
                static_cast<int>(d.name.size()));
}

// An argument's value, written or default ("" when it has none): for the
// rules that depend on another argument's value (required_if, stores_result).
std::string Validator::effective(const std::string& name) const {
  if (auto it = written_.find(name); it != written_.end() && it->second) return it->second->value.text;
  const ArgDef* d = def_.find(name);
  if (d && d->default_value && d->default_value->is_string()) return d->default_value->get<std::string>();
  return "";
}

// Where it was written, or null (not written, or present by its default).
const RawArg* Validator::written(const std::string& name) const {
  auto it = written_.find(name);
  return it == written_.end() ? nullptr : it->second;
}

// One argument of the vocabulary: required or not, then its written value or
// its default converted to the ArgSpec weavegen emits.
void Validator::convert_argument(const ArgDef& d) {
  if (!check_required(d)) return;
  if (auto it = written_.find(d.name); it != written_.end()) convert_written(d, *it->second);
  else convert_default(d);
}

// required_if and required; false when there is nothing to convert.
bool Validator::check_required(const ArgDef& d) {
  auto it = written_.find(d.name);
  const bool has = it != written_.end();
  if (!d.required_if_arg.empty()) {
    bool cond = std::count(d.required_if_values.begin(), d.required_if_values.end(), effective(d.required_if_arg));
    std::string vals;
    for (const auto& v : d.required_if_values) vals += (vals.empty() ? "" : "|") + v;
    if (cond && !has) {
      const RawArg* cause = written(d.required_if_arg);
      error(cause ? cause->value.loc : raw_.loc,
            "missing argument '" + d.name + "': " + d.required_if_arg + "=" + effective(d.required_if_arg) +
                " needs '" + d.name + "=...'",
            cause ? cause->value.length : static_cast<int>(raw_.spelled.size()));
      return false;
    }
    if (!cond && has) {
      error(it->second->loc, "argument '" + d.name + "' is only allowed with " + d.required_if_arg + "=" + vals,
            static_cast<int>(d.name.size()));
      return false;
    }
  }
  if (!d.only_with_arg.empty() && has && !only_with_holds(d)) {
    std::string with = "'" + d.only_with_arg + "'";
    if (!d.only_with_values.empty()) {
      with = d.only_with_arg + "=";
      for (std::size_t i = 0; i < d.only_with_values.size(); ++i) with += (i ? "|" : "") + d.only_with_values[i];
    }
    error(it->second->loc, "argument '" + d.name + "' of '" + raw_.name + "' is only allowed with " + with,
          static_cast<int>(d.name.size()));
    return false;
  }
  if (d.required && !has) {
    error(raw_.loc, "annotation '" + raw_.name + "' requires argument '" + d.name + "'",
          static_cast<int>(raw_.spelled.size()));
    return false;
  }
  return true;
}

// A vocabulary default as if written at the annotation (a JSON string is
// read by the argument's type: "30s" a duration, "info" an enumerator).
RawValue raw_default(const nlohmann::json& j, ArgType type, Loc loc, int length) {
  RawValue v;
  v.loc = loc;
  v.length = length;
  if (j.is_string()) {
    v.text = j.get<std::string>();
    const bool text = type == ArgType::template_ || type == ArgType::template_list || type == ArgType::string ||
                      type == ArgType::cron || type == ArgType::time_zone;
    const bool number =
        (type == ArgType::duration && v.text != "forever") || type == ArgType::rate || type == ArgType::percent;
    v.kind = text ? RawValue::string : number ? RawValue::number : RawValue::identifier;
  } else if (j.is_boolean()) {
    v.kind = RawValue::boolean;
    v.text = j.get<bool>() ? "true" : "false";
  } else if (j.is_number()) {
    v.kind = RawValue::number;
    v.text = j.is_number_integer() ? std::to_string(j.get<long long>()) : j.dump();
  } else if (j.is_array()) {
    v.kind = RawValue::list;
    for (const auto& e : j) v.items.push_back(raw_default(e, type, loc, length));
  } else {
    v.kind = RawValue::identifier;  // null or an object: refused by every type but identifier
    v.text = j.dump();
  }
  return v;
}

// The vocabulary's default of an argument not written (none when it conflicts
// with a written one); it then counts as present for the arguments after it.
// It is converted as a written value is, and refused as one would be.
void Validator::convert_default(const ArgDef& d) {
  for (const auto& c : d.conflicts)
    if (written_.count(c)) return;
  if (!only_with_holds(d)) return;
  if (d.default_qualified_name) {
    result_.model.args.push_back({d.name, arg::Text{facts_.default_key}});
    return;
  }
  if (!d.default_value) return;
  written_[d.name] = nullptr;  // marks "has a value" without a source position
  const int errors = rep_.errors();
  const RawValue v = raw_default(*d.default_value, d.type, raw_.loc, static_cast<int>(raw_.spelled.size()));
  if (auto value = convert(d, v)) result_.model.args.push_back({d.name, std::move(*value)});
  else if (rep_.errors() > errors)
    rep_.note(def_.file, {},
              "'" + d.name + "' of '" + raw_.name + "' is not written: its default " + d.default_value->dump() +
                  " is refused");
}

// A written value: checked against the argument's type, then converted.
void Validator::convert_written(const ArgDef& d, const RawArg& a) {
  if (auto value = convert(d, a.value)) result_.model.args.push_back({d.name, std::move(*value)});
}

std::nullopt_t Validator::refuse(Loc l, const std::string& m, int len) {
  error(l, m, len);
  return std::nullopt;
}

// `v` as the typed value of argument `d`, or nothing when it does not fit
// (reported). Key templates take the function's next slots.
std::optional<ArgValue> Validator::convert(const ArgDef& d, const RawValue& v) {
  auto wrong = [&] {
    std::string exp = expected_name(d.type);
    if (d.type == ArgType::enumeration) {
      std::string vals;
      for (const auto& x : d.values) vals += (vals.empty() ? " " : ", ") + x;
      exp += vals;
    }
    return refuse(v.loc, "argument '" + d.name + "' of '" + raw_.name + "' expects " + exp + ", not " + kind_name(v.kind),
                  v.length);
  };
  switch (d.type) {
    case ArgType::template_: {
      if (v.kind != RawValue::string) return wrong();
      KeyRender kr;
      if (!key_template(v, d, kr)) {
        ok_ = false;
        return std::nullopt;
      }
      f_.slots.push_back(std::move(kr));
      return arg::Template{f_.slots.size() - 1, v.text};
    }
    case ArgType::template_list: {
      std::vector<const RawValue*> items;
      if (v.kind == RawValue::string) items.push_back(&v);
      else if (v.kind == RawValue::list) for (const auto& x : v.items) items.push_back(&x);
      else return wrong();
      std::vector<KeyRender> renders;
      arg::TemplateList list;
      bool good = true;
      for (const RawValue* x : items) {
        if (x->kind != RawValue::string) {
          error(x->loc, "argument '" + d.name + "' of '" + raw_.name + "' expects key template strings, not " +
                            kind_name(x->kind), x->length);
          good = false;
          continue;
        }
        KeyRender kr;
        if (!key_template(*x, d, kr)) { good = false; continue; }
        list.sources += (renders.empty() ? "" : ",") + x->text;
        renders.push_back(std::move(kr));
      }
      if (!good) {
        ok_ = false;
        return std::nullopt;
      }
      if (renders.empty()) return refuse(v.loc, "argument '" + d.name + "' needs at least one key template", v.length);
      list.first = f_.slots.size();
      list.n = renders.size();
      for (auto& r : renders) f_.slots.push_back(std::move(r));
      return list;
    }
    case ArgType::duration: {
      if (v.kind == RawValue::identifier && v.text == "forever") {
        if (!d.forever)
          return refuse(v.loc, "argument '" + d.name + "' of '" + raw_.name + "' does not accept 'forever'", v.length);
        return arg::Forever{};
      }
      if (v.kind != RawValue::number) return wrong();
      if (v.text[0] == '-') return refuse(v.loc, "duration '" + v.text + "' must not be negative", v.length);
      std::int64_t ms = 0;
      std::string e = parse_duration(v.text, ms);
      if (!e.empty()) return refuse(v.loc, e, v.length);
      if (d.min && ms < *d.min)
        return refuse(v.loc, "argument '" + d.name + "' of '" + raw_.name + "' must be at least " + d.min_text +
                                 ", not " + v.text,
                      v.length);
      return arg::DurationMs{ms};
    }
    case ArgType::integer: {
      char* end = nullptr;
      if (v.kind != RawValue::number) return wrong();
      long long n = std::strtoll(v.text.c_str(), &end, 10);
      if (!end || *end)
        return refuse(v.loc, "argument '" + d.name + "' of '" + raw_.name + "' expects an integer, not '" + v.text + "'",
                      v.length);
      if (d.min && n < *d.min)
        return refuse(v.loc, "argument '" + d.name + "' of '" + raw_.name + "' must be at least " +
                                 std::to_string(*d.min) + ", not " + v.text,
                      v.length);
      if (d.max && n > *d.max)
        return refuse(v.loc, "argument '" + d.name + "' of '" + raw_.name + "' must be at most " +
                                 std::to_string(*d.max) + ", not " + v.text,
                      v.length);
      return arg::Integer{n};
    }
    case ArgType::enumeration: {
      if (v.kind != RawValue::identifier) return wrong();
      const auto at = std::find(d.values.begin(), d.values.end(), v.text);
      if (at == d.values.end()) {
        std::string vals;
        for (const auto& x : d.values) vals += (vals.empty() ? "" : ", ") + x;
        return refuse(v.loc, "invalid value '" + v.text + "' for argument '" + d.name + "' of '" + raw_.name +
                                 "'; expected one of: " + vals + did_you_mean(v.text, d.values),
                      v.length);
      }
      return arg::Enum{v.text, at - d.values.begin()};
    }
    case ArgType::boolean:
      if (v.kind != RawValue::boolean) return wrong();
      return arg::Bool{v.text == "true"};
    case ArgType::string: {
      if (v.kind != RawValue::string) return wrong();
      KeySyntaxError unused;
      if (const auto pieces = parse_key_template(v.text, unused))
        for (const KeyPiece& p : *pieces)
          if (p.placeholder)
            return refuse(v.loc, "argument '" + d.name + "' of '" + raw_.name + "' is plain text, not a key template: '<" +
                                     p.head + "...>' would never be rendered",
                          v.length);
      return arg::Text{v.text};
    }
    case ArgType::rate: {
      if (v.kind != RawValue::number) return wrong();
      std::int64_t permits = 0, per_ms = 0;
      if (std::string e = parse_rate(v.text, permits, per_ms); !e.empty())
        return refuse(v.loc, "argument '" + d.name + "' of '" + raw_.name + "': " + e, v.length);
      return arg::Rate{permits, per_ms};
    }
    case ArgType::percent: {
      // 1% to 100%, whole: what the interceptor reads as an integer.
      if (v.kind != RawValue::number || v.text.size() < 2 || v.text.back() != '%') return wrong();
      const std::string digits = v.text.substr(0, v.text.size() - 1);
      if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 3 || std::stoi(digits) < 1 ||
          std::stoi(digits) > 100)
        return refuse(v.loc, "argument '" + d.name + "' of '" + raw_.name + "' must be a whole percentage from 1% to 100%, not " +
                                 v.text,
                      v.length);
      return arg::Integer{std::stoi(digits)};
    }
    case ArgType::exception_types: {
      // One type, or a list of them: each must name a type where the method
      // is declared (the generated code catches them by these names).
      const std::vector<RawValue> one{v};
      const std::vector<RawValue>& items = v.kind == RawValue::list ? v.items : one;
      if (items.empty())
        return refuse(v.loc, "argument '" + d.name + "' of '" + raw_.name + "' names no exception type", v.length);
      arg::ExceptionTypes out;
      for (const RawValue& item : items) {
        if (item.kind != RawValue::identifier) return wrong();
        const std::string q = facts_.resolve_type ? facts_.resolve_type(item.text) : std::string();
        if (q.empty())
          return refuse(item.loc, "argument '" + d.name + "' of '" + raw_.name + "': '" + item.text +
                                      "' does not name a type declared before '" + f_.qualified_name +
                                      "' (declare it, or include its header, first)",
                        item.length);
        out.types.push_back(q);
        out.written += (out.written.empty() ? "" : ", ") + item.text;
      }
      return out;
    }
    case ArgType::cron:
      if (v.kind != RawValue::string) return wrong();
      return convert_cron(d, v);
    case ArgType::time_zone:
      if (v.kind != RawValue::string) return wrong();
      if (!weave::detail::is_known_time_zone(v.text))
        return refuse(v.loc, "argument '" + d.name + "' of '" + raw_.name + "': unknown time zone '" + v.text +
                                 "' (not in the tz database of this machine, /usr/share/zoneinfo; e.g. "
                                 "\"Europe/Paris\", \"UTC\")",
                      v.length);
      return arg::Text{v.text};
    case ArgType::identifier:
      if (v.kind != RawValue::identifier) return wrong();
      if (d.is_fallback) {
        if (!(facts_.has_function && facts_.has_function(v.text)))
          return refuse(v.loc, "no function named '" + v.text + "' in the scope of '" + f_.qualified_name +
                                   "' to use as fallback",
                        v.length);
        result_.fallback = v.text;
        result_.fallback_loc = v.loc;
      }
      return arg::Text{v.text};
  }
  return std::nullopt;
}

// A cron expression, parsed as the runtime will parse it: a refused one is
// reported at the field at fault (CronError::offset() in the expression, the
// column of that character in the literal, escapes read).
std::optional<ArgValue> Validator::convert_cron(const ArgDef& d, const RawValue& v) {
  try {
    weave::detail::CronExpression::parse(v.text);
  } catch (const weave::detail::CronError& e) {
    Loc at = v.loc;
    if (!v.char_cols.empty())
      at.col = v.char_cols[std::min(e.offset(), v.char_cols.size() - 1)];
    return refuse(at, "argument '" + d.name + "' of '" + raw_.name + "': " + e.problem(),
                  std::max<int>(1, static_cast<int>(e.text().size())));
  }
  return arg::Text{v.text};
}

// An argument with "only_with": whether what it needs is there (the other
// argument written, or its value, written or default, one of the values).
bool Validator::only_with_holds(const ArgDef& d) const {
  if (d.only_with_arg.empty()) return true;
  if (d.only_with_values.empty()) return written(d.only_with_arg) != nullptr;
  return std::count(d.only_with_values.begin(), d.only_with_values.end(), effective(d.only_with_arg)) > 0;
}

// A written value that lets the interceptor skip the method (on_busy=skip)
// needs a method that can return nothing, or a fallback.
void Validator::check_skip_values() {
  for (const auto& d : def_.args) {
    const RawArg* at = written(d.name);
    if (!at) continue;
    const RawValue& v = at->value;
    if (std::count(d.skip_values.begin(), d.skip_values.end(), v.text) && f_.skip == FunctionModel::Skip::cannot) {
      bool has_fallback = false;
      for (const auto& o : def_.args) has_fallback |= o.is_fallback && written(o.name);
      if (!has_fallback)
        error(v.loc,
              d.name + "=" + v.text + " needs a method that returns void or std::optional<T> (or a fallback); '" +
                  f_.qualified_name + "' returns '" + f_.ret + "'",
              v.length);
    }
  }
}

// A duration bounded by another (local_ttl <= ttl), each written or default:
// compared as converted, each unchecked when it has no valid value.
void Validator::check_at_most() {
  auto ms_of = [&](const ArgDef& a) -> std::optional<std::int64_t> {
    for (const ArgModel& m : result_.model.args) {
      if (m.name != a.name) continue;
      if (std::holds_alternative<arg::Forever>(m.value)) return INT64_MAX;
      if (const auto* d = std::get_if<arg::DurationMs>(&m.value)) return d->ms;
    }
    return std::nullopt;
  };
  auto shown = [&](const ArgDef& a) {
    return a.name + "=" + effective(a.name) + (written(a.name) ? "" : " (the default)");
  };
  for (const auto& d : def_.args) {
    if (d.at_most.empty()) continue;
    const ArgDef* bound = def_.find(d.at_most);
    if (!bound) continue;
    const auto mine = ms_of(d), limit = ms_of(*bound);
    if (!mine || !limit || *mine <= *limit) continue;
    const RawArg* at = written(d.name) ? written(d.name) : written(bound->name);
    error(at ? at->value.loc : raw_.loc,
          "'" + d.name + "' of '" + raw_.name + "' must be at most '" + bound->name + "': " + shown(d) +
              " is longer than " + shown(*bound),
          at ? at->value.length : static_cast<int>(raw_.name.size()));
  }
}

// Results kept as JSON (cache, dedupe's replay): a value that exists and is
// complete when the call returns.
void Validator::check_stores_result() {
  if (!def_.stores_result) return;
  const std::string& on = def_.stores_result_arg;
  const std::string value = on.empty() ? "" : effective(on);
  if (!on.empty() && !std::count(def_.stores_result_values.begin(), def_.stores_result_values.end(), value)) return;
  const RawArg* cause = on.empty() ? nullptr : written(on);
  const Loc l = cause ? cause->value.loc : raw_.loc;
  const int len = cause ? cause->value.length : static_cast<int>(raw_.name.size());
  const std::string stores = "'" + raw_.name + "'" + (on.empty() ? "" : " with " + on + "=" + value) +
                             " stores the result of '" + f_.qualified_name + "' as JSON";
  if (f_.ret_void)
    error(l, stores + ", but it returns void: there is no result to store", len);
  else if (facts_.returns_reference)
    error(l, stores + ", but it returns '" + f_.ret + "', a reference: a stored copy cannot be returned as a "
                "reference to the original; return it by value",
          len);
  else if (!def_.synchronous && !facts_.async_reason.empty())
    error(l, stores + " when the call returns, but it returns '" + f_.ret +
                 "', whose value may still be computed after that (" + facts_.async_reason +
                 "); put the annotation on the function that computes the value",
          len);
  else
    f_.stores_result = true;
}

// An argument that runs the call again later, after it returned ("detaches":
// cache's refresh_after): the proxy keeps copies of the arguments
// (weave::detail::detachable).
void Validator::check_detaches() {
  for (const auto& d : def_.args) {
    if (!d.detaches || !written_.count(d.name)) continue;
    const RawArg* at = written(d.name);  // null: present by its default
    const Loc l = at ? at->value.loc : raw_.loc;
    const int len = at ? at->value.length : static_cast<int>(raw_.spelled.size());
    if (facts_.async) {
      error(l,
            "'" + d.name + "' of '" + raw_.name + "' runs '" + f_.qualified_name +
                "' again in the background, which Weave does not do for an asynchronous method yet; drop " + d.name,
            len);
      continue;
    }
    for (std::size_t i = 0; i < f_.params.size() && i < facts_.param_types.size(); ++i) {
      if (types_.copyable(facts_.param_types[i])) continue;
      error(l,
            "'" + d.name + "' of '" + raw_.name + "' runs '" + f_.qualified_name +
                "' again in the background with copies of its arguments, but parameter '" + f_.params[i].name +
                "' has type '" + types_.name(facts_.param_types[i]) +
                "', which cannot be copied; pass a copyable type (a value, or std::shared_ptr), or drop " + d.name,
            len);
    }
    f_.detaches = true;
  }
}

// A call kept as JSON for a worker to run later, perhaps in another process
// ("stores_call": delay, scheduled): the caller gets no result, and every
// argument must be a value the stored copy can stand for. A scheduled
// method's shape is check_runs_on_schedule's; here only what both share.
void Validator::check_stores_call() {
  if (!def_.stores_call) return;
  const int len = static_cast<int>(raw_.name.size());
  auto refuse = [&](const std::string& why) { error(raw_.loc, why, len); };
  const std::string stores = def_.runs_on_schedule
                                 ? "'" + raw_.name + "' runs '" + f_.qualified_name + "' on a schedule"
                                 : "'" + raw_.name + "' stores the call of '" + f_.qualified_name + "' to run it later";
  if (f_.stores_call) return refuse(stores + ", but another of its annotations stores it already; keep one");
  if (def_.runs_on_schedule) {
    if (!facts_.member || facts_.is_static)
      refuse(stores + " on the object a worker serves, but it is a " +
             (facts_.member ? "static method" : "free function") + ", which has none; make it a non-static method");
    if (ok_) {
      f_.stores_call = true;
      result_.model.stores_call = true;
    }
    return;
  }
  if (facts_.async)
    return refuse(stores + ", but it is asynchronous (it returns '" + f_.ret +
                  "'): a worker runs a stored call to its end and awaits nothing; declare it returning void");
  if (!facts_.member || facts_.is_static)
    refuse(stores + " on the object a worker serves, but it is a " +
           (facts_.member ? "static method" : "free function") + ", which has none; make it a non-static method");
  if (!f_.ret_void) refuse(stores + ", so its caller gets no result: it must return void, not '" + f_.ret + "'");
  for (std::size_t i = 0; i < f_.params.size() && i < facts_.param_types.size(); ++i) {
    const TypeId t = facts_.param_types[i];
    const std::string param = stores + ", but parameter '" + f_.params[i].name + "' ";
    const std::string name = types_.name(t);
    const bool view = name.rfind("std::basic_string_view<", 0) == 0 || name.rfind("std::span<", 0) == 0;
    switch (types_.passing(t)) {
      case Passing::reference:
        refuse(param + "is '" + types_.written(t) + " &', a non-const reference: writes through it would reach the "
               "stored copy, never the caller; pass it by value or const reference");
        continue;
      case Passing::rvalue_reference:
        refuse(param + "is '" + types_.written(t) + " &&', an rvalue reference: a stored call passes a copy; "
               "take it by value or const reference");
        continue;
      default: break;
    }
    if (types_.shape(t) == TypeShape::pointer)
      refuse(param + "is '" + types_.written(t) + "', a pointer: what it points to is not stored, and the address "
             "means nothing when the call runs later, perhaps in another process; pass the value");
    else if (view)
      refuse(param + "is '" + types_.written(t) + "', a view: what it views may be gone when the call runs; pass "
             "an owning type (std::string, std::vector)");
    else if (!types_.copyable(t))
      refuse(param + "has type '" + name + "', which cannot be copied; a stored call keeps copies of its arguments");
  }
  if (ok_) {
    f_.stores_call = true;
    result_.model.stores_call = true;
  }
}

// "requires_one_of" (scheduled's cron / every): none written is an error here;
// two written, each other's "conflicts", are refused by check_conflicts.
void Validator::check_requires_one_of() {
  if (def_.requires_one_of.empty()) return;
  for (const auto& n : def_.requires_one_of)
    if (written(n)) return;
  std::string names;
  for (std::size_t i = 0; i < def_.requires_one_of.size(); ++i)
    names += std::string(i == 0 ? "" : i + 1 == def_.requires_one_of.size() ? " or " : ", ") + "'" +
             def_.requires_one_of[i] + "=...'";
  error(raw_.loc, "annotation '" + raw_.name + "' needs one of " + names, static_cast<int>(raw_.name.size()));
}

// weave::Tick as the canonical spelling names it, in Weave's versioned
// inline namespace (weave::v0::Tick) or not.
static bool is_tick(const std::string& name) {
  const std::string prefix = "weave::", suffix = "::Tick";
  if (name == "weave::Tick") return true;
  if (name.size() <= prefix.size() + suffix.size() || name.rfind(prefix, 0) != 0 ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
    return false;
  const std::string middle = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  return middle.size() > 1 && middle[0] == 'v' &&
         std::all_of(middle.begin() + 1, middle.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

// A method Weave runs itself on a schedule ("runs_on_schedule": scheduled):
// nobody receives its result, and it gets no arguments but the run's Tick.
void Validator::check_runs_on_schedule() {
  if (!def_.runs_on_schedule) return;
  const int len = static_cast<int>(raw_.name.size());
  const std::string runs = "'" + raw_.name + "' runs '" + f_.qualified_name + "' on a schedule, with no caller";
  if (facts_.async || !f_.ret_void)
    error(raw_.loc, runs + ": it must return void, not '" + f_.ret + "'", len);
  const bool one_tick = f_.params.size() == 1 && !facts_.param_types.empty() &&
                        is_tick(types_.name(facts_.param_types[0])) &&
                        (types_.passing(facts_.param_types[0]) == Passing::value ||
                         types_.passing(facts_.param_types[0]) == Passing::const_reference);
  if (!f_.params.empty() && !one_tick) {
    std::string what = "it takes " + std::to_string(f_.params.size()) + " parameters";
    if (f_.params.size() == 1 && !facts_.param_types.empty()) {
      const TypeId t = facts_.param_types[0];
      const Passing passing = types_.passing(t);
      what = "its parameter '" + f_.params[0].name + "' is '" + types_.written(t) +
             (passing == Passing::reference ? " &" : passing == Passing::rvalue_reference ? " &&" : "") + "'";
    }
    error(raw_.loc, runs + ": it must take no parameters, or one weave::Tick (by value or const reference), but " + what,
          len);
  }
}

// An annotation Weave has no interceptor for yet ("not_yet_at_run_time"):
// refused once everything else about it passed, so the header's other
// mistakes are all reported first, and no proxy calls a missing interceptor.
void Validator::check_not_yet_at_run_time() {
  if (def_.not_yet_at_run_time.empty() || !ok_) return;
  error(raw_.loc,
        "'" + raw_.name + "' on '" + f_.qualified_name + "' is checked but not yet supported at run time: " +
            def_.not_yet_at_run_time,
        static_cast<int>(raw_.name.size()));
}

// A value that makes the interceptor throw ("throwing_values": on_busy=throw)
// out of a noexcept method, written or default.
void Validator::warn_throwing_values() {
  if (!facts_.is_noexcept) return;
  for (const auto& d : def_.args) {
    const auto throws = d.throwing_values.find(effective(d.name));
    if (throws == d.throwing_values.end()) continue;
    const RawArg* at = written(d.name);
    rep_.warning(path_, at ? at->value.loc : raw_.loc,
                 "'" + f_.qualified_name + "' is noexcept but " + d.name + "=" + throws->first + ": " +
                     throws->second + " will call std::terminate",
                 at ? at->value.length : static_cast<int>(raw_.spelled.size()));
  }
}

}  // namespace

bool validate_annotation(const RawAnnotation& raw, const AnnotationDef& def, const FunctionFacts& facts,
                         TypeQuery& types, FunctionModel& f, Reporter& rep, const std::string& path,
                         ValidatedAnnotation& out) {
  return Validator(raw, def, facts, types, f, rep, path, out).run();
}

}  // namespace weavegen
