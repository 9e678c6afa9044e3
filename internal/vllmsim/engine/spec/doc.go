// Package spec is vLLM's --speculative-config as the simulated engine
// takes it: the JSON's keys, the methods and their checks, and the
// simulator's acceptance rate. The engine turns a Config into draft tokens
// per step.
package spec
