// Compiled into every target that links Weave::queue (INTERFACE_SOURCES): it
// refers to the object that registers the delay interceptor. The library
// (src/queue/) is to come; it defines weave_link_queue beside its
// registration, as src/dedupe/dedupe_interceptor.cpp defines weave_link_dedupe.
extern "C" const char weave_link_queue;
[[gnu::used]] static const char* const weave_keep_queue = &weave_link_queue;
