-- expect: string_size
-- table.concat of pieces that add up past the string limit.
local parts = {}
for i = 1, 4096 do parts[i] = ('y'):rep(1024) end
return #table.concat(parts)
