package pipeline

import (
	"github.com/vllmperf/vllmperf/internal/request/load"
	"github.com/vllmperf/vllmperf/internal/request/overload"
)

// WithoutOverloadStop runs an open loop to its bound however overloaded the
// server is. By default Run watches every open loop with
// overload.DefaultRule and stops it early on a verdict (load.Config's
// Overload; a point that sets its own rule keeps it).
func WithoutOverloadStop() Option { return func(o *options) { o.noOverloadStop = true } }

// overloadRule is the rule that watches cfg's run: its own, the default,
// or none when the caller turned the stop off.
func (o options) overloadRule(cfg load.Config) *overload.Rule {
	switch {
	case o.noOverloadStop:
		return nil
	case cfg.Overload != nil:
		return cfg.Overload
	}
	r := overload.DefaultRule()
	return &r
}
