// Compiled into every target that links Weave::asio (INTERFACE_SOURCES): it
// refers to the object that makes the built-in interceptors asynchronous, so
// a static link keeps that object and a shared link keeps the library.
extern "C" const char weave_link_asio;
[[gnu::used]] static const char* const weave_keep_asio = &weave_link_asio;
