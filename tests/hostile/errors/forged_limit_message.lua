-- expect: runtime
-- The exact text of a limit's message, raised by the script.
error('main.lua:4: instruction limit exceeded (max-instructions is 2000000)', 0)
