package thresholds

// WithAlphaScaled returns a copy of s in which every gate α (the top
// level's, the shipped default when the file sets none, and every
// override's) is f times s's: one look of a sequential count spends that
// share of the gate's α (package sequential). s is left as it is.
func (s *Set) WithAlphaScaled(f float64) *Set {
	c := *s
	g := DefaultGate
	s.top.applyGate(&g)
	top := gateYAML{}
	if s.top.Gate != nil {
		top = *s.top.Gate
	}
	a := probability(f * g.Alpha)
	top.Alpha = &a
	c.top.Gate = &top
	c.overrides = make([]override, len(s.overrides))
	for i, o := range s.overrides {
		if o.Gate != nil && o.Gate.Alpha != nil {
			og := *o.Gate
			oa := probability(f * float64(*o.Gate.Alpha))
			og.Alpha = &oa
			o.Gate = &og
		}
		c.overrides[i] = o
	}
	return &c
}
