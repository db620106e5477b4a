-- expect: runtime
-- An error message of control characters as long as a string may be: each
-- byte is escaped twice (the one-line summary, then JSON), so the report
-- once grew to twelve times the message. The message and the traceback are
-- cut to the output limit (at most 64 KiB), and the report stays small.
error(('\1'):rep(1024 * 1024 - 64))
