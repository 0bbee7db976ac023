print("admin-bench")
