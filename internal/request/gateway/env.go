package gateway

import (
	"os"
	"strings"

	"github.com/vllmperf/vllmperf/internal/vocab/envvar"
)

// The environment variables FromLookup reads (docs/third-party-servers.md;
// package envvar declares them).
var (
	// EnvHeaders holds extra headers, one "Name: value" a line.
	EnvHeaders = envvar.Headers.Name
	// EnvCACert is a PEM file of the CA that signed the server's
	// certificate, added to the system's roots.
	EnvCACert = envvar.CACert.Name
	// EnvClientCert and EnvClientKey are the PEM client certificate and
	// its key, for a gateway that asks for one (mTLS).
	EnvClientCert = envvar.ClientCert.Name
	EnvClientKey  = envvar.ClientKey.Name
)

// FromLookup reads the gateway settings from the environment (lookup, as
// os.LookupEnv): VLLMPERF_HEADERS (one "Name: value" a line),
// VLLMPERF_CA_CERT, VLLMPERF_CLIENT_CERT and VLLMPERF_CLIENT_KEY. Errors
// name the variable.
func FromLookup(lookup func(string) (string, bool)) (Config, error) {
	get := func(k string) string { v, _ := lookup(k); return strings.TrimSpace(v) }
	var c Config
	for line := range strings.Lines(get(EnvHeaders)) {
		if line = strings.TrimSpace(line); line == "" {
			continue
		}
		h, err := ParseHeader(line, EnvHeaders)
		if err != nil {
			return Config{}, err
		}
		c.Headers, c.HeaderFrom = append(c.Headers, h), append(c.HeaderFrom, EnvHeaders)
	}
	c.CACert = Source{get(EnvCACert), EnvCACert}
	c.ClientCert = Source{get(EnvClientCert), EnvClientCert}
	c.ClientKey = Source{get(EnvClientKey), EnvClientKey}
	return c, nil
}

// FromEnv reads and loads the environment's gateway settings.
func FromEnv() (*Gateway, error) {
	c, err := FromLookup(os.LookupEnv)
	if err != nil {
		return nil, err
	}
	return c.Load(os.LookupEnv)
}

// Overrides are gateway settings given over the environment's, as a
// command's flags give them: each header adds to VLLMPERF_HEADERS (its
// value wins for a header both give), and each file replaces its
// variable. From names where each came from, for errors.
type Overrides struct {
	Headers    []string
	CACert     string
	ClientCert string
	ClientKey  string
	From       Labels
}

// Labels name where each of an Overrides' settings came from (a flag's
// name, say); an empty label is the setting's own name.
type Labels struct {
	Headers, CACert, ClientCert, ClientKey string
}

// Given reports whether any setting was given.
func (o *Overrides) Given() bool {
	return len(o.Headers) > 0 || o.CACert != "" || o.ClientCert != "" || o.ClientKey != ""
}

// Gateway merges the overrides over the environment's settings and loads
// them; errors name the setting (its label) or variable and the fix.
func (o *Overrides) Gateway() (*Gateway, error) {
	return o.load(os.LookupEnv)
}

func (o *Overrides) load(lookup func(string) (string, bool)) (*Gateway, error) {
	c, err := FromLookup(lookup)
	if err != nil {
		return nil, err
	}
	headers := label(o.From.Headers, "header")
	for _, text := range o.Headers {
		h, err := ParseHeader(text, headers)
		if err != nil {
			return nil, err
		}
		c.Headers, c.HeaderFrom = append(c.Headers, h), append(c.HeaderFrom, headers)
	}
	for _, f := range []struct {
		dst  *Source
		v    string
		name string
	}{{&c.CACert, o.CACert, label(o.From.CACert, "CA certificate")}, {&c.ClientCert, o.ClientCert, label(o.From.ClientCert, "client certificate")}, {&c.ClientKey, o.ClientKey, label(o.From.ClientKey, "client key")}} {
		if f.v != "" {
			*f.dst = Source{f.v, f.name}
		}
	}
	return c.Load(lookup)
}

// label is l, or def when l is empty.
func label(l, def string) string {
	if l == "" {
		return def
	}
	return l
}
