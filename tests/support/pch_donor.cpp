// The executable whose precompiled headers every test program reuses
// (tests/CMakeLists.txt, strata_test_pch). Never run.
int main() { return 0; }
