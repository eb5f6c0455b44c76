print("sampler")
