/* Two translation units that call each other. */
int pong(int n);
int ping(int n) { return n <= 0 ? 0 : pong(n - 1); }
