package config

import "strings"

// FlagNames are the flag table's names without "--", in --help order.
func FlagNames() []string {
	names := make([]string, len(flagTable))
	for i, f := range flagTable {
		names[i] = f.name
	}
	return names
}

// ArgsFor is the command line that gives text to the flag name: "--name
// text"; "--name=text" when text starts with "-" (argparse would read it
// as a flag of its own); "--name", or "--no-name" for text "no", for a
// boolean; a multi-valued flag's values split on "|". An unknown name
// gives nil.
func ArgsFor(name, text string) []string {
	f, ok := flagsByName()[name]
	if !ok {
		return nil
	}
	switch {
	case f.kind == kindBool || f.kind == kindNegBool:
		if text == "no" {
			return []string{"--no-" + f.name}
		}
		return []string{"--" + f.name}
	case f.kind == kindMulti:
		return append([]string{"--" + f.name}, strings.Split(text, "|")...)
	case strings.HasPrefix(text, "-"):
		return []string{"--" + f.name + "=" + text}
	}
	return []string{"--" + f.name, text}
}
