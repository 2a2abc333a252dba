// check_store() (weave/store_check.h): what `weave check` reports.
#include <algorithm>
#include <set>
#include <string>

#include "store/acl.h"
#include "store/open.h"
#include "store/reply.h"
#include "weave/error.h"
#include "weave/store_check.h"

namespace WEAVE_NAMESPACE {
namespace {

// The value of `field` in an INFO reply ("redis_version:7.0.15\r\n...").
std::string info_field(std::string_view info, std::string_view field) {
  const std::string head = std::string(field).append(":");
  std::size_t at = info.starts_with(head) ? 0 : info.find(std::string("\n").append(head));
  if (at == std::string_view::npos) return {};
  at += info.starts_with(head) ? head.size() : head.size() + 1;
  const std::size_t end = info.find_first_of("\r\n", at);
  return std::string(info.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at));
}

StoreNode node_of(store::NodeExecutor& node) {
  StoreNode n;
  n.address = node.endpoint().describe();
  auto fastest = std::chrono::microseconds::max();
  for (int i = 0; i < 5; ++i) {
    const auto sent = std::chrono::steady_clock::now();
    const store::Reply pong = node.command(store::Command{"PING"});
    const auto took = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - sent);
    store::ReplyView(pong, "ping").text();  // an error reply throws (NOPERM: the rule's first need)
    fastest = std::min(fastest, took);
  }
  n.round_trip = fastest;
  const store::Reply info = node.command(store::Command{"INFO", "server"});
  if (const store::ReplyView r(info, "info"); r.is_text()) {
    n.version = info_field(r.text(), "redis_version");
    n.mode = info_field(r.text(), "redis_mode");
  }
  const store::Reply role = node.command(store::Command{"ROLE"});
  if (const store::ReplyView r(role, "role"); r.is_array() && r.size() > 0) n.role = r[0].text();
  return n;
}

}  // namespace

StoreCheck check_store(std::string_view url, std::chrono::milliseconds timeout) {
  StoreCheck out;
  out.scheme = parse_store_url(url).scheme;
  const auto exec =
      store::open_executor(url, {.connect_timeout = timeout, .command_timeout = timeout, .pool_size = 1});
  std::set<std::string> refused;
  exec->for_each_master([&](store::NodeExecutor& node) {
    try {
      out.masters.push_back(node_of(node));
      for (std::string& c : store::refused_commands(node)) refused.insert(std::move(c));
    } catch (Error& e) {
      detail::name_key(e, node.endpoint().describe(), "node");
      throw;
    }
  });
  std::sort(out.masters.begin(), out.masters.end(),
            [](const StoreNode& a, const StoreNode& b) { return a.address < b.address; });
  out.refused.assign(refused.begin(), refused.end());
  return out;
}

}  // namespace weave
