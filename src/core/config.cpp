// The one configuration loader (weave/config.h): every feature's options
// from defaults < the JSON file < the environment < code, by the feature's
// description (core/feature_config.h).
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "core/feature_config.h"
#include "core/process.h"
#include "weave/annotation.h"  // weave::forever
#include "weave/config.h"
#include "weave/duration.h"
#include "weave/error.h"
#include "weave/json_codec.h"
#include "weave/url.h"

namespace WEAVE_NAMESPACE {

using std::chrono::milliseconds;

milliseconds parse_duration(std::string_view text, std::string_view what) {
  const DurationParse d = parse_duration_text(text);
  if (!d) throw ConfigError(std::string(what) + ": '" + std::string(text) + "': " + d.error);
  return d.value;
}

namespace detail {

milliseconds read_duration(const nlohmann::json& v, bool forever_ok) {
  // (a negative count reads as itself: validate() says what the field needs)
  if (v.is_number_integer()) {
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(max_duration.count()))
      throw BadValue{"duration " + v.dump() + " ms is too long (at most 10 years)"};
    return milliseconds(v.get<std::int64_t>());
  }
  if (v.is_string()) {
    const std::string text = v.get<std::string>();
    if (forever_ok && text == "forever") return forever;
    const DurationParse d = parse_duration_text(text);
    if (!d) throw BadValue{"'" + text + "': " + d.error};
    return d.value;
  }
  throw BadValue{std::string("expected a duration like \"30s\"") + (forever_ok ? ", \"forever\"" : "") +
                 " or integer milliseconds, got " + v.dump()};
}

nlohmann::json show_duration(milliseconds d) {
  if (d == forever) return "forever";
  const std::int64_t ms = d.count();
  for (const auto& [unit, scale] : {std::pair{"h", 3'600'000}, {"min", 60'000}, {"s", 1000}})
    if (ms != 0 && ms % scale == 0) return std::to_string(ms / scale) + unit;
  return std::to_string(ms) + "ms";
}

namespace {

// Every feature Weave has, in the order `weave config` shows them: a file
// may have a section for one this program does not link (one file serves
// several programs); its keys are then not checked here.
constexpr std::string_view kFeatures[] = {"lock", "cache", "dedupe", "queue", "quota", "resilience"};

std::size_t feature_rank(std::string_view name) {
  return static_cast<std::size_t>(std::find(std::begin(kFeatures), std::end(kFeatures), name) - std::begin(kFeatures));
}

struct Registry {
  Mutex mutex;
  std::vector<FeatureConfig> features WEAVE_GUARDED_BY(mutex);  // in kFeatures' order
};
Registry& registry() {
  static auto* r = new Registry;  // usable during exit
  return *r;
}

}  // namespace

std::vector<FeatureConfig> registered() {
  Registry& r = registry();
  Guard lock(r.mutex);
  return r.features;
}

namespace {

FeatureConfig registered_feature(std::string_view feature) {
  Registry& r = registry();
  Guard lock(r.mutex);
  for (const FeatureConfig& f : r.features)
    if (f.name == feature) return f;
  throw UsageError("weave::load_options: the " + std::string(feature) + " library is not linked into this program");
}

std::string upper(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::string known_keys(const FeatureConfig& f) {
  std::string known;
  for (const OptionField& field : f.fields) known += (known.empty() ? "" : ", ") + field.name;
  return known;
}

// The JSON file of the sources, read once per load.
struct File {
  std::string source;  // "config file 'weave.json'" (and how it was named)
  nlohmann::json json;
};

std::optional<File> read_file(const ConfigSources& sources) {
  File file;
  std::string path;
  if (sources.file) {
    path = *sources.file;
    file.source = "config file '" + path + "'";
  } else if (const char* p = sources.environment ? std::getenv("WEAVE_CONFIG") : nullptr; p && *p) {
    path = p;
    file.source = "config file '" + path + "' (from WEAVE_CONFIG)";
  } else {
    return std::nullopt;
  }
  std::ifstream in(path);
  if (!in) throw ConfigError(file.source + ": cannot read '" + path + "'");
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string text = buf.str();
  // A value nested this deep is refused before parsing: the error of a bad
  // value prints it (dump(), which recurses once per level).
  if (json_deeper_than(text, kMaxJsonDepth))
    throw ConfigError(file.source + ": bad JSON: nested more than " + std::to_string(kMaxJsonDepth) + " levels deep");
  try {
    file.json = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for a number like 1E400
    throw ConfigError(file.source + ": bad JSON: " + e.what());
  }
  if (!file.json.is_object()) throw ConfigError(file.source + ": expected a JSON object at the top");
  const std::vector<FeatureConfig> linked = registered();
  for (const auto& item : file.json.items()) {
    const std::string& key = item.key();  // (no structured binding: clang 14 cannot capture one)
    if (key == "url" || feature_rank(key) < std::size(kFeatures)) continue;
    if (std::any_of(linked.begin(), linked.end(), [&](const FeatureConfig& f) { return f.name == key; })) continue;
    std::string known = "url";
    for (std::string_view f : kFeatures) known += ", " + std::string(f);
    throw ConfigError(file.source + ": unknown key '" + key + "' (known: " + known + ")");
  }
  return file;
}

// One feature's options being loaded, and where each field's value came from.
struct Loading {
  const FeatureConfig& feature;
  std::shared_ptr<void> options;
  std::map<std::string, std::string, std::less<>> origin;  // field -> source

  void set(const OptionField& field, std::string_view key, const nlohmann::json& value, const std::string& source) {
    try {
      field.read(options.get(), value);
    } catch (const BadValue& bad) {
      throw ConfigError(source + ": " + std::string(key) + ": " + bad.why);
    }
    origin[field.name] = source;
  }
};

// A ConfigError from validate() about `field` is said again with the
// source of the field's value and its key; one about a default or without
// a field goes as it is.
[[noreturn]] void rethrow_with_origin(const ConfigError& e, const Loading& l) {
  const auto it = l.origin.find(e.key());
  if (e.key().empty() || it == l.origin.end() || it->second == "default") throw e;
  // the key path says whose field: the struct's name is left out
  throw ConfigError(it->second + ": " + l.feature.name + "." + e.key() + ": " + e.problem(), e.key());
}

// The environment's text for a field: a number for a numeric field (what
// the file would hold), else the text.
nlohmann::json env_value(const OptionField& field, const char* text) {
  if (!field.numeric) return text;
  std::uint64_t n = 0;
  const std::string_view t(text);
  const auto r = std::from_chars(t.data(), t.data() + t.size(), n);
  if (r.ec != std::errc() || r.ptr != t.data() + t.size()) return text;  // the reader says what it expected
  return n;
}

Loading load(const FeatureConfig& f, const std::optional<File>& file, const ConfigSources& sources) {
  Loading l{f, f.make_default(), {}};
  for (const OptionField& field : f.fields) l.origin[field.name] = "default";
  // 3. the file: the shared url, then the feature's section
  if (file) {
    if (file->json.contains("url"))
      for (const OptionField& field : f.fields)
        if (field.is_url) l.set(field, "url", file->json["url"], file->source);
    if (file->json.contains(f.name)) {
      const nlohmann::json& section = file->json[f.name];
      if (!section.is_object()) throw ConfigError(file->source + ": '" + f.name + "' must be an object");
      for (const auto& item : section.items()) {
        const std::string& key = item.key();
        const nlohmann::json& value = item.value();
        const auto field = std::find_if(f.fields.begin(), f.fields.end(), [&](const OptionField& o) {
          return o.name == key || std::find(o.aliases.begin(), o.aliases.end(), key) != o.aliases.end();
        });
        if (field == f.fields.end())
          throw ConfigError(file->source + ": unknown key '" + f.name + "." + key + "' (known: " + known_keys(f) + ")");
        l.set(*field, f.name + "." + key, value, file->source);
      }
    }
  }
  // 2. the environment: WEAVE_URL, then the feature's own variables
  if (sources.environment) {
    if (const char* shared = std::getenv("WEAVE_URL"); shared && *shared)
      for (const OptionField& field : f.fields)
        if (field.is_url) l.set(field, f.name + ".url", shared, "environment WEAVE_URL");
    for (const OptionField& field : f.fields) {
      const std::string name = "WEAVE_" + upper(f.name) + "_" + upper(field.name);
      if (const char* text = std::getenv(name.c_str()); text && *text)
        l.set(field, f.name + "." + field.name, env_value(field, text), "environment " + name);
    }
  }
  // 1. code
  if (sources.url)
    for (const OptionField& field : f.fields)
      if (field.is_url) l.set(field, f.name + ".url", *sources.url, "code");
  if (f.code) {
    std::vector<std::string> set;
    f.code(l.options.get(), sources, set);
    for (const std::string& name : set) l.origin[name] = "code";
  }
  try {
    f.validate(l.options.get());
  } catch (const ConfigError& e) {
    rethrow_with_origin(e, l);
  }
  return l;
}

}  // namespace

bool register_feature_config(FeatureConfig config) {
  Registry& r = registry();
  Guard lock(r.mutex);
  std::erase_if(r.features, [&](const FeatureConfig& f) { return f.name == config.name; });
  const auto at = std::find_if(r.features.begin(), r.features.end(), [&](const FeatureConfig& f) {
    return feature_rank(f.name) > feature_rank(config.name);
  });
  r.features.insert(at, std::move(config));
  return true;
}

void load_feature_options(std::string_view feature, void* options, const ConfigSources& sources) {
  const FeatureConfig f = registered_feature(feature);
  f.assign(options, load(f, read_file(sources), sources).options.get());
}

}  // namespace detail

void configure(const ConfigSources& sources) {
  const std::vector<detail::FeatureConfig> features = detail::registered();
  const std::optional<detail::File> file = detail::read_file(sources);
  std::vector<std::shared_ptr<void>> loaded;  // every feature's, before any is applied
  for (const detail::FeatureConfig& f : features) loaded.push_back(detail::load(f, file, sources).options);
  for (std::size_t i = 0; i < features.size(); ++i) features[i].apply(loaded[i].get());
}

std::vector<ConfigSetting> effective_config(const ConfigSources& sources) {
  const std::optional<detail::File> file = detail::read_file(sources);
  std::vector<ConfigSetting> out;
  for (const detail::FeatureConfig& f : detail::registered()) {
    const detail::Loading l = detail::load(f, file, sources);
    for (const detail::OptionField& field : f.fields) {
      nlohmann::json value = field.show(l.options.get());
      if (field.is_url && value.is_string()) value = redact_url(value.get<std::string>());
      out.push_back({f.name + "." + field.name, value.dump(), l.origin.at(field.name)});
    }
  }
  return out;
}

}  // namespace weave
