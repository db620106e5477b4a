-- expect: string_size
-- After a string-size trip, a caught error must not reach a capability.
pcall(string.rep, 'x', 1 << 30)
for i = 1, 1e6 do records.get('123') end
