-- expect: string_size
-- Generating a huge chunk of source code.
local parts = {}
for i = 1, 1e5 do parts[i] = 'local v' .. i .. ' = ' .. i end
return load(table.concat(parts, '\n'))
