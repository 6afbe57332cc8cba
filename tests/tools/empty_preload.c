/* A shared library with nothing in it: what the compare scripts' tests
   preload into their stand-in benchmarks (any loadable object will do). */
int strata_test_empty_preload(void) { return 0; }
