-- expect: string_size
-- string.rep whose separator makes the result too large.
return string.rep('x', 1e6, ('-'):rep(100))
