package load

// MaxInFlight bounds --concurrency and --max-concurrency: each request in
// flight holds a connection (opened ahead by the preconnect), and past
// this the client's ephemeral ports to one server (about 28,000 on Linux)
// and its memory run out long before any server's batch is full (vLLM's
// --max-num-seqs is 256 to 1024).
const MaxInFlight = 16384
