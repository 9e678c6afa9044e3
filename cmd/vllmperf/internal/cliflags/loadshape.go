package cliflags

import (
	"github.com/spf13/pflag"

	"github.com/vllmperf/vllmperf/internal/request/overload"
)

// LoadShape defines vllmperf run's ramp-up flags (vLLM's names and
// meaning) and the overload stop's switch on f.
func LoadShape(f *pflag.FlagSet, o *ShapeFlags) {
	f.StringVar(&o.RampStrategy, "ramp-up-strategy", "", "open loop whose rate climbs over --requests, as vLLM's: linear or exponential (with --ramp-up-start-rps and --ramp-up-end-rps, without --rate)")
	f.Float64Var(&o.RampStart, "ramp-up-start-rps", 0, "with --ramp-up-strategy: the rate of the first request, req/s (> 0)")
	f.Float64Var(&o.RampEnd, "ramp-up-end-rps", 0, "with --ramp-up-strategy: the rate of the last request, req/s (≥ the start)")
	NoOverloadStop(f, &o.NoOverloadStop)
}

// NoOverloadStop defines --no-overload-stop on f.
func NoOverloadStop(f *pflag.FlagSet, off *bool) {
	f.BoolVar(off, "no-overload-stop", false, "run every open loop to its end even when the server is overloaded (by default a run stops, failing, once its queue and TTFT have grown without levelling for "+
		overload.DefaultWindow.String()+"; docs/load-shapes.md)")
}
