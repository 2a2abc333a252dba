#include "bench_service.h"

long Counter::plain(long x) { return total_ += x; }
long Counter::through_empty_chain(long x) { return total_ += x; }
long Counter::through_lock(long x) { return total_ += x; }
long Counter::through_watchdog_lock(long x) { return total_ += x; }
