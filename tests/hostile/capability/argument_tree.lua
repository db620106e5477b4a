-- expect: capability
-- A hundred thousand references to one small table: 0.7 MB of JSON text,
-- which would be about 80 MB once parsed on the host. The host parses
-- within the Lua heap's limit and refuses the call before the tree grows
-- past it.
local one = { [''] = 0 }
local many = {}
for i = 1, 100000 do many[i] = one end
return records.get(many)
