package config

// ArgValue is the value args give the value flag name (without "--":
// "sim-gpu"), read by ParseArgs's own rules (--flag=V or --flag V, "_"
// for "-", the last one winning), and whether they give it. Arguments it
// cannot read are the simulator's to refuse when it starts; ArgValue
// reports what it read up to them.
func ArgValue(args []string, name string) (string, bool) {
	p := &argParser{opts: DefaultOptions(), byName: flagsByName(), given: map[string]string{}}
	_ = p.parse(args)
	v, ok := p.given[name]
	return v, ok
}
