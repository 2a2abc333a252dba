// Compiled into every target that links Weave::dedupe (INTERFACE_SOURCES): it
// refers to the object that registers the dedupe interceptor.
extern "C" const char weave_link_dedupe;
[[gnu::used]] static const char* const weave_keep_dedupe = &weave_link_dedupe;
