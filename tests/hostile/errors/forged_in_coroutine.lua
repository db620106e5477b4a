-- expect: runtime
-- A forged overflow raised inside a coroutine and passed up by wrap.
coroutine.wrap(function() error('C stack overflow') end)()
