-- expect: output_limit
-- One line larger than the output limit.
print(('x'):rep(1000000))
