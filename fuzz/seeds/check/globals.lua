local x = 1
print(undefined_name)
os.execute('ls')
return host.touch(), kept, x
