-- An entry is "<version>:<json>", or "<version>:" once evicted (a tombstone
-- that keeps the version, so a load in flight cannot install an older value).
local function version_of(entry)
  if not entry then return 0 end
  return tonumber(string.match(entry, '^(%d+):')) or 0
end
