// The woven methods the Weave peer driver calls (bench/peers).
#pragma once

class PeerLocked {
 public:
  virtual ~PeerLocked() = default;
  // uncontended + redlock: a fresh key per call, fixed 10 s lease.
  [[lock(key="peers:fresh:<id>", ttl=10s)]] virtual long fresh(long id);
  // contended: one hot key, wait until acquired; the body holds ~hold_us.
  [[lock(key="peers:hot", ttl=10s, wait=forever)]] virtual long hot(long hold_us);
};
