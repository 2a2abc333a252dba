// The store a feature suite runs on, as the suite sees it (force-included
// into test_suite_<feature>: weave_add_store_suite in tests/CMakeLists.txt).
// The suite is compiled once; which store it runs on is the executable's
// choice: tests/stores/<store>_store.cpp defines these functions, starting
// the store's servers on first use. Cases only a Redis store can run carry
// the tag [redis], cases only mem:// can run the tag [mem]; each executable
// leaves out the other kind.
#pragma once

#include <optional>
#include <string>

// The URL the suite configures its features with.
std::string test_store_url();
// Whether that is mem:// (where a case differs by store). (C linkage:
// tests/catch_main.cpp looks for it.)
extern "C" bool test_store_is_mem();

// For [redis] cases (mem:// has no such thing: std::logic_error).
// Where a test acts as the operator or another program (CLIENT KILL, raw
// writes): the store's own URL unless the store's user may do less (acl:
// the default user, not the least-privilege one under test).
std::string test_admin_url();
// Writes a key the way another program would, bypassing every interceptor,
// routed by the store layer: what a suite uses to plant a value of another
// version's shape; and reads one back, to see what a feature leaves.
void write_raw(const std::string& key, const std::string& value);
std::optional<std::string> read_raw(const std::string& key);
