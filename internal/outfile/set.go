package outfile

import "fmt"

// Set is a command's output files, one per flag, opened together: two
// flags naming one file are refused, and a file that cannot be opened
// leaves none of the others behind.
type Set []*File

// OpenSet opens the files named by flags and paths, in pairs (--json and
// its path, --samples and its path, ...); an empty path is no output (a
// nil File).
// Its errors name the flags and are the caller's (a usage error for a
// CLI).
func OpenSet(flagPaths ...string) (Set, error) {
	for i := 0; i+1 < len(flagPaths); i += 2 {
		for j := i + 2; j+1 < len(flagPaths); j += 2 {
			a, b := flagPaths[i+1], flagPaths[j+1]
			if a != "" && b != "" && SamePath(a, b) {
				return nil, fmt.Errorf("%s and %s both name %s: the second would overwrite the first; give each its own file", flagPaths[i], flagPaths[j], b)
			}
		}
	}
	var s Set
	for i := 0; i+1 < len(flagPaths); i += 2 {
		f, err := Open(flagPaths[i], flagPaths[i+1])
		if err != nil {
			s.Discard()
			return nil, err
		}
		s = append(s, f)
	}
	return s, nil
}

// Paths lists the paths of the files asked for, for messages.
func (s Set) Paths() []string {
	var out []string
	for _, f := range s {
		if p := f.Path(); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// Discard removes every file not written.
func (s Set) Discard() {
	for _, f := range s {
		f.Discard()
	}
}
