-- expect: runtime
-- Requiring a module the host did not register.
return require('socket')
