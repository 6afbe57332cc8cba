int main() { return 0; }  // placeholder: strata-coll-model (issue 4)
