-- expect: runtime
-- A script's own error that reads like a limit stays the script's error:
-- kinds come from the guest's state, never from message text.
error('stack overflow')
