-- expect: instruction_limit
-- An infinite loop inside pcall: the limit cannot be caught.
pcall(function() while true do end end)
return 'escaped'
