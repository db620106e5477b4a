-- expect: output_limit
-- io.write counts against the same output limit as print.
while true do io.write(('x'):rep(1000)) end
