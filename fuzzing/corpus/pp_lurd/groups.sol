2(l3(uR)d)
 1 2 L