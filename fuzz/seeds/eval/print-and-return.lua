print("hello", 1.5, nil) return 6 * 7, {a = {1, 2}}
