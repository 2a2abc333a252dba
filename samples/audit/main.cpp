// A user-defined annotation end to end: audit.json tells weavegen what
// `[[audit(...)]]` accepts (see CMakeLists.txt), and this program registers
// the interceptor that gives it meaning. Prints the audit trail and checks it.
//
//   ./audit        (embedded lock backend; WEAVE_LOCK_URL picks another)
#include <cstdio>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "ledger.weave.h"

namespace {

std::mutex trail_mutex;
std::vector<std::string> trail;

void record(const std::string& line) {
  std::lock_guard g(trail_mutex);
  trail.push_back(line);
}

}  // namespace

int main() {
  // The annotation's meaning: one line per call, after it returned or threw.
  weave::InterceptorRegistry::global().add("audit", [](weave::Invocation& inv) {
    const weave::Annotation& a = inv.annotation();
    const std::string line = std::string(a.text("level")) + " " + std::string(a.text("event"));
    try {
      inv.proceed();
    } catch (const std::exception& e) {
      record(line + " -> failed: " + e.what());
      throw;
    }
    record(line + " -> ok");
  });

  weave::Woven<bank::Ledger> ledger;
  const bank::Account alice{"a-1", "alice"}, bob{"b-2", "bob"};
  const int threads = 4, per_thread = 24;  // even: half to each account
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([&] {
      for (int i = 0; i < per_thread; ++i) ledger.credit(i % 2 ? alice : bob, 10);
    });
  for (auto& w : workers) w.join();
  try {
    ledger.credit(alice, -5);
  } catch (const std::invalid_argument&) {
    // audited as failed
  }
  const int alice_balance = ledger.balance("a-1"), bob_balance = ledger.balance("b-2");
  ledger.close(bob);

  int ok = 0, failed = 0;
  for (const auto& line : trail) {
    if (line.find("-> ok") != std::string::npos) ++ok;
    if (line.find("-> failed") != std::string::npos) ++failed;
  }
  std::printf("%s\n%s\n%s\n", trail.front().c_str(), trail[trail.size() - 2].c_str(), trail.back().c_str());
  std::printf("audit trail: %zu lines (%d ok, %d failed)\n", trail.size(), ok, failed);
  std::printf("balances: alice %d, bob %d\n", alice_balance, bob_balance);
  const int expected_each = threads * per_thread / 2 * 10;
  if (ok != threads * per_thread + 1 || failed != 1 || alice_balance != expected_each || bob_balance != expected_each) {
    std::printf("WRONG: expected %d ok lines, 1 failed, %d cents each\n", threads * per_thread + 1, expected_each);
    return 1;
  }
  std::printf("every call audited, no credit lost\n");
  return 0;
}
