int ping(int n);
int pong(int n) { return n <= 0 ? 1 : ping(n - 1); }
