-- expect: string_size
-- string.format widths, then doubling.
local s = string.format('%99s', 'x')
while true do s = s .. s end
