// weave dedupe show KEY.
#include "commands.h"
#include "weave/dedupe.h"

namespace weave_cli {

void add_dedupe(CLI::App& app, Context& ctx) {
  static std::string key;
  CLI::App* dedupe = app.add_subcommand("dedupe", "A [[dedupe]] key's record");
  dedupe->require_subcommand(1);
  CLI::App* show = dedupe->add_subcommand(
      "show", "The record of KEY: running (its claim's owner) or the stored outcome, and the window left");
  show->add_option("key", key, "The rendered key (as in a DuplicateCall message)")->required();
  show->callback([&ctx] {
    weave::configure_dedupe(ctx.options<weave::DedupeOptions>());
    const weave::DedupeRecordInfo r = weave::inspect_dedupe(key);
    using S = weave::DedupeRecordInfo::State;
    static constexpr const char* names[] = {"absent", "running", "done", "failed", "unreadable"};
    const char* state = names[static_cast<int>(r.state)];
    const std::string left = readable(r.expires_in);
    std::string text = "'" + key + "': " + state;
    if (r.state == S::running) text += " (claim of " + r.owner + ", " + left + " left of its lease)";
    if (r.state == S::done) text += ", result " + (r.result.empty() ? std::string("not kept") : r.result) + ", " + left + " left of the window";
    if (r.state == S::failed) text += ", error: " + r.result + ", " + left + " left of the window";
    if (r.state == S::unreadable) text += " (written by another version?), " + left + " left";
    if (r.age) text += "; recorded " + readable(*r.age) + " ago";
    if (!r.match.empty()) text += "; match: " + r.match;
    ctx.out.say(text, {{"key", key}, {"state", state}, {"match", r.match}, {"result", r.result}, {"owner", r.owner},
                       {"expires_in_ms", r.expires_in.count()},
                       {"age_ms", r.age ? nlohmann::json(r.age->count()) : nlohmann::json(nullptr)}});
    if (r.state == S::absent) throw std::runtime_error("no dedupe record for '" + key + "'");
  });
}

}  // namespace weave_cli
