-- expect: sandboxed
-- Reaching the registry.
return debug.getregistry()
