-- A loader that gave up (its method threw, or it keeps nothing). KEYS =
-- {fill lease, refresh claim}; ARGV = {token}. Returns 2 when a waiter is to
-- be woken, else 0.
--@include _lease.lua
return release_leases(1, ARGV[1])
