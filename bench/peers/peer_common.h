// Shared bits of the C++ peer drivers: key=value args, monotonic ns (the same
// CLOCK_MONOTONIC the Python and Node drivers read), CPU time, JSON-lines out.
#pragma once

#include <sys/resource.h>
#include <time.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace peers {

inline long long now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1'000'000'000LL + ts.tv_nsec;
}

inline double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

struct Args {
  std::map<std::string, std::string> kv;
  Args(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      auto eq = a.find('=');
      if (eq != std::string::npos) kv[a.substr(0, eq)] = a.substr(eq + 1);
    }
  }
  std::string str(const std::string& k, const std::string& d = "") const {
    auto it = kv.find(k);
    return it == kv.end() ? d : it->second;
  }
  long num(const std::string& k, long d) const {
    auto it = kv.find(k);
    return it == kv.end() ? d : std::stol(it->second);
  }
  // "p1,p2,p3" -> ports
  std::vector<int> ports() const {
    std::vector<int> out;
    std::string s = str("ports");
    size_t b = 0;
    while (b < s.size()) {
      size_t e = s.find(',', b);
      if (e == std::string::npos) e = s.size();
      out.push_back(std::stoi(s.substr(b, e - b)));
      b = e + 1;
    }
    return out;
  }
};

template <class T>
std::string list(const std::vector<T>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

// One contended acquisition: when it was asked for, held, about to be released.
struct Interval {
  long long asked_ns, acquired_ns, releasing_ns;
};
// As JSON [[acquired, releasing, asked], ...] (bench/peers/README.md).
inline std::string intervals(const std::vector<Interval>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    s += i ? ",[" : "[";
    s += std::to_string(v[i].acquired_ns) + "," + std::to_string(v[i].releasing_ns) + "," + std::to_string(v[i].asked_ns);
    s += "]";
  }
  return s + "]";
}

// One JSON line; `body` is the rest of the object (already JSON, leading comma).
inline void emit(const std::string& contender, const std::string& workload, const std::string& body) {
  std::printf("{\"contender\":\"%s\",\"workload\":\"%s\"%s}\n", contender.c_str(), workload.c_str(), body.c_str());
  std::fflush(stdout);
}

// Times `n` calls of `call(i)` and emits them as one latency workload line.
template <class F>
void time_calls(const std::string& contender, const std::string& workload, long n, F&& call) {
  std::vector<long long> lat;
  lat.reserve(static_cast<size_t>(n));
  const long long t0 = now_ns();
  for (long i = 0; i < n; ++i) {
    const long long s = now_ns();
    call(i);
    lat.push_back(now_ns() - s);
  }
  const long long t1 = now_ns();
  emit(contender, workload,
       ",\"n\":" + std::to_string(n) + ",\"secs\":" + std::to_string((t1 - t0) / 1e9) + ",\"lat_ns\":" + list(lat));
}

}  // namespace peers
