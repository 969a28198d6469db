print("vortex-realtime")
