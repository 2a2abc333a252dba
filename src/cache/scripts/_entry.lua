-- An entry is "<version>@<written ms>:<json>" (written: the writer's wall
-- clock, for refresh_after), "<version>:<json>" as older versions wrote it,
-- or "<version>:" once evicted (a tombstone that keeps the version, so a load
-- in flight cannot install an older value).
local function version_of(entry)
  if not entry then return 0 end
  return tonumber(string.match(entry, '^(%d+)[@:]')) or 0
end
local function written_of(entry)
  if not entry then return 0 end
  return tonumber(string.match(entry, '^%d+@(%d+):')) or 0
end
local function has_value(entry)
  if not entry then return false end
  local colon = string.find(entry, ':', 1, true)
  return colon ~= nil and colon < #entry
end
