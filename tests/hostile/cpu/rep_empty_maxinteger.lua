-- expect: ok
-- returns: ["", ""]
-- An empty string repeated math.maxinteger times: the reference copies
-- nothing 2^63 times inside one C call, which no limit interrupts. The
-- result is known without the loop.
return string.rep('', math.maxinteger), string.rep('', math.maxinteger, '')
