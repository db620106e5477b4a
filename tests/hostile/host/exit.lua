-- expect: ok
-- returns: []
-- Ending the host process: os.exit ends the eval, not the process, and the
-- session goes on (the exit code is in the outcome).
os.exit(0)
