// The dedupe suite (test_dedupe.cpp) on mem://. Records live decoded in this
// process, so no record of a foreign shape can exist: that case is Redis-only.
#pragma once

#include <string>

#define WEAVE_DEDUPE_STORE_HOLDS_TEXT 0

inline std::string dedupe_store_url() { return "mem://dedupe-suite"; }
