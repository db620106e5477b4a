-- expect: sandboxed
-- There is no socket library; the native-library door is shut too.
return package.loadlib('libsocket.so', 'luaopen_socket')
