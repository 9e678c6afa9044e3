package gateway

// HasCA reports whether a CA certificate was given (--ca-cert or
// VLLMPERF_CA_CERT): a certificate it does not verify then calls for
// another CA, not for the flag.
func (g *Gateway) HasCA() bool { return g != nil && g.tls != nil && g.tls.RootCAs != nil }
