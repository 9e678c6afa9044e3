// Package sim holds the simulator image's Dockerfile, embedded so that the
// harness (internal/target/server) builds the image from any directory,
// with no checkout on disk.
package sim

import _ "embed"

// Dockerfile is build/sim/Dockerfile: a FROM scratch image with a static
// vllm-sim at /vllm-sim as its entrypoint, port 8000 exposed.
//
//go:embed Dockerfile
var Dockerfile []byte
