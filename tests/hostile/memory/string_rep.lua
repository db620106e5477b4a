-- expect: string_size
-- string.rep of an absurd size is refused before allocating.
return string.rep('x', 1e15)
