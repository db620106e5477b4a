-- expect: output_limit
-- Printing under pcall: the output limit cannot be caught.
for i = 1, 1e6 do pcall(print, i) end
return 'escaped'
