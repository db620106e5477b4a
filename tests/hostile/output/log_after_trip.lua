-- expect: memory_limit
-- After a memory trip, a caught error must not send a log event, whatever
-- its size.
pcall(function() local t = {} for i = 1, 1e9 do t[i] = ('x'):rep(1000) .. i end end)
for i = 1, 1e6 do log('info', 'after the trip', {i = i}) end
