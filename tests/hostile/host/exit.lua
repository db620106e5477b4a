-- expect: sandboxed
-- Ending the host process.
os.exit(0)
