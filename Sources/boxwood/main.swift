print("boxwood")
