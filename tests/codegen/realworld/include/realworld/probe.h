// realworld/probe.h — what the real (un-woven) implementations of the
// real-world corpus saw: each records "<what> @ <keys of the lease its call
// holds>", so a test can tell that the woven chain ran around it and which
// key it rendered. Only the implementations include this; the annotated
// headers stay free of Weave.
#pragma once

#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "weave/lease.h"

namespace realworld {

class Probe {
 public:
  // The keys of the innermost lease of the running call ("a,b" for a
  // multi-key lease), or "-" when the call holds none.
  static std::string held() {
    const weave::Lease* lease = weave::current_lease();
    if (lease == nullptr) return "-";
    std::string out;
    for (std::string_view k : lease->keys()) {
      if (!out.empty()) out += ',';
      out += k;
    }
    return out;
  }

  static void note(std::string_view what) {
    std::string line(what);
    line += " @ ";
    line += held();
    std::lock_guard<std::mutex> guard(instance().mutex_);
    instance().lines_.push_back(std::move(line));
  }

  // Returns what was noted so far and forgets it.
  static std::vector<std::string> take() {
    std::lock_guard<std::mutex> guard(instance().mutex_);
    std::vector<std::string> out;
    out.swap(instance().lines_);
    return out;
  }

 private:
  static Probe& instance() {
    static Probe probe;
    return probe;
  }
  std::mutex mutex_;
  std::vector<std::string> lines_;
};

}  // namespace realworld
