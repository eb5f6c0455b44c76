print("capture")
