-- expect: capability
-- A function as an argument cannot cross.
return records.get(print)
