-- expect: instruction_limit
-- A loop inside a string.gsub callback.
pcall(string.gsub, ('x'):rep(10), '.', function() while true do end end)
return 'escaped'
