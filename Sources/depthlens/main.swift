print("depthlens")
