/* A stand-in for an object with device code (test_gpu_code): a section
   named as nvcc names its fat binaries, holding no GPU code at all. */
__attribute__((section(".nv_fatbin"), used)) const char strata_test_fatbin[16] = "not a fatbin";
