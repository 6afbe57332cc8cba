/* A stand-in for a GPU runtime library (test_gpu_code): only its file name,
   libcudart.so.0, matters. */
int strata_test_not_cudart(void) { return 0; }
