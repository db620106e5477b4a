-- expect: string_size
-- string.rep of a gigabyte is refused before allocating.
return string.rep('x', 2^30)
