-- expect: ok
-- returns: [true]
-- A one-megabyte id: converted and answered.
return records.get(('x'):rep(1000000)) == nil
