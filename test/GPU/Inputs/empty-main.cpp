// A main() for link tests: the attention entry points are only linked.
int main() { return 0; }
