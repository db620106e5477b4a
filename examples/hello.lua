-- The smallest moonbox script: print a line, return a value.
print("hello from Lua " .. _VERSION:match("%d+%.%d+"))
return 6 * 7
