package server

// The simulator image stands for a vLLM container on a runner's GPUs. With
// VLLMPERF_GPUS naming device ids it holds those GPUs' leases as vLLM would
// (package lease), but asks Docker for no device: it computes nothing on them,
// and the ids may be names of fake GPU sets ("a", "b") on a machine with no
// GPU at all, which is how profiles spread over GPU sets (package spread)
// are tested without GPUs. Every container carries its selection in
// labelGPUs, so a watcher of Docker's events can tell which set a server
// holds.

// labelGPUs is the label with the container's GPU selection, as
// VLLMPERF_GPUS spells it (all, none, or the ids).
const labelGPUs = "org.vllmperf.gpus"
