int main() { return 0; }  // placeholder: strata-topo (issue 4)
