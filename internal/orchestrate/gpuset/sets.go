// Package spread runs the suite's profiles at the same time on disjoint
// GPU sets of one runner: one `go test -bench Perf` process per profile,
// each given one free set wide enough for its server (VLLMPERF_GPUS) and a
// results folder of its own, then joins the folders in the profiles' order
// (package merge), so that bench.txt, summary.json and the report are those
// of one process that ran every profile, whatever order they ended in.
//
// The leases (internal/target/server/lease.go) still guarantee one server
// per GPU set, across the processes too: a set is handed to one process at
// a time, and its server holds the set's GPUs while it lives.
//
// Without VLLMPERF_GPU_SETS (or with one set) nothing changes: the profiles
// run one after another in one process. Two profiles measured at once on a
// machine share its CPUs, memory bandwidth and PCIe; on a GPU runner their
// servers are on different GPUs, but on a CPU-only machine (the simulator
// image) the runs disturb each other's timings, so spread is for runners
// with the GPUs to give each set its own.
package gpuset

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/vllmperf/vllmperf/internal/vocab/envvar"
)

// The environment variables spread reads (package envvar declares them).
var (
	// EnvGPUSets lists the GPU sets, ';' between sets and ',' between
	// the devices of a set ("0,1;2,3"), or "auto": VLLMPERF_GPUS (device
	// ids) cut into sets as wide as the widest profile's server.
	EnvGPUSets = envvar.GPUSets.Name
	// envGPUs is the server package's device list (server.FromEnv).
	envGPUs = envvar.GPUs.Name
)

// Auto is EnvGPUSets' value that derives the sets from VLLMPERF_GPUS.
const Auto = "auto"

// Set is one GPU set: the device ids (or UUIDs, or for the simulator
// image any names) one server gets, as VLLMPERF_GPUS spells them.
type Set []string

// String is the set as VLLMPERF_GPUS spells it: "0,1".
func (s Set) String() string { return strings.Join(s, ",") }

// ParseSets parses "0,1;2,3": at least one set, no set empty, no device
// in two sets, and no "all" or "none" (a set names its devices).
func ParseSets(v string) ([]Set, error) {
	var sets []Set
	owner := map[string]int{}
	for i, part := range strings.Split(v, ";") {
		var set Set
		for _, id := range strings.Split(part, ",") {
			id = strings.TrimSpace(id)
			switch {
			case id == "" && strings.TrimSpace(part) == "":
				return nil, fmt.Errorf("%s=%q: set %d is empty: want device ids, ',' between the devices of a set and ';' between sets, such as 0,1;2,3", EnvGPUSets, v, i+1)
			case id == "", strings.ContainsAny(id, " \t=;"):
				return nil, fmt.Errorf("%s=%q: %q is not a device id: want ids such as 0,1;2,3 (or GPU UUIDs)", EnvGPUSets, v, id)
			case strings.EqualFold(id, "all") || strings.EqualFold(id, "none"):
				return nil, fmt.Errorf("%s=%q: a set names its devices, not %s: such as 0,1;2,3", EnvGPUSets, v, id)
			}
			if j, ok := owner[id]; ok && j != i {
				return nil, fmt.Errorf("%s=%q: device %s is in sets %d and %d: the sets must be disjoint (one server per GPU at a time)", EnvGPUSets, v, id, j+1, i+1)
			}
			if !slices.Contains(set, id) {
				set = append(set, id)
			}
			owner[id] = i
		}
		sets = append(sets, set)
	}
	return sets, nil
}

// Derive cuts ids into sets of width devices, in order; devices left
// over (fewer than width) are not used.
func Derive(ids []string, width int) ([]Set, error) {
	if width < 1 {
		width = 1
	}
	if len(ids) < width {
		return nil, fmt.Errorf("%s=%s: %s lists %d device(s), fewer than the %d the widest profile's server needs", EnvGPUSets, Auto, envGPUs, len(ids), width)
	}
	var sets []Set
	for i := 0; i+width <= len(ids); i += width {
		sets = append(sets, Set(slices.Clone(ids[i:i+width])))
	}
	return sets, nil
}

// SetsFromEnv reads EnvGPUSets; width is the widest profile's server
// (tensor × pipeline × data parallel size), used by "auto". No sets (nil)
// means one process runs the profiles one after another, as without
// spread.
func SetsFromEnv(width int) ([]Set, error) {
	v := strings.TrimSpace(os.Getenv(EnvGPUSets))
	switch {
	case v == "":
		return nil, nil
	case strings.EqualFold(v, Auto):
		list := strings.TrimSpace(os.Getenv(envGPUs))
		if list == "" || strings.EqualFold(list, "all") || strings.EqualFold(list, "none") {
			return nil, fmt.Errorf("%s=%s cuts %s into sets, but %s=%q lists no device ids: list them (such as %s=0,1,2,3) or give the sets (%s=0,1;2,3)", EnvGPUSets, Auto, envGPUs, envGPUs, list, envGPUs, EnvGPUSets)
		}
		var ids []string
		for _, id := range strings.Split(list, ",") {
			ids = append(ids, strings.TrimSpace(id))
		}
		sets, err := ParseSets(strings.Join(ids, ";")) // checks every id once
		if err != nil {
			return nil, fmt.Errorf("%s: %w", envGPUs, err)
		}
		return Derive(flatten(sets), width)
	}
	return ParseSets(v)
}

// flatten is the devices of sets, in order.
func flatten(sets []Set) []string {
	var out []string
	for _, s := range sets {
		out = append(out, s...)
	}
	return out
}
